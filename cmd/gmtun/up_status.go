package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/control"
	"github.com/gmtun/gmtun/sdnotify"
	"github.com/gmtun/gmtun/tunnel"
)

// What the daemon reports: to systemd, on the control socket, and in its startup log.

// notify sends assignments to systemd, logging only the first failure.
func (d *daemon) notify(assignments ...string) {
	if _, err := sdnotify.Notify(d.notifySocket, assignments...); err != nil && !d.notifyFailed.Swap(true) {
		d.log.Warnf("%v", err)
	}
}

// statusLine is the STATUS= text for systemctl status.
func (d *daemon) statusLine() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fmt.Sprintf("%s up, %d peer(s)", d.cfg.Interface.Name, len(d.cfg.Peers))
}

// status is the control socket's view of the daemon.
func (d *daemon) status() (control.Status, error) {
	if !d.ready.Load() {
		return control.Status{}, fmt.Errorf("%s is starting or stopping", d.name)
	}
	st := d.dev.Stats()
	d.mu.Lock()
	ifc := d.cfg.Interface
	path := d.cfg.Path
	var lastReload *time.Time
	if !d.lastReload.IsZero() {
		t := d.lastReload
		lastReload = &t
	}
	reloadErr := d.lastReloadErr
	pending := slices.Clone(d.pendingRestart)
	d.mu.Unlock()

	to, uo := d.tun.Offload(), d.bind.Offload()
	s := control.Status{
		Interface:  ifc.Name,
		PublicKey:  ifc.PrivateKey.Public().String(),
		ListenPort: st.ListenPort,
		MTU:        st.MTU,
		FwMark:     ifc.FwMark,
		Kernels:    d.kernels,
		DataPath:   dataPath(d.dev.RunToCompletion()),
		CPUs:       runtime.NumCPU(),
		Offload: control.Offload{
			TUNVNetHdr: to.VNetHdr, TUNTSO: to.VNetHdr, TUNUSO: to.USO, TUNQueues: to.Queues,
			UDPGSO4: uo.GSO4, UDPGSO6: uo.GSO6, UDPGRO4: uo.GRO4, UDPGRO6: uo.GRO6,
		},
		ConfigFile:       path,
		Started:          d.started,
		LastReload:       lastReload,
		LastReloadError:  reloadErr,
		PendingRestart:   pending,
		Peers:            make([]control.Peer, 0, len(st.Peers)),
		Drops:            st.Drops,
		HandshakeInvalid: st.HandshakeInvalid,
		Seal:             batches(st.Seal),
		Open:             batches(st.Open),
		Buffers:          bufferStatus(st.Buffers),
		ReceiveErrors:    st.ReceiveErrors,
		Goroutines:       runtime.NumGoroutine(),
	}
	for _, id := range ifc.Suites {
		s.Suites = append(s.Suites, id.String())
	}
	for _, p := range st.Peers {
		cp := control.Peer{
			Name:                  p.Name,
			PublicKey:             p.PublicKey,
			AllowedIPs:            make([]string, 0, len(p.AllowedIPs)),
			RxBytes:               p.RxBytes,
			TxBytes:               p.TxBytes,
			RxPackets:             p.RxPackets,
			TxPackets:             p.TxPackets,
			PersistentKeepalive:   int(p.PersistentKeepalive / time.Second),
			Roaming:               p.Roaming,
			InboundQueue:          p.InboundQueue,
			OutboundQueue:         p.OutboundQueue,
			Staged:                p.Staged,
			Handshakes:            p.Handshakes,
			InitiationRetransmits: p.InitiationRetransmits,
			ResponseRetransmits:   p.ResponseRetransmits,
		}
		if p.Endpoint.IsValid() {
			cp.Endpoint = p.Endpoint.String()
		}
		for _, a := range p.AllowedIPs {
			cp.AllowedIPs = append(cp.AllowedIPs, a.String())
		}
		if p.Suite != 0 {
			cp.Suite = p.Suite.String()
		}
		if !p.LastHandshake.IsZero() {
			t := p.LastHandshake
			cp.LastHandshake = &t
		}
		s.Peers = append(s.Peers, cp)
	}
	return s, nil
}

// dataPath names the data plane's mode for control.Status.DataPath.
func dataPath(runToCompletion bool) string {
	if runToCompletion {
		return "run to completion"
	}
	return "workers"
}

// batches converts the device's batch counters for the control socket.
func batches(b tunnel.BatchStats) control.Batches {
	return control.Batches{Calls: b.Calls, Packets: b.Packets, PacketsPerCall: b.PacketsPerCall(), LanesPerKernelCall: b.LanesPerGroup(),
		Nanos: b.Nanos, NanosPerPacket: b.NanosPerPacket(),
		SampledPackets: b.SampledPackets, SampledCPUNanos: b.SampledCPUNanos, CPUNanosPerPacket: b.CPUNanosPerPacket()}
}

// logSuiteTiers logs which implementation carries each configured suite,
// and warns loudly for every suite left on the portable generic code: it is
// constant-time but several times slower, so a gateway on it is likely
// CPU-bound (docs/SECURITY.md, docs/BENCHMARKS.md).
func logSuiteTiers(log *logger, suites []ciphers.SuiteID) {
	for _, s := range suites {
		tier := s.Tier()
		if tier != ciphers.GenericTier {
			log.Infof("suite %s runs on the %s kernels", s, tier)
			continue
		}
		log.Warnf("WARNING: suite %s runs on the portable generic code (no SIMD kernel for this %s CPU, or a purego build): "+
			"constant-time, but several times slower than the kernel tiers; expect much lower throughput (docs/BENCHMARKS.md)",
			s, runtime.GOARCH)
	}
}

// kernelsString formats the kernel tiers for the startup line.
func kernelsString(ks []control.Kernel) string {
	if len(ks) == 0 {
		return "(none registered)"
	}
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k.Primitive + "=" + k.Selected
	}
	return strings.Join(parts, " ")
}

// versionString is the version for log lines.
func versionString() string {
	if version != "" {
		return version
	}
	return "(devel)"
}
