package tunnel

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
)

// drainQuiet collects packets from s's TUN until none arrives for quiet.
func drainQuiet(s *side, quiet time.Duration) [][]byte {
	var got [][]byte
	for {
		select {
		case p := <-s.tun.Inbound:
			got = append(got, p)
		case <-time.After(quiet):
			return got
		}
	}
}

func TestReorderLossDuplication(t *testing.T) {
	for _, suite := range ciphers.Suites {
		t.Run(suite.String(), func(t *testing.T) {
			goroutineLeakCheck(t)
			var ib *impairedBind
			a, b := newPair(t, pairOptions{suites: []ciphers.SuiteID{suite}, wrapA: impair(&ib)})
			sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1<<40, 64)})
			ib.set(func(b *impairedBind) {
				b.rng = rand.New(rand.NewPCG(1, uint64(suite)))
				b.dropP, b.dupP, b.reorder = 0.05, 0.10, true
				b.sentData, b.droppedN, b.duplicatedN = 0, 0, 0
			})
			const n = 2000
			pkts := mixedPackets(addrA4, addrB4, addrA6, addrB6, n, 0)
			go func() {
				for _, p := range pkts {
					a.tun.Outbound <- p
				}
			}()
			got := drainQuiet(b, 500*time.Millisecond)
			seen := make(map[uint64]bool)
			for _, p := range got {
				seq := packetSeq(t, p)
				if seen[seq] {
					t.Fatalf("packet %d delivered twice", seq)
				}
				seen[seq] = true
				if seq >= n || string(p) != string(pkts[seq]) {
					t.Fatalf("packet %d corrupted", seq)
				}
			}
			ib.mu.Lock()
			sent, dropped, dup := ib.sentData, ib.droppedN, ib.duplicatedN
			ib.mu.Unlock()
			if sent != n || dropped == 0 || dup == 0 {
				t.Fatalf("impairment did not happen: sent %d, dropped %d, duplicated %d", sent, dropped, dup)
			}
			if len(got) != n-dropped {
				t.Errorf("delivered %d packets, want %d (sent %d, dropped %d)", len(got), n-dropped, n, dropped)
			}
			if r := b.dev.Stats().Drops["replay"]; r != uint64(dup) {
				t.Errorf("replay drops = %d, want the %d duplicates", r, dup)
			}
		})
	}
}

// rawData builds a data packet header with the given index and counter,
// followed by body bytes.
func rawData(index uint32, counter uint64, body int) []byte {
	p := make([]byte, ciphers.HeaderSize+body)
	p[0], p[1] = MessageDataType, ProtocolVersion
	binary.LittleEndian.PutUint32(p[4:], index)
	binary.LittleEndian.PutUint64(p[8:], counter)
	return p
}

