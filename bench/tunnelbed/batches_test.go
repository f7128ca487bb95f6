//go:build linux

package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/control"
)

func TestFillBetween(t *testing.T) {
	before := [2]batchCounts{
		{SealCalls: 10, SealPackets: 500, OpenCalls: 7, OpenPackets: 9, SealNanos: 1e6, OpenNanos: 5e5, SealSampled: 50, SealSampledCPU: 3e4},
		{SealCalls: 3, SealPackets: 4, OpenCalls: 20, OpenPackets: 1000, SealNanos: 7e4, OpenNanos: 3e6, OpenSampled: 80, OpenSampledCPU: 5e4}}
	after := [2]batchCounts{
		{SealCalls: 30, SealPackets: 2100, OpenCalls: 9, OpenPackets: 11, SealNanos: 2.6e6, OpenNanos: 9e5, SealSampled: 150, SealSampledCPU: 9e4},
		{SealCalls: 5, SealPackets: 6, OpenCalls: 40, OpenPackets: 2500, SealNanos: 9e4, OpenNanos: 4.5e6, OpenSampled: 180, OpenSampledCPU: 12e4}}
	f := fillBetween(before, after)
	if f.SealPacketsPerCall != 80 || f.OpenPacketsPerCall != 75 {
		t.Errorf("fill = %+v, want A seal 1600/20 = 80 and B open 1500/20 = 75 (not A's open or B's seal)", f)
	}
	if f.SealCPUNanosPerPacket != 600 || f.OpenCPUNanosPerPacket != 700 {
		t.Errorf("CPU time = %+v, want A seal 60 µs/100 = 600 ns and B open 70 µs/100 = 700 ns", f)
	}
	if f.SealNanosPerPacket != 1000 || f.OpenNanosPerPacket != 1000 {
		t.Errorf("time = %+v, want A seal 1.6 ms/1600 = 1000 ns and B open 1.5 ms/1500 = 1000 ns", f)
	}
	f = fillBetween(before, before)
	for _, v := range []num{f.SealPacketsPerCall, f.OpenPacketsPerCall, f.SealNanosPerPacket, f.OpenNanosPerPacket, f.SealCPUNanosPerPacket, f.OpenCPUNanosPerPacket} {
		if !math.IsNaN(float64(v)) {
			t.Errorf("fill without calls = %+v, want NaN", f)
		}
	}
}

// TestQueryBatches serves two control sockets as gmtun's daemons lay them
// out (DIR/NAME/IFACE.sock) beside a decoy, and reads their counters.
func TestQueryBatches(t *testing.T) {
	dir := t.TempDir()
	serve := func(sub, iface string, seal, open control.Batches) {
		srv, err := control.Listen(control.SocketPath(filepath.Join(dir, sub), iface), func() (control.Status, error) {
			return control.Status{Interface: iface, Seal: seal, Open: open}, nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
	}
	serve("site-a", "tbA", control.Batches{Calls: 2, Packets: 150, Nanos: 11, SampledPackets: 21, SampledCPUNanos: 31}, control.Batches{Calls: 5, Packets: 6, Nanos: 12, SampledPackets: 22, SampledCPUNanos: 32})
	serve("site-b", "tbB", control.Batches{Calls: 4, Packets: 8, Nanos: 13, SampledPackets: 23, SampledCPUNanos: 33}, control.Batches{Calls: 3, Packets: 240, Nanos: 14, SampledPackets: 24, SampledCPUNanos: 34})
	serve("other", "tbC", control.Batches{Calls: 1, Packets: 1}, control.Batches{Calls: 1, Packets: 1})
	got, err := queryBatches(context.Background(), []string{filepath.Join(dir, "missing"), dir}, [2]string{"tbA", "tbB"})
	if err != nil {
		t.Fatal(err)
	}
	want := [2]batchCounts{{2, 150, 5, 6, 11, 12, 21, 31, 22, 32}, {4, 8, 3, 240, 13, 14, 23, 33, 24, 34}}
	if got != want {
		t.Errorf("counters = %+v, want %+v", got, want)
	}
	if _, err := queryBatches(context.Background(), []string{dir}, [2]string{"tbA", "tbZ"}); err == nil || !strings.Contains(err.Error(), "tbZ") {
		t.Errorf("an interface without a socket: err = %v, want one naming it", err)
	}
}

func TestWriteFill(t *testing.T) {
	r := testReport()
	for i, s := range r.Sessions {
		if s.Tunnel != "gmtun sm4-gcm" {
			continue
		}
		tcp := s.Tests[testTCP1]
		tcp.Batches = &batchFill{SealPacketsPerCall: num(78 + i), OpenPacketsPerCall: 15, SealNanosPerPacket: num(400 + 10*i), OpenNanosPerPacket: 420,
			SealCPUNanosPerPacket: 300, OpenCPUNanosPerPacket: num(250 + i)}
		s.Tests[testTCP1] = tcp
	}
	summarizeReport(r, "wireguard-go")
	var b bytes.Buffer
	writeMarkdown(&b, r, "wireguard-go")
	md := b.String()
	// Sessions 3 and 4 are sm4-gcm's good runs (seal 81, 82); run 5 failed.
	for _, want := range []string{"Crypto batch fill", "| tunnel | TCP 1: A seal | TCP 1: B open |", "| gmtun sm4-gcm | 81.5 (81.0–82.0) | 15.0 (15.0–15.0) |",
		"Crypto time per packet", "| tunnel | TCP 1: A seal | CPU | TCP 1: B open | CPU |",
		"| gmtun sm4-gcm | 435 (430–440) | 300 (300–300) | 420 (420–420) | 254 (253–254) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| wireguard-go | – |") {
		t.Errorf("the fill table lists a tunnel without counters:\n%s", md)
	}
	if _, ok := r.Ratios["gmtun sm4-gcm"]["tcp1_seal_packets_per_call"]; ok {
		t.Error("batch fill has a ratio to wireguard-go, which has no batches")
	}

	b.Reset()
	r = testReport()
	summarizeReport(r, "wireguard-go")
	writeMarkdown(&b, r, "wireguard-go")
	if strings.Contains(b.String(), "Crypto batch fill") || strings.Contains(b.String(), "Crypto time") {
		t.Errorf("a report without batch counters has a fill table:\n%s", b.String())
	}
}
