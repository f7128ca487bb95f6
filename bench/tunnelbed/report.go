//go:build linux

package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Test names, the keys of sessionResult.Tests.
const (
	testPing = "ping"
	testTCP1 = "tcp1"
	testTCP4 = "tcp4"
	testUDP  = "udp"
)

// sessionResult is one measurement session: one tunnel, brought up,
// measured with every test, and taken down.
type sessionResult struct {
	Run    int                   `json:"run"`
	Tunnel string                `json:"tunnel"`
	Error  string                `json:"error,omitempty"`
	Quiet  *quietResult          `json:"quiet,omitempty"`
	Notes  []string              `json:"notes,omitempty"`
	Tests  map[string]testResult `json:"tests"`
}

// tunnelInfo is a tunnel under test and, if it could not run at all, why.
type tunnelInfo struct {
	Name  string   `json:"name"`
	Error string   `json:"error,omitempty"`
	Notes []string `json:"notes,omitempty"`
}

// settings are the parameters of a run, as reported.
type settings struct {
	Runs        int      `json:"runs"`
	TestSeconds float64  `json:"test_seconds"`
	Tests       []string `json:"tests"`
	UDPLen      int      `json:"udp_payload_bytes"`
	UDPRate     string   `json:"udp_rate"`
	PingCount   int      `json:"ping_count"`
	Nice        int      `json:"nice"`
	QuietBusy   float64  `json:"quiet_busy_threshold"`
	QuietWait   float64  `json:"quiet_max_wait_seconds"`
	WireguardGo string   `json:"wireguard_go,omitempty"`
	UnderlayMTU int      `json:"underlay_mtu"`
	InnerMTU    int      `json:"inner_mtu"`
	// DaemonCPUs and DaemonGOMAXPROCS restrict the tunnel daemons
	// (-daemon-cpus, -daemon-gomaxprocs); empty and 0 when they do not.
	DaemonCPUs       string `json:"daemon_cpus,omitempty"`
	DaemonGOMAXPROCS int    `json:"daemon_gomaxprocs,omitempty"`
	// RunToCompletion is gmtun's run_to_completion when -run-to-completion
	// set it ("true" or "false"); empty for gmtun's default ("auto").
	RunToCompletion string `json:"gmtun_run_to_completion,omitempty"`
}

// daemons returns the daemons' restriction recorded in st.
func (st settings) daemons() placement {
	p := placement{GOMAXPROCS: st.DaemonGOMAXPROCS}
	if st.DaemonCPUs != "" {
		p.CPUs, _ = parseCPUList(st.DaemonCPUs) // written by cpuList.String
	}
	return p
}

// report is everything a run produced; it is written as JSON (-json) and
// rendered as Markdown.
type report struct {
	Command  string          `json:"command"`
	Started  time.Time       `json:"started"`
	Finished time.Time       `json:"finished"`
	Machine  machineFacts    `json:"machine"`
	Settings settings        `json:"settings"`
	Tunnels  []tunnelInfo    `json:"tunnels"`
	Sessions []sessionResult `json:"sessions"`
	// Summary maps tunnel → metric key → median and range over the runs.
	Summary map[string]map[string]summary `json:"summary"`
	// Ratios maps tunnel → metric key → median(tunnel) / median(wireguard-go).
	Ratios map[string]map[string]num `json:"ratios_vs_wireguard_go,omitempty"`
}

// metric is one reported number, derived from a session's tests.
type metric struct {
	Key, Label   string
	Test         string // the test the metric comes from
	HigherBetter bool
	Digits       int
	Value        func(s sessionResult) float64 // NaN when not measured
}

