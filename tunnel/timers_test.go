package tunnel

import (
	"net/netip"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
)

// step advances the clock by d in increments of at most 1 s, running the
// devices' timers after each and letting the packets they cause settle
// before the clock moves on (the fake clock does not wait for real work).
func step(clock *fakeClock, d time.Duration, devs ...*Device) {
	for d > 0 {
		s := min(d, time.Second)
		clock.Advance(s)
		d -= s
		for _, dev := range devs {
			dev.timerTick()
		}
		quiesce(devs...)
	}
}

// quiesce waits until the devices' packet counters stop moving and their
// handshake queues are empty.
func quiesce(devs ...*Device) {
	sum := func() (n uint64) {
		for _, d := range devs {
			st := d.Stats()
			for _, p := range st.Peers {
				n += p.RxPackets + p.TxPackets
			}
			for _, v := range st.Drops {
				n += v
			}
			n += uint64(d.handshakeQueued())
		}
		return n
	}
	last := sum()
	for {
		time.Sleep(3 * time.Millisecond)
		now := sum()
		if now == last {
			return
		}
		last = now
	}
}

// settle waits until no datagram moved for a while.
func settle(ibs ...*impairedBind) {
	total := func() (n int) {
		for _, ib := range ibs {
			ib.mu.Lock()
			for _, v := range ib.sent {
				n += v
			}
			ib.mu.Unlock()
		}
		return n
	}
	last := total()
	for {
		time.Sleep(30 * time.Millisecond)
		now := total()
		if now == last {
			return
		}
		last = now
	}
}

func TestRekeyKeepsTrafficFlowing(t *testing.T) {
	for _, suite := range ciphers.Suites {
		t.Run(suite.String(), func(t *testing.T) {
			goroutineLeakCheck(t)
			clock := newFakeClock()
			var ia *impairedBind
			a, b := newPair(t, pairOptions{suites: []ciphers.SuiteID{suite}, clock: clock, wrapA: impair(&ia)})
			sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 0, 64)})
			kp1 := a.peer.sendKP.Load()
			seq := uint64(1)
			batch := func() [][]byte {
				p := mixedPackets(addrA4, addrB4, addrA6, addrB6, 40, seq)
				seq += 40
				return p
			}
			sendExpect(t, a, b, batch())
			step(clock, handshake.RekeyAfterTime+time.Second, a.dev, b.dev)
			initiations := ia.sentOf(handshake.MessageInitiationType)
			// Sending with a keypair past RekeyAfterTime starts a handshake;
			// packets keep flowing on the old keypair meanwhile.
			sendExpect(t, a, b, batch())
			waitFor(t, "rekey", func() bool { return a.peer.sendKP.Load() != kp1 })
			if got := ia.sentOf(handshake.MessageInitiationType); got != initiations+1 {
				t.Fatalf("initiations sent = %d, want %d", got, initiations+1)
			}
			kp2 := a.peer.sendKP.Load()
			sendExpect(t, a, b, batch())
			sendExpect(t, b, a, mixedPackets(addrB4, addrA4, addrB6, addrA6, 40, 0))
			waitFor(t, "responder switch", func() bool {
				kp := b.peer.sendKP.Load()
				return kp != nil && kp.remoteIndex == kp2.localIndex
			})
			// Past RejectAfterTime of the first keypair it is gone, traffic
			// continues on the second.
			step(clock, handshake.RejectAfterTime-handshake.RekeyAfterTime, a.dev, b.dev)
			if a.dev.indices.lookup(kp1.localIndex) != nil {
				t.Fatal("expired keypair still indexed")
			}
			sendExpect(t, a, b, batch())
			sendExpect(t, b, a, mixedPackets(addrB4, addrA4, addrB6, addrA6, 40, 100))
			if d := b.dev.Stats().Drops; d["replay"]+d["auth_failed"]+d["unknown_index"] != 0 {
				t.Fatalf("drops during rekey: %v", d)
			}
		})
	}
}

