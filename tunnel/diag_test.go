package tunnel

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
	"github.com/gmtun/gmtun/tunnel/netio/netiotest"
)

// syncBuffer is a bytes.Buffer safe for the device's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// records decodes the JSON lines written so far.
func (s *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// withCause returns the records whose cause is cause.
func withCause(recs []map[string]any, cause string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["cause"] == cause {
			out = append(out, r)
		}
	}
	return out
}

// diagPair is newPair with per-side peer settings and a JSON slog logger
// on each side.
func diagPair(t *testing.T, clock *fakeClock, tweakA, tweakB func(*PeerConfig)) (a, b *side, logA, logB *syncBuffer) {
	t.Helper()
	rawA, rawB := netiotest.NewChannelBinds(ciphers.MaxBatch)
	a = &side{tun: netiotest.NewChannelTUN("tunA", ciphers.MaxBatch, 1420), raw: rawA, bind: rawA, key: genKey(t)}
	b = &side{tun: netiotest.NewChannelTUN("tunB", ciphers.MaxBatch, 1420), raw: rawB, bind: rawB, key: genKey(t)}
	logA, logB = new(syncBuffer), new(syncBuffer)
	mk := func(self, other *side, name string, allowed []netip.Prefix, ep netip.AddrPort, tweak func(*PeerConfig), w *syncBuffer) {
		pc := PeerConfig{Name: name, PublicKey: other.key.Public(), Endpoint: ep, AllowedIPs: allowed, Roaming: true}
		if tweak != nil {
			tweak(&pc)
		}
		sl := slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
		dev, err := NewDevice(Config{PrivateKey: self.key, Clock: clock, Logger: SlogLogger(sl), Peers: []PeerConfig{pc}},
			[]netio.TUN{self.tun}, self.bind)
		if err != nil {
			t.Fatal(err)
		}
		if err := dev.Up(); err != nil {
			t.Fatal(err)
		}
		self.dev, self.peer = dev, dev.peerList[0]
		t.Cleanup(func() { dev.Close() })
	}
	mk(a, b, "site-b", netB, netip.AddrPort(rawB.LocalEndpoint()), tweakA, logA)
	mk(b, a, "site-a", netA, netip.AddrPort(rawA.LocalEndpoint()), tweakB, logB)
	return a, b, logA, logB
}

// TestDiagnosePSKMismatch: a pre-shared key mismatch is logged by the
// initiator once, naming the peer and the hint, and again only after
// DiagnosticInterval with the number of repeats; the responder, whose
// session the initiator rejected, reports no handshake and no suite.
func TestDiagnosePSKMismatch(t *testing.T) {
	clock := newFakeClock()
	pskA, pskB := new([32]byte), new([32]byte)
	pskA[0], pskB[0] = 1, 2
	a, b, logA, _ := diagPair(t, clock, func(p *PeerConfig) { p.PSK = pskA }, func(p *PeerConfig) { p.PSK = pskB; p.Endpoint = netip.AddrPort{} })
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 1, 64)
	waitFor(t, "the PSK diagnostic", func() bool { return len(withCause(logA.records(t), "select_decrypt")) == 1 })
	r := withCause(logA.records(t), "select_decrypt")[0]
	if r["peer"] != "site-b" || r["level"] != "WARN" || !strings.Contains(r["hint"].(string), "pre-shared keys differ") ||
		!strings.Contains(r["msg"].(string), "pre-shared key mismatch") {
		t.Errorf("diagnostic = %v", r)
	}

	// Retries within the interval are counted, not logged.
	for range 3 {
		step(clock, handshake.RekeyTimeout+handshake.MaxRekeyJitter, a.dev, b.dev)
	}
	if n := len(withCause(logA.records(t), "select_decrypt")); n != 1 {
		t.Fatalf("%d PSK lines within %v, want 1", n, DiagnosticInterval)
	}
	if inv := a.dev.Stats().HandshakeInvalid["select_decrypt"]; inv < 2 {
		t.Fatalf("handshake_invalid select_decrypt = %d; the retries did not happen", inv)
	}
	a.peer.diag.mu.Lock()
	a.peer.diag.seen["select_decrypt"].last = clock.Now().Add(-DiagnosticInterval)
	a.peer.diag.mu.Unlock()
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 2, 64)
	step(clock, handshake.RekeyTimeout+handshake.MaxRekeyJitter, a.dev, b.dev)
	waitFor(t, "the repeated diagnostic", func() bool { return len(withCause(logA.records(t), "select_decrypt")) == 2 })
	if r := withCause(logA.records(t), "select_decrypt")[1]; r["repeats"] == nil || r["repeats"].(float64) < 1 {
		t.Errorf("second line = %v, want the repeats since the first", r)
	}

	// Neither side has a session; the responder's unconfirmed keypair is
	// not a "latest handshake".
	for _, s := range []*side{a, b} {
		ps := s.dev.Stats().Peers[0]
		if !ps.LastHandshake.IsZero() || ps.Suite != 0 || ps.Handshakes != 0 {
			t.Errorf("%s: latest handshake %v, suite %v, handshakes %d; want none", ps.Name, ps.LastHandshake, ps.Suite, ps.Handshakes)
		}
	}
	// The responder received authenticated initiations: counted.
	if ps := b.dev.Stats().Peers[0]; ps.RxPackets == 0 || ps.RxBytes != ps.RxPackets*handshake.MessageInitiationSize {
		t.Errorf("responder rx = %d packets, %d bytes; want the initiations", ps.RxPackets, ps.RxBytes)
	}
}

