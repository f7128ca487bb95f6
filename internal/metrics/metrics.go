// Package metrics exposes a running gmtun interface to Prometheus: a
// custom Collector that turns one control.Status snapshot per scrape into
// gmtun_* metrics, and the HTTP server for metrics_listen (TCP or a unix
// socket). Nothing here runs per packet: a scrape costs one snapshot, the
// same as `gmtun show`.
//
// The package lives outside tunnel/ on purpose: the data plane never
// imports net/http (internal/depcheck).
package metrics

import (
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/control"
)

// Source returns the current state of the interface; an error (the
// daemon is starting or stopping) makes the scrape report gmtun_up 0 and
// nothing else but the build information.
type Source func() (control.Status, error)

// Collector is a prometheus.Collector over a Source. It is safe for
// concurrent scrapes.
type Collector struct {
	src     Source
	version string
	now     func() time.Time

	up, buildInfo, started, goroutines, receiveErrors                   *prometheus.Desc
	peerRxBytes, peerTxBytes, peerRxPackets, peerTxPackets              *prometheus.Desc
	peerHandshakeAge, peerLastHandshake, peerHandshakes, peerSession    *prometheus.Desc
	peerQueue, peerStaged, peerInitRetransmits, peerRespRetransmits     *prometheus.Desc
	drops, handshakeInvalid                                             *prometheus.Desc
	batchCalls, batchPackets, batchPacketsPerCall, batchLanesPerCall    *prometheus.Desc
	batchSeconds, batchSampledPackets, batchSampledCPUSeconds           *prometheus.Desc
	kernelInfo, suiteTier, buffers, queue, pendingRestart, configReload *prometheus.Desc
}

// NewCollector returns a collector for the interface ifname whose state
// src returns. version is the gmtun version for gmtun_build_info. Every
// metric carries the label interface="ifname", so that the metrics of
// several instances on one host can be told apart.
func NewCollector(ifname, version string, src Source) *Collector {
	cl := prometheus.Labels{"interface": ifname}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("gmtun_"+name, help, labels, cl)
	}
	return &Collector{
		src: src, version: version, now: time.Now,
		up:            d("up", "1 if the interface is up and answered the scrape, 0 while it starts or stops."),
		buildInfo:     d("build_info", "Always 1; the labels name the gmtun and Go versions.", "version", "goversion"),
		started:       d("start_time_seconds", "When the daemon finished starting, in Unix seconds."),
		goroutines:    d("goroutines", "Goroutines of the daemon."),
		receiveErrors: d("receive_errors_total", "Failed (and retried) UDP receive calls."),

		peerRxBytes:   d("peer_receive_bytes_total", "Bytes of authenticated datagrams received from the peer (outer UDP payload; handshakes and keepalives included).", "peer"),
		peerTxBytes:   d("peer_transmit_bytes_total", "Bytes of datagrams sent to the peer (outer UDP payload; handshakes and keepalives included).", "peer"),
		peerRxPackets: d("peer_receive_packets_total", "Authenticated datagrams received from the peer.", "peer"),
		peerTxPackets: d("peer_transmit_packets_total", "Datagrams sent to the peer.", "peer"),
		peerHandshakeAge: d("peer_handshake_age_seconds",
			"Seconds since the latest confirmed handshake with the peer; absent if there was none.", "peer"),
		peerLastHandshake: d("peer_last_handshake_seconds",
			"Time of the latest confirmed handshake with the peer in Unix seconds; 0 if there was none.", "peer"),
		peerHandshakes: d("peer_handshakes_total", "Sessions established with the peer (rekeys included).", "peer"),
		peerSession:    d("peer_session_info", "1 for a peer with a current session; the label names its data suite.", "peer", "suite"),
		peerQueue:      d("peer_queue_batches", "Batches waiting in the peer's ordered queues.", "peer", "queue"),
		peerStaged:     d("peer_staged_packets", "Packets waiting for a keypair to the peer.", "peer"),
		peerInitRetransmits: d("peer_initiation_retransmits_total",
			"Identical copies of handshake initiations re-sent to the peer for want of an answer.", "peer"),
		peerRespRetransmits: d("peer_response_retransmits_total",
			"Copies of the peer's handshake initiations answered again with the response already sent.", "peer"),

		drops:            d("drops_total", "Discarded packets by reason (gmtun show's drop reasons).", "reason"),
		handshakeInvalid: d("handshake_invalid_total", "Rejected handshake messages by reason.", "reason"),

		batchCalls:          d("batch_calls_total", "Batch seal or open calls of the data suites.", "direction"),
		batchPackets:        d("batch_packets_total", "Packets the batch calls carried.", "direction"),
		batchPacketsPerCall: d("batch_packets_per_call", "Average packets per batch call since start.", "direction"),
		batchLanesPerCall:   d("kernel_lanes_per_call", "Average lanes filled per call of a 16-lane kernel since start (lane occupancy).", "direction"),
		batchSeconds:        d("batch_seconds_total", "Wall-clock time inside the batch calls (preemption included).", "direction"),
		batchSampledPackets: d("batch_sampled_packets_total", "Packets of the batch calls whose thread CPU time is measured (one call in 64).", "direction"),
		batchSampledCPUSeconds: d("batch_sampled_cpu_seconds_total",
			"Thread CPU time inside the sampled batch calls (per packet: divided by batch_sampled_packets_total).", "direction"),

		kernelInfo: d("kernel_info", "1 per cipher primitive; tier is the implementation selected on this CPU.", "primitive", "tier"),
		suiteTier:  d("suite_tier_info", "1 per configured data suite; tier is the kernel tier that carries it (generic: the portable code).", "suite", "tier"),
		buffers:    d("buffers", "Packet buffers of the data plane by state.", "state"),
		queue:      d("queue_length", "Length of the device queues (containers; messages for the handshake queue).", "queue"),
		pendingRestart: d("pending_restart_info",
			"1 per setting changed in the configuration file that needs a restart to apply.", "setting"),
		configReload: d("config_last_reload_success", "1 if the latest reload succeeded (or there was none), 0 if it failed."),
	}
}