func TestTimers(t *testing.T) {
	goroutineLeakCheck(t)
	clock := newFakeClock()
	var ia, ib *impairedBind
	a, b := newPair(t, pairOptions{suites: []ciphers.SuiteID{ciphers.SM4GCM}, clock: clock, wrapA: impair(&ia), wrapB: impair(&ib)})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 0, 64)})
	settle(ia, ib)

	// Passive keepalive: B received data and sent nothing; after
	// KeepaliveTimeout it sends one empty packet, once.
	rxA := a.dev.Stats().Peers[0].RxPackets
	step(clock, handshake.KeepaliveTimeout+time.Second, a.dev, b.dev)
	waitFor(t, "passive keepalive", func() bool { return a.dev.Stats().Peers[0].RxPackets == rxA+1 })

	// Silent when idle: nothing at all for a long stretch (keypairs expire
	// silently).
	settle(ia, ib)
	before := [2]int{ia.sentOf(MessageDataType) + ia.sentOf(handshake.MessageInitiationType), ib.sentOf(MessageDataType) + ib.sentOf(handshake.MessageInitiationType)}
	step(clock, 5*time.Minute, a.dev, b.dev)
	settle(ia, ib)
	after := [2]int{ia.sentOf(MessageDataType) + ia.sentOf(handshake.MessageInitiationType), ib.sentOf(MessageDataType) + ib.sentOf(handshake.MessageInitiationType)}
	if before != after {
		t.Fatalf("idle devices sent datagrams: before %v, after %v", before, after)
	}
	if a.peer.sendKP.Load() != nil || b.peer.sendKP.Load() != nil {
		t.Fatal("keypairs outlived RejectAfterTime")
	}
	// Traffic after expiry starts a fresh handshake.
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 64)})

	// Data sent without an answer for KeepaliveTimeout+RekeyTimeout: new
	// handshake.
	ib.set(func(x *impairedBind) { x.dropType = MessageDataType })
	settle(ia, ib)
	inits := ia.sentOf(handshake.MessageInitiationType)
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 2, 64)})
	step(clock, handshake.KeepaliveTimeout+handshake.RekeyTimeout+time.Second, a.dev, b.dev)
	waitFor(t, "handshake after unanswered data", func() bool { return ia.sentOf(handshake.MessageInitiationType) > inits })
	ib.set(func(x *impairedBind) { x.dropType = 0 })

	// Zeroing: no handshake for ZeroKeysAfter wipes everything.
	settle(ia, ib)
	step(clock, handshake.ZeroKeysAfter+time.Second, a.dev, b.dev)
	settle(ia, ib)
	for _, s := range []*side{a, b} {
		if s.peer.sendKP.Load() != nil || s.dev.indices.len() != 0 {
			t.Fatalf("keys left after ZeroKeysAfter: %d indices", s.dev.indices.len())
		}
	}
}

func TestHandshakeRetryAndGiveUp(t *testing.T) {
	goroutineLeakCheck(t)
	clock := newFakeClock()
	var ia, ib *impairedBind
	a, b := newPair(t, pairOptions{clock: clock, wrapA: impair(&ia), wrapB: impair(&ib)})
	ib.set(func(x *impairedBind) { x.dropType = handshake.MessageResponseType })
	for i := range 10 {
		a.tun.Outbound <- ipPacket(addrA4, addrB4, uint64(i), 64)
	}
	waitFor(t, "first initiation", func() bool { return ia.sentOf(handshake.MessageInitiationType) == 1 })
	// Each attempt is sent 1+MaxFastRetransmits times: the initiation and
	// its identical copies, then the fresh initiation of the retry.
	const perAttempt = 1 + MaxFastRetransmits
	step(clock, handshake.RekeyTimeout+handshake.MaxRekeyJitter, a.dev, b.dev)
	waitFor(t, "retry", func() bool { return ia.sentOf(handshake.MessageInitiationType) == perAttempt+1 })
	// b consumed the first initiation and answers the copies again (the
	// responses are all lost); each side reports the copies it sent.
	if got := a.dev.Stats().Peers[0].InitiationRetransmits; got != MaxFastRetransmits {
		t.Errorf("InitiationRetransmits = %d after one attempt, want %d", got, MaxFastRetransmits)
	}
	waitFor(t, "b answering the copies", func() bool {
		return b.dev.Stats().Peers[0].ResponseRetransmits == MaxFastRetransmits
	})
	if got := b.dev.Stats().HandshakeInvalid; len(got) != 0 {
		t.Errorf("b counted handshake failures for the copies: %v", got)
	}
	step(clock, handshake.RekeyAttemptTime, a.dev, b.dev)
	settle(ia, ib)
	n := ia.sentOf(handshake.MessageInitiationType)
	if want := handshake.MaxHandshakeAttempts * perAttempt; n < want-2*perAttempt || n > want+2*perAttempt {
		t.Fatalf("%d initiations in RekeyAttemptTime, want about %d", n, want)
	}
	if got := a.dev.Stats().Drops["no_keypair_staged_overflow"]; got != 10 {
		t.Fatalf("staged packets dropped on give-up = %d, want 10", got)
	}
	step(clock, time.Minute, a.dev, b.dev)
	settle(ia, ib)
	if got := ia.sentOf(handshake.MessageInitiationType); got != n {
		t.Fatalf("initiations after giving up: %d → %d", n, got)
	}
}