// TestDiagnoseIDMismatch: a wrong SM2 ID for the peer is a key
// confirmation failure, logged with the peer's name and the ID hint.
func TestDiagnoseIDMismatch(t *testing.T) {
	clock := newFakeClock()
	a, _, logA, _ := diagPair(t, clock, func(p *PeerConfig) { p.ID = "not-the-peers-id" }, func(p *PeerConfig) { p.Endpoint = netip.AddrPort{} })
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 1, 64)
	waitFor(t, "the ID diagnostic", func() bool { return len(withCause(logA.records(t), "confirm_mismatch")) == 1 })
	r := withCause(logA.records(t), "confirm_mismatch")[0]
	if r["peer"] != "site-b" || !strings.Contains(r["hint"].(string), "id") {
		t.Errorf("diagnostic = %v", r)
	}
}

// TestDiagnoseNoCommonSuite: both sides log the refusal once, naming the
// peer (the old code logged the initiator's without a name, every retry).
func TestDiagnoseNoCommonSuite(t *testing.T) {
	clock := newFakeClock()
	a, b, logA, logB := diagPair(t, clock,
		func(p *PeerConfig) { p.Suites = []ciphers.SuiteID{ciphers.SM4GCM} },
		func(p *PeerConfig) { p.Suites = []ciphers.SuiteID{ciphers.ZUC256}; p.Endpoint = netip.AddrPort{} })
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 1, 64)
	waitFor(t, "both refusals", func() bool {
		return len(withCause(logA.records(t), "no_common_suite")) == 1 && len(withCause(logB.records(t), "no_common_suite")) == 1
	})
	for range 3 {
		step(clock, handshake.RekeyTimeout+handshake.MaxRekeyJitter, a.dev, b.dev)
	}
	ra, rb := withCause(logA.records(t), "no_common_suite"), withCause(logB.records(t), "no_common_suite")
	if len(ra) != 1 || len(rb) != 1 {
		t.Fatalf("refusal lines: initiator %d, responder %d; want one each", len(ra), len(rb))
	}
	if ra[0]["peer"] != "site-b" || rb[0]["peer"] != "site-a" || !strings.Contains(rb[0]["msg"].(string), "sm4-gcm") {
		t.Errorf("refusals: %v / %v", ra[0], rb[0])
	}
}

// TestDiagnoseNoAnswer: a peer that never answers is reported at info
// (the old code only logged at debug) once the attempt gives up.
func TestDiagnoseNoAnswer(t *testing.T) {
	clock := newFakeClock()
	var lines []string
	var mu sync.Mutex
	logf := func(f string, args ...any) {
		mu.Lock()
		lines = append(lines, strings.TrimSpace(strings.ReplaceAll(f, "%s", "")+" "+strings.TrimSpace(sprint(args))))
		mu.Unlock()
	}
	var ib *impairedBind
	a, b := newPair(t, pairOptions{clock: clock, wrapB: impair(&ib), logf: logf})
	ib.set(func(x *impairedBind) { x.dropType = handshake.MessageResponseType })
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 1, 64)
	step(clock, handshake.RekeyAttemptTime+handshake.RekeyTimeout+handshake.MaxRekeyJitter, a.dev, b.dev)
	var buf bytes.Buffer
	sl := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a.dev.log.Slog = sl // from here on: structured
	a.peer.diag.mu.Lock()
	a.peer.diag.seen = nil
	a.peer.diag.mu.Unlock()
	a.peer.diagnoseNoAnswer()
	mu.Lock()
	found := false
	for _, l := range lines {
		if strings.Contains(l, "peer(B) - no answer to handshake initiations") && strings.Contains(l, "(no_answer)") {
			found = true
		}
	}
	mu.Unlock()
	if !found {
		t.Errorf("no no_answer line from the give-up; lines:\n%s", strings.Join(lines, "\n"))
	}
	if out := buf.String(); !strings.Contains(out, "level=INFO") || !strings.Contains(out, "peer=B") || !strings.Contains(out, "cause=no_answer") {
		t.Errorf("structured no_answer line: %q", out)
	}
}

func sprint(args []any) string {
	var b strings.Builder
	for _, a := range args {
		if s, ok := a.(string); ok {
			b.WriteString(s + " ")
		}
	}
	return b.String()
}

