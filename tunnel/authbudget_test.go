package tunnel

import (
	crand "crypto/rand"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
)

// countingKey wraps a receive Key and counts the tags it checks.
type countingKey struct {
	ciphers.Key
	checked, failed atomic.Int64
}

func (k *countingKey) Open(pkts [][]byte) ciphers.Mask {
	m := k.Key.Open(pkts)
	k.checked.Add(int64(len(pkts)))
	k.failed.Add(int64(len(pkts) - m.Count()))
	return m
}

// forged returns n data packets for receiver index idx with random
// bodies and tags, counters from c0.
func forged(idx uint32, c0 uint64, n, body int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		p := rawData(idx, c0+uint64(i), body)
		_, _ = crand.Read(p[ciphers.HeaderSize:])
		out[i] = p
	}
	return out
}

// inject sends pkts from a's raw bind to b in vectors of MaxBatch.
func inject(t *testing.T, a, b *side, pkts [][]byte) {
	t.Helper()
	for len(pkts) > 0 {
		n := min(len(pkts), ciphers.MaxBatch)
		if err := a.raw.Send(pkts[:n], b.raw.LocalEndpoint()); err != nil {
			t.Fatal(err)
		}
		pkts = pkts[n:]
	}
}

// sealed returns an authentic data packet carrying inner under kp's send
// key, with the next counter.
func sealed(t *testing.T, kp *keypair, inner []byte) []byte {
	t.Helper()
	c := kp.sendCounter.Add(1) - 1
	p := rawData(kp.remoteIndex, c, len(inner))
	copy(p[ciphers.HeaderSize:], inner)
	p = append(p, make([]byte, ciphers.MaxTagSize)...)[:len(p)]
	batch := [][]byte{p}
	if err := kp.send.Seal(batch); err != nil {
		t.Fatal(err)
	}
	return batch[0]
}

func dropSum(d *Device, reasons ...string) uint64 {
	st := d.Stats()
	var n uint64
	for _, r := range reasons {
		n += st.Drops[r]
	}
	return n
}

// TestZUC128ForgeryBurstBudget sends a burst of 6000 forged zuc-128
// packets, then one authentic packet of the same keypair: at most the
// keypair's budget of forged tags may be checked (the count is reserved
// where the tags are verified, not where packets are classified), the
// authentic packet placed after the exhaustion is never delivered, and
// the session continues on a new keypair.
func TestZUC128ForgeryBurstBudget(t *testing.T) {
	goroutineLeakCheck(t)
	a, b := newPair(t, pairOptions{suites: []ciphers.SuiteID{ciphers.ZUC128}})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 64)})
	kpA := a.peer.sendKP.Load()
	kpB := b.dev.indices.lookup(kpA.remoteIndex)
	if kpB == nil {
		t.Fatal("B has no keypair for A's index")
	}
	ck := &countingKey{Key: kpB.recv}
	kpB.recv = ck
	budget := int64(ciphers.ZUC128.Params().MaxAuthFailures)

	const burst = 6000
	inject(t, a, b, forged(kpA.remoteIndex, 1000, burst, 40))
	const seq = 424242
	inject(t, a, b, [][]byte{sealed(t, kpA, ipPacket(addrA4, addrB4, seq, 64))})

	refused := []string{"auth_failed", "auth_budget", "unknown_index", "expired_keypair"}
	waitFor(t, "the burst to be accounted", func() bool { return dropSum(b.dev, refused...) >= burst })
	time.Sleep(100 * time.Millisecond)
	if f := ck.failed.Load(); f > budget {
		t.Errorf("%d forged tags checked under one receive key, budget %d", f, budget)
	}
	if f := b.dev.Stats().Drops["auth_failed"]; f > uint64(budget) {
		t.Errorf("auth_failed = %d, budget %d", f, budget)
	}
	if got := dropSum(b.dev, refused...); got != burst+1 {
		t.Errorf("refused %d packets, want the %d forged and the authentic one after them; stats %s", got, burst, statsString(b.dev))
	}
	for {
		select {
		case p := <-b.tun.Inbound:
			if packetSeq(t, p) == seq {
				t.Fatal("an authentic packet after the exhausted budget was delivered")
			}
			continue
		default:
		}
		break
	}
	// Rekey and continue.
	waitFor(t, "new keypair", func() bool {
		kp := a.peer.sendKP.Load()
		return kp != nil && kp != kpA
	})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 2, 64)})
}