func TestDropCounters(t *testing.T) {
	goroutineLeakCheck(t)
	var ib *impairedBind
	a, b := newPair(t, pairOptions{suites: []ciphers.SuiteID{ciphers.SM4GCM}, wrapA: impair(&ib)})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 64)})
	good := func(seq uint64) { sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, seq, 200)}) }
	wantDrop := func(s *side, reason string, want uint64) {
		t.Helper()
		waitFor(t, reason, func() bool { return s.dev.Stats().Drops[reason] >= want })
		if got := s.dev.Stats().Drops[reason]; got != want {
			t.Fatalf("%s = %d, want %d", reason, got, want)
		}
	}
	inject := func(pkt []byte) {
		t.Helper()
		if err := a.raw.Send([][]byte{pkt}, b.raw.LocalEndpoint()); err != nil {
			t.Fatal(err)
		}
	}
	kp := a.peer.sendKP.Load()

	inject(rawData(kp.remoteIndex^0x5a5a5a5a, 0, 32+16))
	wantDrop(b, "unknown_index", 1)
	inject(rawData(kp.remoteIndex, 0, 0)[:10])
	wantDrop(b, "short_packet", 1)
	// A header, a 1-byte body and a tag: any body length is valid on the
	// wire (PROTOCOL.md), so it is rejected by its tag, not its length.
	inject(rawData(kp.remoteIndex, 0, 1+16))
	wantDrop(b, "auth_failed", 1)
	if got := b.dev.Stats().Drops["short_packet"]; got != 1 {
		t.Fatalf("short_packet = %d, want 1", got)
	}
	bad := rawData(kp.remoteIndex, 0, 32)
	bad[0] = 0x77
	inject(bad)
	wantDrop(b, "bad_type", 1)
	bad = rawData(kp.remoteIndex, 0, 32)
	bad[1] = 2 // version
	inject(bad)
	wantDrop(b, "bad_type", 2)
	inject(rawData(kp.remoteIndex, 1<<20, 32+16)) // forged tag
	wantDrop(b, "auth_failed", 2)
	good(2)

	ib.set(func(b *impairedBind) { b.tamperNext = 1 })
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 3, 100)
	wantDrop(b, "auth_failed", 3)
	good(4)

	a.tun.Outbound <- ipPacket(netipMust("10.9.9.9"), addrB4, 5, 100)
	wantDrop(b, "disallowed_source", 1)
	a.tun.Outbound <- ipPacket(addrA6, netipMust("fd00:2::77"), 6, 100) // right family, allowed
	if got := packetSeq(t, recvPacket(t, b)); got != 6 {
		t.Fatalf("got packet %d, want 6", got)
	}
	// Routed by destination to B, but its source is in no AllowedIPs at B.
	a.tun.Outbound <- ipPacket(netipMust("fd00:9::1"), addrB6, 7, 100)
	wantDrop(b, "disallowed_source", 2)

	mal := ipPacket(addrA4, addrB4, 8, 8)
	binary.BigEndian.PutUint16(mal[2:], 1000) // total length beyond the packet
	a.tun.Outbound <- mal
	wantDrop(b, "malformed_inner", 1)

	a.tun.Outbound <- ipPacket(addrA4, netipMust("10.7.7.7"), 9, 100)
	wantDrop(a, "no_route", 1)
	junk := ipPacket(addrA4, addrB4, 10, 100)
	junk[0] = 0x55
	a.tun.Outbound <- junk
	wantDrop(a, "malformed_outbound", 1)

	inject(make([]byte, 100)) // handshake type 0x00 → bad_type
	wantDrop(b, "bad_type", 3)
	hs := make([]byte, 50)
	hs[0] = handshake.MessageInitiationType
	inject(hs)
	wantDrop(b, "handshake_invalid", 1)
	if got := b.dev.Stats().HandshakeInvalid["length"]; got != 1 {
		t.Fatalf("handshake invalid by length = %d, want 1", got)
	}
	good(11)
	// A replayed authentic packet.
	ib.set(func(x *impairedBind) { x.dupP, x.rng = 1, rand.New(rand.NewPCG(2, 2)) })
	good(12)
	ib.set(func(x *impairedBind) { x.dupP, x.rng = 0, nil })
	wantDrop(b, "replay", 1)
}

func TestHandshakeFloodDoesNotStopData(t *testing.T) {
	goroutineLeakCheck(t)
	a, b := newPair(t, pairOptions{suites: []ciphers.SuiteID{ciphers.ZUC256}})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 0, 64)})

	// Valid-mac1 initiations from a key B does not know: under load they
	// must get cookie replies instead of curve work.
	attacker, err := handshake.NewLocal(handshake.Config{PrivateKey: genKey(t), Indices: &indexTable{table: map[uint32]indexEntry{}}})
	if err != nil {
		t.Fatal(err)
	}
	bp, err := attacker.AddPeer(handshake.PeerConfig{PublicKey: b.key.Public()})
	if err != nil {
		t.Fatal(err)
	}
	var valid [][]byte
	for range 300 {
		m, err := attacker.CreateInitiation(bp, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		valid = append(valid, m[:])
	}
	rng := rand.New(rand.NewPCG(3, 3))
	stop := make(chan struct{})
	flooded := make(chan struct{})
	var sent atomic.Int64
	go func() {
		defer close(flooded)
		junk := make([]byte, handshake.MessageInitiationSize)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var batch [][]byte
			for j := range 64 {
				if (i+j)%4 == 0 {
					batch = append(batch, valid[(i*64+j)%len(valid)])
					continue
				}
				for k := range junk {
					junk[k] = byte(rng.Uint32())
				}
				junk[0], junk[1], junk[2], junk[3] = handshake.MessageInitiationType, 1, 0, 0
				batch = append(batch, append([]byte(nil), junk...))
			}
			// As fast as b takes them, but no faster: a flood beyond what
			// b's socket holds drops data in the fake link itself (as UDP
			// would), which is not what this test is about — whether the
			// handshake path lets data through.
			for n, c := b.raw.Queued(); n > c/2; n, c = b.raw.Queued() {
				runtime.Gosched()
			}
			_ = a.raw.Send(batch, b.raw.LocalEndpoint())
			sent.Add(int64(len(batch)))
			runtime.Gosched()
		}
	}()
	for i := 0; i < 20 || sent.Load() < 20000; i++ {
		sendExpect(t, a, b, mixedPackets(addrA4, addrB4, addrA6, addrB6, 50, uint64(i*100)))
		sendExpect(t, b, a, mixedPackets(addrB4, addrA4, addrB6, addrA6, 50, uint64(i*100)))
	}
	close(stop)
	<-flooded
	st := b.dev.Stats()
	if st.HandshakeInvalid["screen"] == 0 {
		t.Errorf("no junk initiation was screened out: %s", statsString(b.dev))
	}
	if st.Drops["handshake_cookie"]+st.Drops["handshake_queue_full"] == 0 {
		t.Errorf("flood never put the responder under load: %s", statsString(b.dev))
	}
	t.Logf("after flood: %s", statsString(b.dev))
}