// TestRxCountsHandshakes: rx_bytes and rx_packets include the handshake
// messages received, as docs/OPERATIONS.md says: the initiator that sent
// one packet (and got nothing back but the response) has received exactly
// the response.
func TestRxCountsHandshakes(t *testing.T) {
	clock := newFakeClock()
	a, b := newPair(t, pairOptions{clock: clock})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 64)})
	quiesce(a.dev, b.dev)
	ps := a.dev.Stats().Peers[0]
	if ps.RxPackets != 1 || ps.RxBytes != handshake.MessageResponseSize {
		t.Errorf("initiator rx = %d packets, %d bytes; want the response: 1, %d", ps.RxPackets, ps.RxBytes, handshake.MessageResponseSize)
	}
	if ps.LastHandshake.IsZero() || ps.Suite == 0 || ps.Handshakes != 1 {
		t.Errorf("initiator: %+v; want a session", ps)
	}
	sb := b.dev.Stats()
	pb := sb.Peers[0]
	if pb.RxPackets < 2 || pb.RxBytes < handshake.MessageInitiationSize {
		t.Errorf("responder rx = %d packets, %d bytes; want the initiation and the data at least", pb.RxPackets, pb.RxBytes)
	}
	// Every datagram a sent is counted once at b: received, or (the
	// confirm, when a's first data won the race) dropped as late.
	if sent, late := ps.TxPackets, sb.Drops["handshake_late"]; pb.RxPackets+late != sent {
		t.Errorf("a sent %d datagrams; b received %d and counted %d late: not every one counted once", sent, pb.RxPackets, late)
	}
	if pb.LastHandshake.IsZero() || pb.Handshakes != 1 {
		t.Errorf("responder: latest handshake %v, handshakes %d after the data confirmed the session", pb.LastHandshake, pb.Handshakes)
	}
}

// TestLinkLocalNotNoRoute: the kernel's IPv6 router solicitations and MLD
// reports on an idle TUN are counted as link_local, not no_route; a
// packet to an unrouted global address still is no_route.
func TestLinkLocalNotNoRoute(t *testing.T) {
	a, _ := newPair(t, pairOptions{})
	rs := ipPacket(netip.MustParseAddr("fe80::1"), netip.MustParseAddr("ff02::2"), 1, 8)
	mld := ipPacket(netip.MustParseAddr("fe80::1"), netip.MustParseAddr("ff02::16"), 2, 8)
	ll := ipPacket(netip.MustParseAddr("fe80::1"), netip.MustParseAddr("fe80::2"), 3, 8)
	v4 := ipPacket(netip.MustParseAddr("169.254.1.1"), netip.MustParseAddr("224.0.0.251"), 4, 8)
	other := ipPacket(addrA4, netip.MustParseAddr("10.9.9.9"), 5, 8)
	for _, p := range [][]byte{rs, mld, ll, v4, other} {
		a.tun.Outbound <- p
	}
	waitFor(t, "the drops", func() bool {
		d := a.dev.Stats().Drops
		return d["link_local"]+d["no_route"] == 5
	})
	if d := a.dev.Stats().Drops; d["link_local"] != 4 || d["no_route"] != 1 {
		t.Errorf("link_local %d, no_route %d; want 4 and 1", d["link_local"], d["no_route"])
	}
	for _, c := range []struct {
		dst  string
		want bool
	}{{"ff02::1", true}, {"ff01::1", true}, {"ff05::2", false}, {"fe80::1", true}, {"fec0::1", false},
		{"fd00::1", false}, {"169.254.0.1", true}, {"224.0.0.1", true}, {"224.0.1.1", false}, {"255.255.255.255", true}, {"10.0.0.1", false}} {
		a := netip.MustParseAddr(c.dst).AsSlice()
		if got := linkScoped(a); got != c.want {
			t.Errorf("linkScoped(%s) = %v, want %v", c.dst, got, c.want)
		}
	}
}

// TestDiagnoseRateLimit: one line per cause per DiagnosticInterval, each
// cause on its own, and the fallback text names the peer, hint and cause.
func TestDiagnoseRateLimit(t *testing.T) {
	clock := newFakeClock()
	var mu sync.Mutex
	var lines []string
	logf := func(f string, args ...any) {
		// Only lines with string arguments: the routines' start lines
		// ("Routine: timers - started") have none and may come late.
		line := strings.TrimSpace(sprint(args))
		if line == "" {
			return
		}
		mu.Lock()
		lines = append(lines, line)
		mu.Unlock()
	}
	a, _ := newPair(t, pairOptions{clock: clock, logf: logf})
	mu.Lock()
	lines = nil
	mu.Unlock()
	for range 5 {
		a.peer.diagnose(slog.LevelWarn, "x", "something failed", "check x")
		clock.Advance(time.Minute)
	}
	a.peer.diagnose(slog.LevelWarn, "y", "other failure", "")
	clock.Advance(DiagnosticInterval)
	a.peer.diagnose(slog.LevelWarn, "x", "something failed", "check x")
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"peer(B) - something failed: check x (x)",
		"peer(B) - other failure (y)",
		"peer(B) - something failed: check x (x, 4 more since the last report)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