// metrics lists the reported metrics in table order.
var metrics = []metric{
	{"tcp1_gbps", "TCP 1 stream, Gbit/s", testTCP1, true, 2, iperfMetric(testTCP1, gbps)},
	{"tcp4_gbps", "TCP 4 streams, Gbit/s", testTCP4, true, 2, iperfMetric(testTCP4, gbps)},
	{"udp_rx_kpps", "UDP rx, kpps", testUDP, true, 1, iperfMetric(testUDP, kpps)},
	{"udp_loss_pct", "UDP loss, %", testUDP, false, 1, iperfMetric(testUDP, lossPct)},
	{"udp_delivered_kpps", "UDP through the tunnel, kpps", testUDP, true, 1, func(s sessionResult) float64 {
		t, ok := s.Tests[testUDP]
		if !ok || t.Iperf == nil || t.Iperf.Seconds <= 0 {
			return math.NaN()
		}
		return t.DeliveredPackets() / t.Iperf.Seconds / 1e3
	}},
	{"ping_avg_ms", "ping RTT avg, ms", testPing, false, 3, func(s sessionResult) float64 {
		if t, ok := s.Tests[testPing]; ok && t.Ping != nil {
			return t.Ping.AvgMs
		}
		return math.NaN()
	}},
	{"tcp1_cpu_s_per_gb", "CPU-s/GB TCP 1", testTCP1, false, 2, cpuPerGB(testTCP1)},
	{"tcp4_cpu_s_per_gb", "CPU-s/GB TCP 4", testTCP4, false, 2, cpuPerGB(testTCP4)},
	{"udp_cpu_us_per_pkt", "CPU-µs/pkt UDP", testUDP, false, 2, func(s sessionResult) float64 {
		t, ok := s.Tests[testUDP]
		if !ok || t.Iperf == nil || t.Iperf.ReceivedPackets() <= 0 {
			return math.NaN()
		}
		return t.TunnelCPUSeconds * 1e6 / t.Iperf.ReceivedPackets()
	}},
	{"udp_cpu_us_per_delivered", "CPU-µs/pkt through the tunnel", testUDP, false, 2, func(s sessionResult) float64 {
		t, ok := s.Tests[testUDP]
		if !ok || t.DeliveredPackets() <= 0 {
			return math.NaN()
		}
		return t.TunnelCPUSeconds * 1e6 / t.DeliveredPackets()
	}},
}

// fillMetrics are gmtun's crypto batch fill per test (batchFill), shown
// in a table of their own: wireguard-go has no such counters, so there
// are no ratios.
var fillMetrics = batchMetrics(true, 1,
	batchColumn{"seal_packets_per_call", "A seal", func(b *batchFill) num { return b.SealPacketsPerCall }},
	batchColumn{"open_packets_per_call", "B open", func(b *batchFill) num { return b.OpenPacketsPerCall }},
)

// cryptoTimeMetrics are the time per packet inside gmtun's Seal (A) and
// Open (B) calls per test, wall clock and then the sampled thread CPU
// time ("CPU"), a table of their own like the fill.
var cryptoTimeMetrics = batchMetrics(false, 0,
	batchColumn{"seal_ns_per_packet", "A seal", func(b *batchFill) num { return b.SealNanosPerPacket }},
	batchColumn{"seal_cpu_ns_per_packet", "", func(b *batchFill) num { return b.SealCPUNanosPerPacket }},
	batchColumn{"open_ns_per_packet", "B open", func(b *batchFill) num { return b.OpenNanosPerPacket }},
	batchColumn{"open_cpu_ns_per_packet", "", func(b *batchFill) num { return b.OpenCPUNanosPerPacket }},
)

// batchColumn is one figure of the daemons' batch counters (batchFill).
// Its metric key is "<test>_<key>"; its label "<test label>: <label>", or
// "CPU" without a label (the CPU time beside the column before it).
type batchColumn struct {
	key, label string
	field      func(*batchFill) num
}

// batchMetrics returns cols for each iperf3 test, test by test.
func batchMetrics(higherBetter bool, digits int, cols ...batchColumn) []metric {
	var out []metric
	for _, t := range []struct{ test, label string }{{testTCP1, "TCP 1"}, {testTCP4, "TCP 4"}, {testUDP, "UDP"}} {
		for _, c := range cols {
			label := "CPU"
			if c.label != "" {
				label = t.label + ": " + c.label
			}
			out = append(out, metric{t.test + "_" + c.key, label, t.test, higherBetter, digits, batchMetric(t.test, c.field)})
		}
	}
	return out
}

// batchMetric extracts one field of test's batch counters (NaN without).
func batchMetric(test string, field func(*batchFill) num) func(sessionResult) float64 {
	return func(s sessionResult) float64 {
		t, ok := s.Tests[test]
		if !ok || t.Batches == nil {
			return math.NaN()
		}
		return float64(field(t.Batches))
	}
}

