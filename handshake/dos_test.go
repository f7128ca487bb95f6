package handshake

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"
)

func TestCookieFlow(t *testing.T) {
	p := newPair(t, pairOpts{})
	src := mustAddrPort("198.51.100.7:4000")
	m1, _ := p.i.CreateInitiation(p.pi, t0)
	if v := p.r.Screen(m1[:], src, false, t0); v != VerdictAccept {
		t.Fatalf("not under load: %v", v)
	}
	if v := p.r.Screen(m1[:], src, true, t0); v != VerdictCookie {
		t.Fatalf("under load without mac2: %v", v)
	}
	if v := p.r.Screen(flip(m1[:], 10), src, true, t0); v != VerdictDrop {
		t.Fatalf("bad mac1 under load: %v", v)
	}
	if v := p.r.Screen(m1[:100], src, false, t0); v != VerdictDrop {
		t.Fatalf("truncated: %v", v)
	}
	cr, err := p.r.CreateCookieReply(m1[:], src, t0)
	if err != nil {
		t.Fatal(err)
	}
	// A cookie reply with a tampered nonce or for another index is refused.
	expectReject(t, "tampered cookie reply", p.i, p.iIdx, ErrCookieReply, func() error {
		_, err := p.i.ConsumeCookieReply(flip(cr[:], MessageCookieReplyOffsetNonce), t0)
		return err
	})
	expectReject(t, "cookie reply unknown index", p.i, p.iIdx, ErrUnknownIndex, func() error {
		_, err := p.i.ConsumeCookieReply(flip(cr[:], MessageCookieReplyOffsetReceiver+2), t0)
		return err
	})
	expectReject(t, "cookie reply truncated", p.i, p.iIdx, ErrMessageLength, func() error {
		_, err := p.i.ConsumeCookieReply(cr[:63], t0)
		return err
	})
	if peer, err := p.i.ConsumeCookieReply(cr[:], t0); err != nil || peer != p.pi {
		t.Fatalf("ConsumeCookieReply: %v", err)
	}
	// The retry carries mac2 and passes under load from the same source only.
	m1b, _ := p.i.CreateInitiation(p.pi, t0.Add(RekeyTimeout))
	if v := p.r.Screen(m1b[:], src, true, t0.Add(RekeyTimeout)); v != VerdictAccept {
		t.Fatalf("with cookie: %v", v)
	}
	other := mustAddrPort("198.51.100.7:4001")
	if v := p.r.Screen(m1b[:], other, true, t0.Add(RekeyTimeout)); v != VerdictCookie {
		t.Fatalf("other source port: %v", v)
	}
	// Cookie rotation: after CookieRefreshTime the responder's secret
	// changes and the old cookie no longer validates.
	late := t0.Add(CookieRefreshTime + time.Second)
	if v := p.r.Screen(m1b[:], src, true, late); v != VerdictCookie {
		t.Fatalf("after secret rotation: %v", v)
	}
	// And the initiator stops using a cookie older than 115 s.
	m1c, _ := p.i.CreateInitiation(p.pi, t0.Add(CookieRefreshTime-RekeyTimeout))
	if !slices.Equal(m1c[MessageInitiationOffsetMAC2:], make([]byte, macSize)) {
		t.Fatal("initiator used an expired cookie")
	}
}

func TestRateLimiter(t *testing.T) {
	r := NewRateLimiter(3)
	a := netip.MustParseAddr("203.0.113.1")
	now := t0
	for i := range RateLimitBurst {
		if !r.Allow(a, now) {
			t.Fatalf("burst packet %d refused", i)
		}
	}
	if r.Allow(a, now) {
		t.Fatal("packet beyond burst allowed")
	}
	if r.Allow(a, now.Add(time.Second/RateLimitPerSecond/2)) {
		t.Fatal("refilled too fast")
	}
	if !r.Allow(a, now.Add(time.Second/RateLimitPerSecond)) {
		t.Fatal("no refill after one interval")
	}
	// IPv6 sources share a bucket per /64; mapped IPv4 equals IPv4.
	v6a, v6b := netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::ffff:2")
	for range RateLimitBurst {
		r.Allow(v6a, now)
	}
	if r.Allow(v6b, now) {
		t.Fatal("same /64 not shared")
	}
	if r.Allow(netip.MustParseAddr("::ffff:203.0.113.1"), now.Add(time.Second/RateLimitPerSecond)) {
		t.Fatal("mapped IPv4 not the same source")
	}
	// Table full (3 sources): a new source is still admitted, by forgetting
	// the least recently seen one; the table never exceeds its bound.
	if !r.Allow(netip.MustParseAddr("203.0.113.2"), now) {
		t.Fatal("third source refused")
	}
	if !r.Allow(netip.MustParseAddr("203.0.113.3"), now.Add(time.Millisecond)) {
		t.Fatal("new source refused when the table is full")
	}
	if n := r.GC(now.Add(time.Millisecond)); n > 3 {
		t.Fatalf("table holds %d sources, bound 3", n)
	}
	if n := r.GC(now.Add(2 * time.Second)); n != 0 {
		t.Fatalf("GC left %d", n)
	}
}