// TestConfirmByData: a lost confirm is covered by the initiator's first
// data; the confirm, arriving after that, is late and harmless: counted
// as handshake_late (every datagram is received or dropped), not as a
// failure and not as received.
func TestConfirmByData(t *testing.T) {
	goroutineLeakCheck(t)
	var ia *impairedBind
	a, b := newPair(t, pairOptions{suites: []ciphers.SuiteID{ciphers.SM4GCM}, wrapA: impair(&ia)})
	var confirm []byte
	ia.set(func(x *impairedBind) {
		x.dropType = handshake.MessageConfirmType
		x.onSend = func(p []byte) {
			if p[0] == handshake.MessageConfirmType {
				confirm = append([]byte(nil), p...)
			}
		}
	})
	a.peer.initiateHandshake(false)
	waitFor(t, "initiator keypair", func() bool { return a.peer.sendKP.Load() != nil })
	var next *keypair
	waitFor(t, "responder next keypair", func() bool {
		b.peer.kpMu.Lock()
		defer b.peer.kpMu.Unlock()
		next, _ = b.peer.keypairs.Next()
		return next != nil
	})
	if b.peer.sendKP.Load() != nil || next.confirmed.Load() {
		t.Fatal("responder may send on an unconfirmed keypair")
	}
	if ia.sentOf(handshake.MessageConfirmType) != 0 {
		t.Fatal("confirm was not dropped")
	}
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 64)})
	waitFor(t, "confirmation by data", func() bool { return b.peer.sendKP.Load() == next })
	sendExpect(t, b, a, [][]byte{ipPacket(addrB4, addrA4, 2, 64)})
	if got := a.peer.sendKP.Load(); got.localIndex != next.remoteIndex {
		t.Fatal("sides use different keypairs")
	}

	// The confirm comes late: on the receive path, and once more as if
	// it had been queued before the data confirmed the keypair.
	ia.mu.Lock()
	late := confirm
	ia.mu.Unlock()
	if late == nil {
		t.Fatal("no confirm was sent")
	}
	rx := b.dev.Stats().Peers[0].RxPackets
	b.dev.queueHandshake(late, a.raw.LocalEndpoint())
	b.dev.handleHandshake(late, a.raw.LocalEndpoint())
	st := b.dev.Stats()
	if got := st.Drops["handshake_late"]; got != 2 {
		t.Errorf("handshake_late = %d after two late confirms, want 2", got)
	}
	if len(st.HandshakeInvalid) != 0 || st.Drops["handshake_invalid"] != 0 {
		t.Errorf("a late confirm counted as a failure: %v", st.HandshakeInvalid)
	}
	if got := st.Peers[0].RxPackets; got != rx {
		t.Errorf("rx_packets %d → %d: an unverified late confirm counted as received", rx, got)
	}
}

func TestZUC128AuthFailureBudget(t *testing.T) {
	goroutineLeakCheck(t)
	var ia *impairedBind
	a, b := newPair(t, pairOptions{suites: []ciphers.SuiteID{ciphers.ZUC128}, wrapA: impair(&ia)})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 0, 64)})
	kpA := a.peer.sendKP.Load()
	budget := int(ciphers.ZUC128.Params().MaxAuthFailures)
	ia.set(func(x *impairedBind) { x.tamperNext = budget })
	for i := range budget {
		a.tun.Outbound <- ipPacket(addrA4, addrB4, uint64(i), 16)
	}
	waitFor(t, "auth failures", func() bool { return b.dev.Stats().Drops["auth_failed"] >= uint64(budget) })
	if b.dev.indices.lookup(kpA.remoteIndex) != nil {
		t.Fatal("receive key still installed after its authentication-failure budget")
	}
	// B rekeys on its own; traffic then flows on a new keypair.
	waitFor(t, "new keypair", func() bool {
		kp := a.peer.sendKP.Load()
		return kp != nil && kp != kpA
	})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1<<20, 64)})
}

func netipMust(s string) netip.Addr { return netip.MustParseAddr(s) }
