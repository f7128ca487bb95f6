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
	// Table full (3 sources): a new source is refused until GC frees room.
	if r.Allow(netip.MustParseAddr("203.0.113.2"), now) != true {
		t.Fatal("third source refused")
	}
	if r.Allow(netip.MustParseAddr("203.0.113.3"), now) {
		t.Fatal("table grew beyond its bound")
	}
	if n := r.GC(now.Add(2 * time.Second)); n != 0 {
		t.Fatalf("GC left %d", n)
	}
	if !r.Allow(netip.MustParseAddr("203.0.113.3"), now.Add(2*time.Second)) {
		t.Fatal("refused after GC")
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
