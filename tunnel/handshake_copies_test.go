package tunnel

import (
	"net/netip"
	"testing"

	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio/netiotest"
)

// TestLostResponseAnsweredAgain: when the responder's response is lost,
// the initiator's identical retransmission gets the same response again,
// so the handshake completes after FastRetransmitInterval instead of the
// RekeyTimeout retry, and neither side counts a failure.
func TestLostResponseAnsweredAgain(t *testing.T) {
	goroutineLeakCheck(t)
	clock := newFakeClock()
	var ia, ib *impairedBind
	a, b := newPair(t, pairOptions{clock: clock, wrapA: impair(&ia), wrapB: impair(&ib)})
	var resp []byte
	ib.set(func(x *impairedBind) {
		x.dropNextOf, x.dropNextN = handshake.MessageResponseType, 1
		x.onSend = func(p []byte) {
			if p[0] == handshake.MessageResponseType {
				resp = append([]byte(nil), p...)
			}
		}
	})
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 1, 64)
	waitFor(t, "the first response (dropped)", func() bool {
		ib.mu.Lock()
		defer ib.mu.Unlock()
		return ib.dropNextN == 0
	})
	if a.peer.sendKP.Load() != nil {
		t.Fatal("a keypair without any response delivered")
	}
	step(clock, FastRetransmitInterval, a.dev, b.dev)
	waitFor(t, "keypair after the retransmission", func() bool { return a.peer.sendKP.Load() != nil })
	waitFor(t, "b confirming", func() bool { return b.peer.sendKP.Load() != nil })
	if got := ia.sentOf(handshake.MessageInitiationType); got != 2 {
		t.Errorf("a sent %d initiations, want the original and one copy", got)
	}
	if got := ib.sentOf(handshake.MessageResponseType); got != 1 {
		t.Errorf("%d responses delivered, want 1 (the one answering the copy)", got)
	}
	sa, sb := a.dev.Stats(), b.dev.Stats()
	if got := sa.Peers[0].InitiationRetransmits; got != 1 {
		t.Errorf("a: InitiationRetransmits = %d, want 1", got)
	}
	if got := sb.Peers[0].ResponseRetransmits; got != 1 {
		t.Errorf("b: ResponseRetransmits = %d, want 1", got)
	}
	for name, s := range map[string]Stats{"a": sa, "b": sb} {
		if len(s.HandshakeInvalid) != 0 {
			t.Errorf("%s counted handshake failures: %v", name, s.HandshakeInvalid)
		}
	}

	// A second copy of the response (the network or the responder sent
	// it twice) is late and harmless, on the receive path (a queued one
	// is also checked by the handshake worker): no failure counted.
	ib.mu.Lock()
	late := resp
	ib.mu.Unlock()
	a.dev.queueHandshake(late, b.raw.LocalEndpoint())
	a.dev.handleHandshake(late, b.raw.LocalEndpoint())
	if got := a.dev.Stats().HandshakeInvalid; len(got) != 0 {
		t.Errorf("a second copy of the response counted as a failure: %v", got)
	}
	if got := a.dev.Stats().Drops["handshake_late"]; got != 2 {
		t.Errorf("handshake_late = %d after two late responses, want 2", got)
	}

	// The same copy once the keypair is confirmed is a replay: refused,
	// not answered, and counted as one.
	b.peer.hsMu.Lock()
	replay := b.peer.answered.init
	b.peer.hsMu.Unlock()
	b.dev.handleHandshake(replay[:], a.raw.LocalEndpoint())
	settle(ia, ib)
	if got := ib.sentOf(handshake.MessageResponseType); got != 1 {
		t.Errorf("a replay after confirmation was answered (%d responses)", got)
	}
	if got := b.dev.Stats().HandshakeInvalid["stale_timestamp"]; got != 1 {
		t.Errorf("stale_timestamp = %d after a replay, want 1", got)
	}
}

// TestAnsweredCopyLimits: a copy of an answered initiation is answered
// again only from the original's source address and at most
// MaxFastRetransmits times; every other copy is refused as stale, and
// each answer is the response already sent, byte for byte.
func TestAnsweredCopyLimits(t *testing.T) {
	goroutineLeakCheck(t)
	clock := newFakeClock()
	var ia, ib *impairedBind
	a, b := newPair(t, pairOptions{clock: clock, wrapA: impair(&ia), wrapB: impair(&ib)})
	ib.set(func(x *impairedBind) { x.dropType = handshake.MessageResponseType })
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 1, 64)
	var init [handshake.MessageInitiationSize]byte
	var resp [handshake.MessageResponseSize]byte
	waitFor(t, "b answering the initiation", func() bool {
		b.peer.hsMu.Lock()
		defer b.peer.hsMu.Unlock()
		init, resp = b.peer.answered.init, b.peer.answered.resp
		return b.peer.answered.valid
	})
	// Responses are still dropped (a must not complete the handshake, or
	// the copies would be refused as replays of a confirmed one); b's
	// bind shows what it sends.
	got := make(chan []byte, 8)
	ib.set(func(x *impairedBind) {
		x.onSend = func(p []byte) {
			if p[0] == handshake.MessageResponseType {
				got <- append([]byte(nil), p...)
			}
		}
	})

	stale := func() uint64 { return b.dev.Stats().HandshakeInvalid["stale_timestamp"] }
	answered := func() uint64 { return b.dev.Stats().Peers[0].ResponseRetransmits }

	elsewhere := netiotest.ChannelEndpoint(netip.MustParseAddrPort("198.18.0.99:51820"))
	b.dev.handleHandshake(init[:], elsewhere)
	if stale() != 1 || answered() != 0 {
		t.Fatalf("a copy from another address: stale %d, answered %d; want 1, 0", stale(), answered())
	}
	for i := range MaxFastRetransmits {
		b.dev.handleHandshake(init[:], a.raw.LocalEndpoint())
		if answered() != uint64(i+1) {
			t.Fatalf("copy %d from the original address not answered", i+1)
		}
		if m := <-got; string(m) != string(resp[:]) {
			t.Fatalf("copy %d answered with other bytes than the response", i+1)
		}
	}
	b.dev.handleHandshake(init[:], a.raw.LocalEndpoint())
	if stale() != 2 || answered() != MaxFastRetransmits {
		t.Fatalf("a copy beyond %d: stale %d, answered %d", MaxFastRetransmits, stale(), answered())
	}
}
