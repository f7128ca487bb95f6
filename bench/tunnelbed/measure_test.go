//go:build linux

package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// The fixtures in testdata/ are unedited outputs of iperf3 3.12 and
// iputils ping between two namespaces; the expected numbers below are
// read off those files.

func TestParseIperfTCP(t *testing.T) {
	b, err := os.ReadFile("testdata/iperf3-tcp4.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseIperf(b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Bytes != 3677618176 || r.Seconds != 1.009553 || r.BitsPerSec != 29142546659.759323 {
		t.Errorf("parseIperf(tcp4) = %+v", r)
	}
	if got := gbps(r); got < 29.14 || got > 29.15 {
		t.Errorf("gbps = %v", got)
	}
}

func TestParseIperfUDP(t *testing.T) {
	b, err := os.ReadFile("testdata/iperf3-udp64.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseIperf(b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Packets != 179115 || r.LostPackets != 77612 || r.Bytes != 6496192 || r.SentPackets != 179580 {
		t.Errorf("parseIperf(udp64) = %+v", r)
	}
	// Received datagrams must account for every received byte.
	if got := r.ReceivedPackets(); got != r.Bytes/64 {
		t.Errorf("received packets %v, but %v bytes of 64-byte payloads", got, r.Bytes)
	}
	// 179580 sent, 101503 received: 43.477 % lost (iperf3 itself says
	// 43.2186 %, missing the 465 datagrams after the last one received).
	if got := lossPct(r); got < 43.47 || got > 43.48 {
		t.Errorf("lossPct = %v, want 43.477", got)
	}
	if got := kpps(r); got < 101.4 || got > 101.5 {
		t.Errorf("kpps = %v, want 101503/1.00095/1000", got)
	}
}

func TestParseIperfErrors(t *testing.T) {
	b, err := os.ReadFile("testdata/iperf3-refused.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseIperf(b); err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("refused run: err = %v", err)
	}
	for _, in := range []string{"", "{", `{"end":{}}`, `{"end":{"sum_received":{"seconds":0}}}`} {
		if _, err := parseIperf([]byte(in)); err == nil {
			t.Errorf("parseIperf(%q) succeeded", in)
		}
	}
}

func TestParsePing(t *testing.T) {
	b, err := os.ReadFile("testdata/ping-ok.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := parsePing(string(b))
	if err != nil {
		t.Fatal(err)
	}
	want := pingResult{Sent: 5, Received: 5, MinMs: 0.044, AvgMs: 0.062, MaxMs: 0.129, MdevMs: 0.033}
	if r != want {
		t.Errorf("parsePing = %+v, want %+v", r, want)
	}
	b, err = os.ReadFile("testdata/ping-lost.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parsePing(string(b)); err == nil || !strings.Contains(err.Error(), "0 of 2") {
		t.Errorf("all lost: err = %v", err)
	}
	if _, err := parsePing("ping: connect: Network is unreachable\n"); err == nil {
		t.Error("garbage accepted")
	}
}

func TestTCPListening(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1451 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:0016 0100007F:1451 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
`
	if !tcpListening([]byte(table), 5201) {
		t.Error("listener on 0x1451 not found")
	}
	if tcpListening([]byte(table), 22) {
		t.Error("established socket on port 22 counted as listening")
	}
	if tcpListening(nil, 5201) {
		t.Error("empty table has a listener")
	}
}

func TestIperfArgs(t *testing.T) {
	tcp := iperfSpec{Streams: 4, Duration: 10 * time.Second}.args("198.19.0.2")
	for _, want := range [][]string{{"-c", "198.19.0.2"}, {"-t", "10"}, {"-P", "4"}, {"-J"}} {
		if !containsSeq(tcp, want) {
			t.Errorf("tcp args %q lack %q", tcp, want)
		}
	}
	if slices.Contains(tcp, "-u") {
		t.Errorf("tcp args %q contain -u", tcp)
	}
	udp := iperfSpec{Streams: 1, UDP: true, Len: 64, Rate: "0", Duration: 1500 * time.Millisecond}.args("x")
	for _, want := range [][]string{{"-u"}, {"-l", "64"}, {"-b", "0"}, {"-t", "2"}} {
		if !containsSeq(udp, want) {
			t.Errorf("udp args %q lack %q", udp, want)
		}
	}
	if slices.Contains(udp, "-P") {
		t.Errorf("single-stream args %q contain -P", udp)
	}
}

// containsSeq reports whether want occurs in s as consecutive elements.
func containsSeq(s, want []string) bool {
	for i := 0; i+len(want) <= len(s); i++ {
		if slices.Equal(s[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 16}
	tb.Write([]byte("first line\n"))
	tb.Write([]byte("second\nthird\n"))
	if got := tb.Tail(2); got != "second | third" {
		t.Errorf("Tail(2) = %q", got)
	}
	if len(tb.buf) > 16 {
		t.Errorf("buffer grew to %d bytes, limit 16", len(tb.buf))
	}
	if got := (&tailBuffer{max: 8}).Tail(3); got != "(no output)" {
		t.Errorf("empty Tail = %q", got)
	}
}

func TestEthtoolFeatures(t *testing.T) {
	out := `Features for gmtb1a:
rx-checksumming: off [fixed]
tx-checksumming: on
	tx-checksum-ipv4: off [fixed]
tcp-segmentation-offload: on
	tx-tcp-segmentation: on
generic-receive-offload: off
tx-udp-segmentation: on [requested off]
`
	got := ethtoolFeatures(out)
	want := []string{"tx-checksumming on", "tcp-segmentation-offload on", "tx-udp-segmentation on", "generic-receive-offload off"}
	if !slices.Equal(got, want) {
		t.Errorf("ethtoolFeatures = %q, want %q", got, want)
	}
}