func gbps(r iperfResult) float64 { return r.BitsPerSec / 1e9 }

func kpps(r iperfResult) float64 { return r.ReceivedPackets() / r.Seconds / 1e3 }

// lossPct is the share of the datagrams sent that never arrived, in
// percent: 1 − received/sent (iperf3's lost_percent misses the tail).
func lossPct(r iperfResult) float64 {
	if r.SentPackets <= 0 {
		return math.NaN()
	}
	return 100 * (r.SentPackets - r.ReceivedPackets()) / r.SentPackets
}

// iperfMetric extracts f of the iperf3 result of test.
func iperfMetric(test string, f func(iperfResult) float64) func(sessionResult) float64 {
	return func(s sessionResult) float64 {
		t, ok := s.Tests[test]
		if !ok || t.Iperf == nil {
			return math.NaN()
		}
		return f(*t.Iperf)
	}
}

// cpuPerGB is the tunnel daemons' CPU seconds per 10⁹ bytes received.
func cpuPerGB(test string) func(sessionResult) float64 {
	return func(s sessionResult) float64 {
		t, ok := s.Tests[test]
		if !ok || t.Iperf == nil || t.Iperf.Bytes <= 0 {
			return math.NaN()
		}
		return t.TunnelCPUSeconds / (t.Iperf.Bytes / 1e9)
	}
}

// summarizeReport fills r.Summary and r.Ratios from r.Sessions. Ratios
// are taken against the tunnel named ref when it has results.
func summarizeReport(r *report, ref string) {
	r.Summary = map[string]map[string]summary{}
	for _, t := range r.Tunnels {
		m := map[string]summary{}
		for _, mt := range slices.Concat(metrics, fillMetrics, cryptoTimeMetrics) {
			var xs []float64
			for _, s := range r.Sessions {
				if s.Tunnel == t.Name && s.Error == "" {
					xs = append(xs, mt.Value(s))
				}
			}
			m[mt.Key] = summarize(xs)
		}
		r.Summary[t.Name] = m
	}
	base, ok := r.Summary[ref]
	if !ok {
		return
	}
	r.Ratios = map[string]map[string]num{}
	for _, t := range r.Tunnels {
		if t.Name == ref {
			continue
		}
		m := map[string]num{}
		for _, mt := range metrics {
			m[mt.Key] = num(ratio(float64(r.Summary[t.Name][mt.Key].Median), float64(base[mt.Key].Median)))
		}
		r.Ratios[t.Name] = m
	}
}

// fmtNum formats v with digits decimals, or "–" when it is NaN.
func fmtNum(v num, digits int) string {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return fmt.Sprintf("%.*f", digits, f)
}

// cell renders a summary as "median (min–max)".
func cell(s summary, digits int) string {
	if s.N == 0 {
		return "–"
	}
	if s.N == 1 {
		return fmtNum(s.Median, digits)
	}
	return fmt.Sprintf("%s (%s–%s)", fmtNum(s.Median, digits), fmtNum(s.Min, digits), fmtNum(s.Max, digits))
}