// TestRateLimiterNotExhaustible: a flood of 100k distinct sources (as a
// spoofing attacker sends them) never makes the limiter refuse a source
// that stays within its rate, and the table stays within its bound. The
// limiter used to fail closed: once full, every new source was refused.
func TestRateLimiterNotExhaustible(t *testing.T) {
	const bound = 256
	r := NewRateLimiter(bound)
	legit := netip.MustParseAddr("198.18.9.9")
	fresh := netip.MustParseAddr("198.19.250.1") // first seen mid-flood
	now := t0
	for i := range 100_000 {
		now = now.Add(time.Microsecond)
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		r.Allow(a, now) // the attacker's own results do not matter
		if i%50_000 == 0 && !r.Allow(legit, now) {
			t.Fatalf("legitimate source refused at flood message %d", i)
		}
		if i == 70_000 && !r.Allow(fresh, now) {
			t.Fatal("a source first seen during the flood was refused")
		}
	}
	if n := r.GC(now); n > bound {
		t.Fatalf("table holds %d sources, bound %d", n, bound)
	}
	// Per-source fairness among proven sources: each has its own bucket.
	busy := netip.MustParseAddr("198.18.7.7")
	for range 100 {
		r.Allow(busy, now)
	}
	if r.Allow(busy, now) {
		t.Fatal("a source over its rate was allowed")
	}
	if !r.Allow(legit, now) {
		t.Fatal("one busy source used another's bucket")
	}
}

// TestScreenUnderLoadDoesNotAllocate: screening under load (mac1, then
// mac2 from a stateless cookie) runs on the receive path and must not
// allocate, for a garbage mac2 and for a valid one.
func TestScreenUnderLoadDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race (sync.Pool drops items)")
	}
	p := newPair(t, pairOpts{})
	src := mustAddrPort("198.51.100.7:4000")
	m1, _ := p.i.CreateInitiation(p.pi, t0)
	garbage := m1
	for i := range macSize {
		garbage[MessageInitiationOffsetMAC2+i] = byte(i + 1)
	}
	// garbage mac2 keeps a valid mac1: mac1 covers only the bytes before it.
	if v := p.r.Screen(garbage[:], src, true, t0); v != VerdictCookie {
		t.Fatalf("garbage mac2: %v", v)
	}
	cr, err := p.r.CreateCookieReply(m1[:], src, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.i.ConsumeCookieReply(cr[:], t0); err != nil {
		t.Fatal(err)
	}
	withMAC2, _ := p.i.CreateInitiation(p.pi, t0.Add(time.Second))
	if v := p.r.Screen(withMAC2[:], src, true, t0); v != VerdictAccept {
		t.Fatalf("valid mac2: %v", v)
	}
	for name, m := range map[string][]byte{"no mac2": m1[:], "garbage mac2": garbage[:], "valid mac2": withMAC2[:]} {
		if a := testing.AllocsPerRun(200, func() { p.r.Screen(m, src, true, t0) }); a != 0 {
			t.Errorf("Screen under load (%s) allocates %v times per message", name, a)
		}
	}
}

func TestLoadDetector(t *testing.T) {
	var d LoadDetector
	if d.UnderLoad(10, 1024, t0) {
		t.Fatal("light queue is load")
	}
	if !d.UnderLoad(128, 1024, t0) {
		t.Fatal("1/8 full is not load")
	}
	if !d.UnderLoad(0, 1024, t0.Add(UnderLoadDuration/2)) {
		t.Fatal("load state did not persist")
	}
	if d.UnderLoad(0, 1024, t0.Add(UnderLoadDuration)) {
		t.Fatal("load state persisted too long")
	}
}

func TestErrorsAreTyped(t *testing.T) {
	err := ErrMAC1
	var e *Error
	if !errors.As(error(err), &e) || e.Code != "mac1_bad" || err.Error() != "handshake: invalid mac1" {
		t.Fatal("Error type")
	}
	if Reason(errors.New("x")) != "other" {
		t.Fatal("Reason of foreign error")
	}
}