// TestLostInitiationRetransmitted: a lost initiation is sent again
// (identical bytes) after FastRetransmitInterval, so the handshake completes
// within about a second and a quarter instead of the 5 s retry.
func TestLostInitiationRetransmitted(t *testing.T) {
	goroutineLeakCheck(t)
	clock := newFakeClock()
	var ia, ib *impairedBind
	a, b := newPair(t, pairOptions{clock: clock, wrapA: impair(&ia), wrapB: impair(&ib)})
	ia.set(func(x *impairedBind) { x.dropNextOf, x.dropNextN = handshake.MessageInitiationType, 1 })
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 1, 64)
	waitFor(t, "the first initiation (dropped)", func() bool {
		ia.mu.Lock()
		defer ia.mu.Unlock()
		return ia.dropNextN == 0
	})
	if a.peer.sendKP.Load() != nil {
		t.Fatal("a keypair without any initiation delivered")
	}
	step(clock, FastRetransmitInterval, a.dev, b.dev)
	waitFor(t, "keypair after the retransmission", func() bool { return a.peer.sendKP.Load() != nil })
	if got := ia.sentOf(handshake.MessageInitiationType); got != 1 {
		t.Errorf("%d initiations delivered, want 1 (the retransmitted copy)", got)
	}
}

func TestPersistentKeepalive(t *testing.T) {
	goroutineLeakCheck(t)
	clock := newFakeClock()
	var ia, ib *impairedBind
	a, b := newPair(t, pairOptions{clock: clock, wrapA: impair(&ia), wrapB: impair(&ib), keepalive: 25 * time.Second, logf: t.Logf})
	// Up with a persistent keepalive sends one (after a handshake).
	waitFor(t, "keypair", func() bool { return a.peer.sendKP.Load() != nil && b.peer.sendKP.Load() != nil })
	settle(ia, ib)
	d0 := ia.sentOf(MessageDataType)
	step(clock, 24*time.Second, a.dev, b.dev)
	settle(ia, ib)
	if ia.sentOf(MessageDataType) != d0 {
		t.Fatal("keepalive before its interval")
	}
	step(clock, 2*time.Second, a.dev, b.dev)
	waitFor(t, "persistent keepalive", func() bool { return ia.sentOf(MessageDataType) == d0+1 })
}

func TestSetPeersSyncconf(t *testing.T) {
	goroutineLeakCheck(t)
	var ia *impairedBind
	a, b := newPair(t, pairOptions{wrapA: impair(&ia)})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 0, 64)})
	p, kp := a.peer, a.peer.sendKP.Load()
	inits := ia.sentOf(handshake.MessageInitiationType)
	extra := netip.MustParsePrefix("10.0.3.0/24")
	cfg := PeerConfig{Name: "B2", PublicKey: b.key.Public(), Endpoint: netip.AddrPort(b.raw.LocalEndpoint()),
		AllowedIPs: append([]netip.Prefix{extra}, netB...), Roaming: true}
	if err := a.dev.SetPeers([]PeerConfig{cfg}); err != nil {
		t.Fatal(err)
	}
	if a.dev.peerList[0] != p || p.sendKP.Load() != kp {
		t.Fatal("unchanged session was reset")
	}
	if st := a.dev.Stats().Peers[0]; st.Name != "B2" || len(st.AllowedIPs) != 3 {
		t.Fatalf("stats after update: %+v", st)
	}
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 64)})
	if ia.sentOf(handshake.MessageInitiationType) != inits {
		t.Fatal("update started a handshake")
	}
	// Overlapping prefixes are refused and change nothing.
	bad := cfg
	bad.Name = "X"
	bad.PublicKey = genKey(t).Public()
	bad.AllowedIPs = []netip.Prefix{netip.MustParsePrefix("10.0.2.128/25")}
	if err := a.dev.SetPeers([]PeerConfig{cfg, bad}); err == nil {
		t.Fatal("overlapping AllowedIPs accepted")
	}
	// A new PSK on both sides replaces the session.
	psk := [32]byte{1, 2, 3}
	cfg.PSK = &psk
	if err := a.dev.SetPeers([]PeerConfig{cfg}); err != nil {
		t.Fatal(err)
	}
	bcfg := PeerConfig{Name: "A", PublicKey: a.key.Public(), Endpoint: netip.AddrPort(a.raw.LocalEndpoint()), AllowedIPs: netA, PSK: &psk, Roaming: true}
	if err := b.dev.SetPeers([]PeerConfig{bcfg}); err != nil {
		t.Fatal(err)
	}
	if a.dev.peerList[0] == p {
		t.Fatal("PSK change kept the old session")
	}
	a.peer, b.peer = a.dev.peerList[0], b.dev.peerList[0]
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 2, 64)})
	sendExpect(t, b, a, [][]byte{ipPacket(addrB4, addrA4, 3, 64)})
	// Removing the peer: packets have no route.
	if err := a.dev.SetPeers(nil); err != nil {
		t.Fatal(err)
	}
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 4, 64)
	waitFor(t, "no_route", func() bool { return a.dev.Stats().Drops["no_route"] == 1 })
	if n := len(a.dev.Stats().Peers); n != 0 {
		t.Fatalf("%d peers after removal", n)
	}
}
