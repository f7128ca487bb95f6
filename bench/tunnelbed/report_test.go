//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// session makes a session result with a TCP 1-stream test moving gb 10⁹
// bytes in 10 s with cpu tunnel CPU seconds, and a ping of rtt ms.
func session(tunnel string, run int, gb, cpu, rtt float64) sessionResult {
	return sessionResult{Run: run, Tunnel: tunnel, Tests: map[string]testResult{
		testTCP1: {Iperf: &iperfResult{Seconds: 10, Bytes: gb * 1e9, BitsPerSec: gb * 8e9 / 10}, TunnelCPUSeconds: cpu, MachineBusy: 0.5, MachineCPUSeconds: cpu * 1.25},
		testPing: {Ping: &pingResult{Sent: 10, Received: 10, AvgMs: rtt}},
	}}
}

func testReport() *report {
	r := &report{
		Command:  "tunnelbed -runs 3",
		Started:  time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		Finished: time.Date(2026, 5, 1, 12, 5, 0, 0, time.UTC),
		Machine:  machineFacts{CPUModel: "Test CPU", CPUs: 2, Kernel: "6.1"},
		Settings: settings{Runs: 3, TestSeconds: 10, Tests: []string{testPing, testTCP1}, UDPLen: 64, UDPRate: "0", QuietBusy: 0.3},
		Tunnels:  []tunnelInfo{{Name: "wireguard-go"}, {Name: "gmtun sm4-gcm"}, {Name: "gmtun zuc-128", Error: "no up command"}},
	}
	// wireguard-go: 2, 3, 4 GB per 10 s → 1.6, 2.4, 3.2 Gbit/s; CPU 4 s
	// each → 2, 1.333, 1 CPU-s/GB.
	for i, gb := range []float64{3, 2, 4} {
		r.Sessions = append(r.Sessions, session("wireguard-go", i+1, gb, 4, 0.5))
	}
	// Run 2 of wireguard-go was disturbed: 3/4 of the CPU went elsewhere.
	tcp := r.Sessions[1].Tests[testTCP1]
	tcp.MachineCPUSeconds = 4 * tcp.TunnelCPUSeconds
	r.Sessions[1].Tests[testTCP1] = tcp
	// gmtun: 1, 1.5, and a failed run that must not count.
	r.Sessions = append(r.Sessions, session("gmtun sm4-gcm", 1, 1, 4, 1.0), session("gmtun sm4-gcm", 2, 1.5, 3, 2.0))
	failed := session("gmtun sm4-gcm", 3, 100, 1, 0.1)
	failed.Error = "handshake failed"
	r.Sessions = append(r.Sessions, failed)
	return r
}

func TestSummarizeReport(t *testing.T) {
	r := testReport()
	summarizeReport(r, "wireguard-go")
	wg := r.Summary["wireguard-go"]["tcp1_gbps"]
	if wg.N != 3 || float64(wg.Median) != 2.4 || float64(wg.Min) != 1.6 || float64(wg.Max) != 3.2 {
		t.Errorf("wireguard-go tcp1_gbps = %+v", wg)
	}
	gm := r.Summary["gmtun sm4-gcm"]["tcp1_gbps"]
	if gm.N != 2 || math.Abs(float64(gm.Median)-1.0) > 1e-12 {
		t.Errorf("gmtun tcp1_gbps = %+v (the failed run must be ignored)", gm)
	}
	cpu := r.Summary["gmtun sm4-gcm"]["tcp1_cpu_s_per_gb"] // 4/1 and 3/1.5
	if float64(cpu.Min) != 2 || float64(cpu.Max) != 4 || float64(cpu.Median) != 3 {
		t.Errorf("gmtun cpu/GB = %+v", cpu)
	}
	if got := float64(r.Ratios["gmtun sm4-gcm"]["tcp1_gbps"]); math.Abs(got-1.0/2.4) > 1e-12 {
		t.Errorf("ratio tcp1_gbps = %v, want %v", got, 1.0/2.4)
	}
	if got := float64(r.Ratios["gmtun sm4-gcm"]["ping_avg_ms"]); got != 3 {
		t.Errorf("ratio ping = %v, want 1.5/0.5", got)
	}
	if _, ok := r.Ratios["wireguard-go"]; ok {
		t.Error("the reference has a ratio to itself")
	}
	if s := r.Summary["gmtun zuc-128"]["tcp1_gbps"]; s.N != 0 {
		t.Errorf("unmeasured tunnel has values: %+v", s)
	}
	if s := r.Summary["wireguard-go"]["udp_rx_kpps"]; s.N != 0 {
		t.Errorf("a test that did not run has values: %+v", s)
	}
}

func TestWriteMarkdown(t *testing.T) {
	r := testReport()
	summarizeReport(r, "wireguard-go")
	var b bytes.Buffer
	writeMarkdown(&b, r, "wireguard-go")
	md := b.String()
	for _, want := range []string{
		"`tunnelbed -runs 3`",
		"Test CPU, 2 CPUs",
		"| wireguard-go | 2.40 (1.60–3.20) | 0.500 (0.500–0.500) | 1.33 (1.00–2.00) |",
		"| gmtun sm4-gcm | 1.00 (0.80–1.20) | 1.500 (1.000–2.000) | 3.00 (2.00–4.00) |",
		"| gmtun zuc-128 | n/a | n/a | n/a |",
		"| gmtun sm4-gcm | 0.42 | 3.00 | 2.25 |",
		"gmtun zuc-128: not measured: no up command",
		"gmtun sm4-gcm run 3 failed: handshake failed",
		"wireguard-go run 2 tcp1: 75 % of the machine's busy CPU time went neither to the tunnel nor to iperf3",
		"outside the tunnel and iperf3 (kernel softirq for the traffic, other processes): median 20 % (20–75 %)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Count(md, "disturbed?") != 1 {
		t.Errorf("want exactly one disturbed test:\n%s", md)
	}
	if strings.Contains(md, "UDP rx") {
		t.Errorf("markdown shows columns of tests that did not run:\n%s", md)
	}

	var d bytes.Buffer
	writeDemoTable(&d, r)
	for _, want := range []string{"| sm4-gcm | 1.00 | 3.00 | 1.500 |", "| zuc-128 | failed |", "gmtun zuc-128: no up command", "gmtun sm4-gcm: handshake failed"} {
		if !strings.Contains(d.String(), want) {
			t.Errorf("demo table lacks %q:\n%s", want, d.String())
		}
	}
}

func TestReportJSON(t *testing.T) {
	r := testReport()
	summarizeReport(r, "wireguard-go")
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err) // NaN medians of unmeasured metrics must encode as null
	}
	var back report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Summary["wireguard-go"]["tcp1_gbps"].Median; got != 2.4 {
		t.Errorf("round-tripped median = %v", got)
	}
	if got := back.Summary["gmtun zuc-128"]["tcp1_gbps"].Median; !math.IsNaN(float64(got)) {
		t.Errorf("unmeasured median round-tripped as %v, want NaN", got)
	}
	if len(back.Sessions) != len(r.Sessions) || back.Sessions[5].Error != "handshake failed" {
		t.Errorf("sessions lost in JSON: %+v", back.Sessions)
	}
}