// writeMarkdown renders the benchmark report.
func writeMarkdown(w io.Writer, r *report, ref string) {
	fmt.Fprintf(w, "## Tunnel throughput: gmtun vs wireguard-go (tunnelbed)\n\n")
	fmt.Fprintf(w, "Command: `%s`  \n", r.Command)
	fmt.Fprintf(w, "Date: %s, %s.\n\n", r.Started.UTC().Format("2006-01-02 15:04 UTC"), r.Finished.Sub(r.Started).Round(time.Second))
	writeMachine(w, r)
	st := r.Settings
	fmt.Fprintf(w, "Bed: two network namespaces joined by a veth (underlay 198.18.0.0/24, MTU %d), "+
		"tunnel 198.19.0.0/24 with inner MTU %d; iperf3 client in A, server in B. ", st.UnderlayMTU, st.InnerMTU)
	fmt.Fprintf(w, "Runs per tunnel: %d, tunnels alternating (order reversed every other run); "+
		"%gs per iperf3 test; UDP: %d-byte payloads at rate %q (0 = unlimited); ping: %d × 50 ms on the idle tunnel; "+
		"tunnel and load processes at nice %d.\n\n",
		st.Runs, st.TestSeconds, st.UDPLen, st.UDPRate, st.PingCount, st.Nice)
	if p := st.daemons().describe(); p != "" {
		fmt.Fprintf(w, "Tunnel daemons (both sides) restricted to %s; iperf3 and the kernel's softirq work are not.\n\n", p)
	}
	shown := shownMetrics(st.Tests)
	fmt.Fprintf(w, "Cells are median (min–max) over the runs. CPU is user+system time of both tunnel processes "+
		"(/proc/PID/stat) during the test, per 10⁹ bytes (or per packet) received.\n\n")

	writeHeader(w, shown)
	for _, t := range r.Tunnels {
		fmt.Fprintf(w, "| %s |", t.Name)
		for _, mt := range shown {
			if t.Error != "" {
				fmt.Fprintf(w, " n/a |")
			} else {
				fmt.Fprintf(w, " %s |", cell(r.Summary[t.Name][mt.Key], mt.Digits))
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)

	var rows []string
	for _, t := range r.Tunnels {
		m, ok := r.Ratios[t.Name]
		if !ok || t.Error != "" {
			continue
		}
		row := "| " + t.Name + " |"
		for _, mt := range shown {
			row += " " + fmtNum(m[mt.Key], 2) + " |"
		}
		rows = append(rows, row)
	}
	if len(rows) > 0 {
		fmt.Fprintf(w, "Ratio of medians, tunnel / %s (higher is better for throughput and kpps; lower for loss, RTT and CPU):\n\n", ref)
		writeHeader(w, shown)
		for _, row := range rows {
			fmt.Fprintln(w, row)
		}
		fmt.Fprintln(w)
	}
	writeBatchTable(w, r, shownMetricsOf(fillMetrics, st.Tests), "Crypto batch fill, packets per call (from the daemons' control sockets, in the test "+
		"traffic's direction: A seals, B opens; the kernels take 16 per call)")
	writeBatchTable(w, r, shownMetricsOf(cryptoTimeMetrics, st.Tests), "Crypto time per packet in the daemons, ns: wall clock inside A's Seal "+
		"and B's Open calls (waits for a CPU included), then CPU, the thread CPU time of the calls the daemons sample (one in 64; "+
		"compare `gmtun bench`)")
	writeNotes(w, r)
}

// writeBatchTable renders one table of batch counters (fill, time) for
// the tunnels that report them.
func writeBatchTable(w io.Writer, r *report, shown []metric, title string) {
	var rows []string
	for _, t := range r.Tunnels {
		row, measured := "| "+t.Name+" |", false
		for _, mt := range shown {
			sm := r.Summary[t.Name][mt.Key]
			measured = measured || sm.N > 0
			row += " " + cell(sm, mt.Digits) + " |"
		}
		if measured && t.Error == "" {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n\n", title)
	writeHeader(w, shown)
	for _, row := range rows {
		fmt.Fprintln(w, row)
	}
	fmt.Fprintln(w)
}

// shownMetrics returns the metrics of the tests that were run.
func shownMetrics(tests []string) []metric { return shownMetricsOf(metrics, tests) }

// shownMetricsOf returns those of ms whose test was run.
func shownMetricsOf(ms []metric, tests []string) []metric {
	var out []metric
	for _, mt := range ms {
		if slices.Contains(tests, mt.Test) {
			out = append(out, mt)
		}
	}
	return out
}

// writeHeader writes the header rows of a table with a tunnel column and
// one column per metric.
func writeHeader(w io.Writer, ms []metric) {
	fmt.Fprintf(w, "| tunnel |")
	for _, mt := range ms {
		fmt.Fprintf(w, " %s |", mt.Label)
	}
	fmt.Fprintf(w, "\n|---|")
	for range ms {
		fmt.Fprintf(w, "---:|")
	}
	fmt.Fprintln(w)
}

// disturbedShare is the share of busy CPU time outside the tunnel and
// iperf3 above which a test is flagged as possibly disturbed by other
// users of the machine.
const disturbedShare = 0.5

// writeMachine renders the machine facts as one paragraph.
func writeMachine(w io.Writer, r *report) {
	m := r.Machine
	fmt.Fprintf(w, "Machine: %s, %d CPUs (%s), %.0f GiB; Linux %s; %s; %s; %s",
		m.CPUModel, m.CPUs, strings.Join(m.CPUFlags, " "), m.MemoryGiB, m.Kernel, m.OS, m.Go, m.Iperf3)
	if r.Settings.WireguardGo != "" {
		fmt.Fprintf(w, "; wireguard-go %s", r.Settings.WireguardGo)
	}
	fmt.Fprintf(w, ".\n\n")
}

// writeNotes lists failures, offloads and how quiet the machine was.
func writeNotes(w io.Writer, r *report) {
	var notes []string
	for _, t := range r.Tunnels {
		if t.Error != "" {
			notes = append(notes, fmt.Sprintf("%s: not measured: %s", t.Name, t.Error))
		}
	}
	seen := map[string]bool{}
	var busy []float64
	notQuiet := 0
	for _, s := range r.Sessions {
		if s.Error != "" {
			notes = append(notes, fmt.Sprintf("%s run %d failed: %s", s.Tunnel, s.Run, s.Error))
		}
		for _, n := range s.Notes {
			k := s.Tunnel + ": " + n
			if !seen[k] {
				seen[k] = true
				notes = append(notes, k)
			}
		}
		if s.Quiet != nil && !s.Quiet.Quiet {
			notQuiet++
		}
		for _, t := range s.Tests {
			if t.Iperf != nil {
				busy = append(busy, 100*t.MachineBusy)
			}
		}
	}
	var others []float64
	for _, s := range r.Sessions {
		for _, name := range []string{testTCP1, testTCP4, testUDP} {
			t, ok := s.Tests[name]
			if !ok || t.Iperf == nil {
				continue
			}
			o := t.otherShare()
			others = append(others, 100*o)
			if o > disturbedShare {
				notes = append(notes, fmt.Sprintf("%s run %d %s: %.0f %% of the machine's busy CPU time went neither to the tunnel nor to iperf3 (disturbed?)",
					s.Tunnel, s.Run, name, 100*o))
			}
		}
	}
	if s := summarize(others); s.N > 0 {
		notes = append(notes, fmt.Sprintf("share of busy CPU time outside the tunnel and iperf3 (kernel softirq for the traffic, other processes): median %s %% (%s–%s %%)",
			fmtNum(s.Median, 0), fmtNum(s.Min, 0), fmtNum(s.Max, 0)))
	}
	if notQuiet > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d sessions started on a busy machine (above the %.0f %% threshold after waiting %gs)",
			notQuiet, len(r.Sessions), 100*r.Settings.QuietBusy, r.Settings.QuietWait))
	}
	if s := summarize(busy); s.N > 0 {
		notes = append(notes, fmt.Sprintf("whole-machine CPU busy during the iperf3 tests (all processes, softirq included): median %s %% (%s–%s %%)",
			fmtNum(s.Median, 0), fmtNum(s.Min, 0), fmtNum(s.Max, 0)))
	}
	if len(notes) == 0 {
		return
	}
	fmt.Fprintf(w, "Notes:\n\n")
	for _, n := range notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	fmt.Fprintln(w)
}

// writeDemoTable renders the short table of the demo: one row per tunnel,
// then why any tunnel or session failed.
func writeDemoTable(w io.Writer, r *report) {
	fmt.Fprintf(w, "| suite | Gbit/s (TCP, 1 stream) | CPU-s/GB | ping RTT, ms |\n|---|---:|---:|---:|\n")
	for _, t := range r.Tunnels {
		name := strings.TrimPrefix(t.Name, "gmtun ")
		if t.Error != "" {
			fmt.Fprintf(w, "| %s | failed | | |\n", name)
			continue
		}
		s := r.Summary[t.Name]
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", name,
			fmtNum(s["tcp1_gbps"].Median, 2), fmtNum(s["tcp1_cpu_s_per_gb"].Median, 2), fmtNum(s["ping_avg_ms"].Median, 3))
	}
	for _, t := range r.Tunnels {
		if t.Error != "" {
			fmt.Fprintf(w, "\n%s: %s", t.Name, t.Error)
		}
	}
	for _, s := range r.Sessions {
		if s.Error != "" {
			fmt.Fprintf(w, "\n%s: %s", s.Tunnel, s.Error)
		}
	}
	fmt.Fprintln(w)
}