// Describe sends the descriptors of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.up, c.buildInfo, c.started, c.goroutines, c.receiveErrors,
		c.peerRxBytes, c.peerTxBytes, c.peerRxPackets, c.peerTxPackets,
		c.peerHandshakeAge, c.peerLastHandshake, c.peerHandshakes, c.peerSession, c.peerQueue, c.peerStaged,
		c.peerInitRetransmits, c.peerRespRetransmits,
		c.drops, c.handshakeInvalid, c.batchCalls, c.batchPackets, c.batchPacketsPerCall, c.batchLanesPerCall, c.batchSeconds, c.batchSampledPackets, c.batchSampledCPUSeconds,
		c.kernelInfo, c.suiteTier, c.buffers, c.queue, c.pendingRestart, c.configReload,
	} {
		ch <- d
	}
}

// Collect takes one snapshot and sends its metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	seconds := func(d *prometheus.Desc, nanos uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(nanos)/1e9, labels...)
	}
	gauge(c.buildInfo, 1, c.version, runtime.Version())
	s, err := c.src()
	if err != nil {
		gauge(c.up, 0)
		return
	}
	gauge(c.up, 1)
	now := c.now()
	if !s.Started.IsZero() {
		gauge(c.started, unixSeconds(s.Started))
	}
	gauge(c.goroutines, float64(s.Goroutines))
	counter(c.receiveErrors, s.ReceiveErrors)
	reloadOK := 1.0
	if s.LastReloadError != "" {
		reloadOK = 0
	}
	gauge(c.configReload, reloadOK)
	for _, k := range s.PendingRestart {
		gauge(c.pendingRestart, 1, k)
	}

	for _, p := range s.Peers {
		counter(c.peerRxBytes, p.RxBytes, p.Name)
		counter(c.peerTxBytes, p.TxBytes, p.Name)
		counter(c.peerRxPackets, p.RxPackets, p.Name)
		counter(c.peerTxPackets, p.TxPackets, p.Name)
		counter(c.peerHandshakes, p.Handshakes, p.Name)
		counter(c.peerInitRetransmits, p.InitiationRetransmits, p.Name)
		counter(c.peerRespRetransmits, p.ResponseRetransmits, p.Name)
		if p.LastHandshake != nil && !p.LastHandshake.IsZero() {
			gauge(c.peerHandshakeAge, max(0, now.Sub(*p.LastHandshake).Seconds()), p.Name)
			gauge(c.peerLastHandshake, unixSeconds(*p.LastHandshake), p.Name)
		} else {
			gauge(c.peerLastHandshake, 0, p.Name)
		}
		if p.Suite != "" {
			gauge(c.peerSession, 1, p.Name, p.Suite)
		}
		gauge(c.peerQueue, float64(p.InboundQueue), p.Name, "inbound")
		gauge(c.peerQueue, float64(p.OutboundQueue), p.Name, "outbound")
		if p.Staged >= 0 {
			gauge(c.peerStaged, float64(p.Staged), p.Name)
		}
	}
	for r, n := range s.Drops {
		counter(c.drops, n, r)
	}
	for r, n := range s.HandshakeInvalid {
		counter(c.handshakeInvalid, n, r)
	}
	for dir, b := range map[string]control.Batches{"seal": s.Seal, "open": s.Open} {
		counter(c.batchCalls, b.Calls, dir)
		counter(c.batchPackets, b.Packets, dir)
		gauge(c.batchPacketsPerCall, b.PacketsPerCall, dir)
		gauge(c.batchLanesPerCall, b.LanesPerKernelCall, dir)
		seconds(c.batchSeconds, b.Nanos, dir)
		counter(c.batchSampledPackets, b.SampledPackets, dir)
		seconds(c.batchSampledCPUSeconds, b.SampledCPUNanos, dir)
	}
	for _, k := range s.Kernels {
		gauge(c.kernelInfo, 1, k.Primitive, k.Selected)
	}
	for _, name := range s.Suites {
		tier := "unknown"
		if id, err := ciphers.ParseSuite(name); err == nil {
			tier = id.Tier()
		}
		gauge(c.suiteTier, 1, name, tier)
	}
	b := s.Buffers
	for state, v := range map[string]int{"max": b.Max, "allocated": b.Allocated, "free": b.Free, "in_use": b.InUse, "waiting": b.Waiting} {
		gauge(c.buffers, float64(v), state)
	}
	for q, v := range map[string]int{"encrypt": b.EncryptQueue, "decrypt": b.DecryptQueue, "handshake": b.HandshakeQueue, "staged": b.Staged} {
		gauge(c.queue, float64(v), q)
	}
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