// TestPeerForgeryBudgetSurvivesRekeys exhausts keypair after keypair of a
// zuc-128 session: the per-peer budget is not reset by the rekeys, so the
// failed tags charged to the peer stay within peerAuthBurst (no refill on
// the test's frozen clock); when it runs dry zuc-128 is refused with the
// peer, the trip is counted, and the session continues on sm4-gcm.
func TestPeerForgeryBudgetSurvivesRekeys(t *testing.T) {
	goroutineLeakCheck(t)
	suites := []ciphers.SuiteID{ciphers.ZUC128, ciphers.SM4GCM}
	clock := newFakeClock()
	a, b := newPair(t, pairOptions{suites: suites, clock: clock})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 64)})
	budget := int(ciphers.ZUC128.Params().MaxAuthFailures)
	var checked int64
	rounds := 0
	for ; rounds < 6; rounds++ {
		kpA := a.peer.sendKP.Load()
		if kpA.suite != ciphers.ZUC128 {
			break
		}
		kpB := b.dev.indices.lookup(kpA.remoteIndex)
		if kpB == nil {
			t.Fatalf("round %d: B has no keypair for A's index", rounds)
		}
		ck := &countingKey{Key: kpB.recv}
		kpB.recv = ck
		clock.Advance(handshake.RekeyTimeout + time.Second) // lets B start the rekey
		inject(t, a, b, forged(kpA.remoteIndex, 1<<20, budget+200, 40))
		waitFor(t, "the keypair to be discarded", func() bool { return b.dev.indices.lookup(kpA.remoteIndex) == nil })
		waitFor(t, "new keypair", func() bool {
			kp := a.peer.sendKP.Load()
			return kp != nil && kp != kpA
		})
		checked += ck.failed.Load()
	}
	bud := b.peer.authBudget
	if f := bud.failures.Load(); f > peerAuthBurst || checked > peerAuthBurst {
		t.Errorf("%d failed tags charged (%d counted) to the peer across %d keypairs; the budget is %d", f, checked, rounds, peerAuthBurst)
	}
	if rounds < 2 {
		t.Errorf("the budget tripped after %d keypairs; each keypair alone may spend %d of the peer's %d", rounds, budget, peerAuthBurst)
	}
	if bud.trips.Load() != 1 {
		t.Errorf("trips = %d, want 1", bud.trips.Load())
	}
	if b.dev.Stats().Drops["auth_budget"] == 0 {
		t.Error("no auth_budget drops counted")
	}
	if got := a.peer.sendKP.Load().suite; got != ciphers.SM4GCM {
		t.Fatalf("session continued on %v, want sm4-gcm while zuc-128 is refused", got)
	}
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 2, 64)})
	sendExpect(t, b, a, [][]byte{ipPacket(addrB4, addrA4, 3, 64)})
	if ps := b.dev.Stats().Peers[0]; ps.AuthBudgetTrips != 1 {
		t.Errorf("PeerStats.AuthBudgetTrips = %d, want 1", ps.AuthBudgetTrips)
	}
}

// TestKeypairWipedWhenUnreachable checks that a retired keypair's keys are
// wiped only when its last container reference goes, and that the timers
// retire keypairs after ZeroKeysAfter.
func TestKeypairWipedWhenUnreachable(t *testing.T) {
	goroutineLeakCheck(t)
	clock := newFakeClock()
	a, b := newPair(t, pairOptions{suites: []ciphers.SuiteID{ciphers.SM4GCM}, clock: clock})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 64)})
	kpA := a.peer.sendKP.Load()
	sealOK := func(kp *keypair) bool {
		p := rawData(kp.remoteIndex, 1<<30, 32)
		p = append(p, make([]byte, ciphers.MaxTagSize)...)[:len(p)]
		return kp.send.Seal([][]byte{p}) == nil
	}
	kpB := b.dev.indices.lookup(kpA.remoteIndex)
	authentic := sealed(t, kpA, ipPacket(addrA4, addrB4, 9, 64))
	opens := func() bool {
		p := append([]byte(nil), authentic...)
		m := kpB.recv.Open([][]byte{p})
		return m.Count() == 1
	}
	if !opens() {
		t.Fatal("B cannot open an authentic packet before the test")
	}
	if !kpA.acquire() {
		t.Fatal("acquire of a live keypair failed")
	}
	// 540 s without a handshake: the timers clear every keypair.
	for range 6 {
		clock.Advance(100 * time.Second)
		a.peer.expireTimers(clock.Now())
		b.peer.expireTimers(clock.Now())
	}
	if !kpA.retired.Load() || !kpB.retired.Load() {
		t.Fatal("keypairs not retired after ZeroKeysAfter")
	}
	if !sealOK(kpA) {
		t.Fatal("keys wiped while a container still held the keypair")
	}
	kpA.release()
	// In-flight containers (the packet just delivered) drop their
	// references soon after.
	waitFor(t, "A's retired keypair to be wiped", kpA.wiped.Load)
	waitFor(t, "B's retired keypair to be wiped", kpB.wiped.Load)
	if sealOK(kpA) {
		t.Fatal("the send key of an unreachable keypair still seals: not wiped")
	}
	if opens() {
		t.Fatal("the receive key of an unreachable keypair still opens: not wiped")
	}
	if kpA.acquire() {
		t.Fatal("a wiped keypair could be acquired again")
	}
}

// TestZUC128NotAcceptedByDefault: a device whose configuration names no
// suites refuses a peer that offers only zuc-128.
func TestZUC128NotAcceptedByDefault(t *testing.T) {
	goroutineLeakCheck(t)
	clock := newFakeClock()
	a, b := newPair(t, pairOptions{clock: clock}) // no suites: the defaults
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 64)})
	if s := a.peer.sendKP.Load().suite; s == ciphers.ZUC128 {
		t.Fatal("default suites negotiated zuc-128")
	}
	// A now insists on zuc-128; B keeps its defaults.
	if err := a.dev.SetPeers([]PeerConfig{{
		Name: "B", PublicKey: b.key.Public(), Endpoint: netip.AddrPort(b.raw.LocalEndpoint()),
		AllowedIPs: netB, Roaming: true, Suites: []ciphers.SuiteID{ciphers.ZUC128},
	}}); err != nil {
		t.Fatal(err)
	}
	a.dev.peersMu.RLock()
	pa := a.dev.peerList[0]
	a.dev.peersMu.RUnlock()
	clock.Advance(time.Second) // a fresh initiation timestamp
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 2, 64)
	waitFor(t, "B's refusal", func() bool { return a.dev.Stats().HandshakeInvalid["no_common_suite"] > 0 })
	if kp := pa.sendKP.Load(); kp != nil {
		t.Fatalf("a %v keypair was installed", kp.suite)
	}
	select {
	case p := <-b.tun.Inbound:
		t.Fatalf("B delivered a packet (seq %d) without a common suite", packetSeq(t, p))
	case <-time.After(50 * time.Millisecond):
	}
}
