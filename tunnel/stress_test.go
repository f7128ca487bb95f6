package tunnel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.zx2c4.com/wireguard/conn"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
	"github.com/gmtun/gmtun/tunnel/netio/netiotest"
)

// stressBind is an impairedBind (drops, duplicates, reordering on send)
// whose receive side is in place, packing perBuf datagrams per buffer like
// packingBind.
type stressBind struct {
	*impairedBind
	perBuf int
}

func (b *stressBind) OpenInPlace(port uint16) ([]netio.InPlaceReceiveFunc, uint16, error) {
	fns, actual, err := b.ChannelBind.Open(port)
	if err != nil {
		return nil, 0, err
	}
	return packReceive(fns, b.perBuf), actual, nil
}

func stressWrap(target **impairedBind, perBuf int) func(*netiotest.ChannelBind) netio.Bind {
	return func(c *netiotest.ChannelBind) netio.Bind {
		*target = &impairedBind{ChannelBind: c}
		return &stressBind{impairedBind: *target, perBuf: perBuf}
	}
}

// stressDuration is how long each stress subtest hammers the devices:
// TUNNEL_STRESS (a Go duration) or a short default.
func stressDuration(t *testing.T) time.Duration {
	if v := os.Getenv("TUNNEL_STRESS"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("TUNNEL_STRESS: %v", err)
		}
		return d
	}
	if testing.Short() {
		return 200 * time.Millisecond
	}
	return time.Second
}

// checkIntact verifies that pkt is a packet ipPacket built, byte for
// byte (lengths, ports, payload pattern).
func checkIntact(pkt []byte) error {
	if len(pkt) < 28 {
		return fmt.Errorf("%d-byte packet", len(pkt))
	}
	var udp []byte
	switch pkt[0] >> 4 {
	case 4:
		if int(binary.BigEndian.Uint16(pkt[2:])) != len(pkt) {
			return errors.New("IPv4 total length does not match")
		}
		udp = pkt[20:]
	case 6:
		if len(pkt) < 48 || int(binary.BigEndian.Uint16(pkt[4:]))+40 != len(pkt) {
			return errors.New("IPv6 payload length does not match")
		}
		udp = pkt[40:]
	default:
		return fmt.Errorf("IP version %d", pkt[0]>>4)
	}
	if binary.BigEndian.Uint16(udp) != 40000 || binary.BigEndian.Uint16(udp[2:]) != 40001 || int(binary.BigEndian.Uint16(udp[4:])) != len(udp) {
		return errors.New("UDP header corrupted")
	}
	payload := udp[8:]
	seq := binary.BigEndian.Uint64(payload)
	for i := 8; i < len(payload); i++ {
		if payload[i] != byte(seq)^byte(i) {
			return fmt.Errorf("payload of packet %d corrupted at byte %d", seq, i)
		}
	}
	return nil
}

// idleBuffers is the number of buffers a quiet device holds: a vector per
// TUN reader and inPlaceSlots per in-place receive function (the test
// pairs have one of each).
func idleBuffers(s *side) int {
	return min(max(s.tun.BatchSize(), 1), ciphers.MaxBatch) + inPlaceSlots
}

// TestInPlaceStress hammers two devices that both receive in place with
// traffic both ways while their links drop, duplicate and reorder, junk of
// every kind (random bytes, handshake-typed garbage, data packets with a
// live receiver index and bad tags, runts) is injected, the fake clock
// forces rekeys and keypair expiry, and one side's peer is removed and
// added again. Afterwards traffic must flow both ways again, every
// delivered packet must be intact, and the buffer pool must come back to
// what idle readers hold (no buffer leaked or stuck in a queue).
// TUNNEL_STRESS=30s makes it run longer.
func TestInPlaceStress(t *testing.T) {
	dur := stressDuration(t)
	for _, suite := range ciphers.Suites {
		t.Run(suite.String(), func(t *testing.T) {
			goroutineLeakCheck(t)
			clock := newFakeClock()
			var ia, ib *impairedBind
			a, b := newPair(t, pairOptions{
				suites: []ciphers.SuiteID{suite}, clock: clock,
				wrapA: stressWrap(&ia, 7), wrapB: stressWrap(&ib, 64),
			})
			sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1<<40, 64)})
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			for i, x := range []*impairedBind{ia, ib} {
				x.set(func(x *impairedBind) {
					x.rng = rand.New(rand.NewPCG(seed, uint64(i)))
					x.dropP, x.dupP, x.reorder = 0.02, 0.02, true
				})
			}
			bPeers := []PeerConfig{{
				Name: "A", PublicKey: a.key.Public(), Endpoint: netip.AddrPort(a.raw.LocalEndpoint()),
				AllowedIPs: netA, Roaming: true,
			}}

			// The receivers stop last: the devices block on a full TUN.
			stop, stopRx := make(chan struct{}), make(chan struct{})
			var wg, wgRx sync.WaitGroup
			var corrupt atomic.Value
			var delivered [2]atomic.Int64
			routines := 0
			run := func(f func(rng *rand.Rand)) {
				wg.Add(1)
				routines++
				r := rand.New(rand.NewPCG(seed, uint64(100+routines)))
				go func() {
					defer wg.Done()
					f(r)
				}()
			}
			stopped := func() bool {
				select {
				case <-stop:
					return true
				default:
					return false
				}
			}
			// Traffic both ways, and receivers that check every packet.
			for i, dir := range [][2]*side{{a, b}, {b, a}} {
				from, to := dir[0], dir[1]
				src4, dst4, src6, dst6 := addrA4, addrB4, addrA6, addrB6
				if from == b {
					src4, dst4, src6, dst6 = addrB4, addrA4, addrB6, addrA6
				}
				run(func(rng *rand.Rand) {
					for seq := uint64(0); !stopped(); seq += 200 {
						for _, p := range mixedPackets(src4, dst4, src6, dst6, 1+rng.IntN(200), seq) {
							select {
							case from.tun.Outbound <- p:
							case <-stop:
								return
							}
						}
					}
				})
				wgRx.Add(1)
				go func() {
					defer wgRx.Done()
					for {
						select {
						case p := <-to.tun.Inbound:
							if err := checkIntact(p); err != nil {
								corrupt.CompareAndSwap(nil, err)
							}
							delivered[i].Add(1)
						case <-stopRx:
							return
						}
					}
				}()
			}
			// Junk into both receivers, mixed with the real datagrams.
			for _, dir := range [][2]*side{{a, b}, {b, a}} {
				from, to := dir[0], dir[1]
				run(func(rng *rand.Rand) {
					for !stopped() {
						var batch [][]byte
						for range 1 + rng.IntN(32) {
							batch = append(batch, junkDatagram(rng, to))
						}
						_ = from.raw.Send(batch, to.raw.LocalEndpoint())
						time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond)
					}
				})
			}
			// Rekeys, expiry and handshake retries through the fake clock.
			run(func(rng *rand.Rand) {
				for !stopped() {
					time.Sleep(time.Duration(5+rng.IntN(30)) * time.Millisecond)
					switch rng.IntN(4) {
					case 0:
						clock.Advance(handshake.RekeyAfterTime + time.Second)
					case 1:
						clock.Advance(handshake.RejectAfterTime)
					default:
						clock.Advance(time.Duration(rng.IntN(6)) * time.Second)
					}
					a.dev.timerTick()
					b.dev.timerTick()
				}
			})
			// B's peer goes away and comes back (a new Peer, no session).
			run(func(rng *rand.Rand) {
				for !stopped() {
					time.Sleep(time.Duration(50+rng.IntN(200)) * time.Millisecond)
					if err := b.dev.SetPeers(nil); err != nil {
						corrupt.CompareAndSwap(nil, err)
						return
					}
					time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
					if err := b.dev.SetPeers(bPeers); err != nil {
						corrupt.CompareAndSwap(nil, err)
						return
					}
				}
			})

			time.Sleep(dur)
			close(stop)
			wg.Wait()
			close(stopRx)
			wgRx.Wait()
			if err, _ := corrupt.Load().(error); err != nil {
				t.Fatalf("during the stress: %v", err)
			}
			t.Logf("delivered a→b %d, b→a %d; a: %s; b: %s", delivered[0].Load(), delivered[1].Load(), statsString(a.dev), statsString(b.dev))

			// Calm: a clean link, a fresh session, traffic both ways.
			for _, x := range []*impairedBind{ia, ib} {
				x.set(func(x *impairedBind) { x.rng, x.dropP, x.dupP, x.reorder = nil, 0, 0, false })
			}
			b.dev.peersMu.RLock()
			b.peer = b.dev.peerList[0]
			b.dev.peersMu.RUnlock()
			clock.Advance(3 * handshake.RejectAfterTime) // every keypair expires and is zeroed
			if shortTag(suite.Params()) {
				// The forged packets spent the peers' zuc-128 forgery
				// budget: zuc-128 is refused until the budget refills.
				clock.Advance(peerAuthWindow)
			}
			a.dev.timerTick()
			b.dev.timerTick()
			drainQuiet(a, 50*time.Millisecond)
			drainQuiet(b, 50*time.Millisecond)
			// Handshake retries and cookie rounds need the clock to move:
			// probe until a packet gets through, a second at a time.
			for i := 0; ; i++ {
				a.tun.Outbound <- ipPacket(addrA4, addrB4, 1<<41, 64)
				clock.Advance(time.Second)
				a.dev.timerTick()
				b.dev.timerTick()
				if len(drainQuiet(b, 100*time.Millisecond)) > 0 {
					break
				}
				if i == 60 {
					t.Fatalf("no packet gets through after the stress; a: %s; b: %s", statsString(a.dev), statsString(b.dev))
				}
			}
			sendExpect(t, a, b, mixedPackets(addrA4, addrB4, addrA6, addrB6, 300, 1<<42))
			sendExpect(t, b, a, mixedPackets(addrB4, addrA4, addrB6, addrA6, 300, 1<<43))

			// Every buffer comes back: only the idle readers hold some.
			for name, s := range map[string]*side{"a": a, "b": b} {
				want := idleBuffers(s)
				deadline := time.Now().Add(10 * time.Second)
				for {
					bs := s.dev.Stats().Buffers
					if bs.InUse == want && bs.Staged == 0 && bs.Waiting == 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: buffers not back after the stress: %+v, want %d in use (idle readers)", name, bs, want)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
		})
	}
}

// junkDatagram returns something a hostile or broken network delivers to
// to: random bytes, garbage of a handshake type and exact size, a data
// packet with a live receiver index and a bad tag, or a runt.
func junkDatagram(rng *rand.Rand, to *side) []byte {
	switch rng.IntN(5) {
	case 0:
		p := make([]byte, rng.IntN(1500))
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		return p
	case 1:
		typ := []byte{handshake.MessageInitiationType, handshake.MessageResponseType,
			handshake.MessageConfirmType, handshake.MessageCookieReplyType}[rng.IntN(4)]
		p := make([]byte, handshakeSize(typ))
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		p[0], p[1], p[2], p[3] = typ, ProtocolVersion, 0, 0
		return p
	case 2, 3:
		// A data packet naming one of to's live keypairs (if any).
		var idx uint32
		to.dev.peersMu.RLock()
		if len(to.dev.peerList) > 0 {
			if kp := to.dev.peerList[0].sendKP.Load(); kp != nil {
				idx = kp.localIndex
			}
		}
		to.dev.peersMu.RUnlock()
		body := 16 * rng.IntN(90)
		p := rawData(idx, rng.Uint64N(1<<20), body+16)
		for i := ciphers.HeaderSize; i < len(p); i++ {
			p[i] = byte(rng.Uint32())
		}
		return p
	default:
		return []byte{MessageDataType, ProtocolVersion, 0}[:rng.IntN(4)]
	}
}

// TestStagingBudgetDropsTheNewContainer: when the device-wide staging
// budget is used up by one peer, the container just read for another
// peer is itself pushed out (released) by stagePackets. The TUN reader
// used to read the container's peer after that, found nil and panicked.
func TestStagingBudgetDropsTheNewContainer(t *testing.T) {
	goroutineLeakCheck(t)
	rawA, _ := netiotest.NewChannelBinds(ciphers.MaxBatch)
	tun := netiotest.NewChannelTUN("tunA", ciphers.MaxBatch, 1420)
	net2, net3 := netip.MustParsePrefix("10.0.2.0/24"), netip.MustParsePrefix("10.0.3.0/24")
	dev, err := NewDevice(Config{
		PrivateKey: genKey(t), Clock: newFakeClock(), MaxBuffers: 1,
		Peers: []PeerConfig{ // no endpoints: packets stay staged
			{Name: "P2", PublicKey: genKey(t).Public(), AllowedIPs: []netip.Prefix{net2}},
			{Name: "P3", PublicKey: genKey(t).Public(), AllowedIPs: []netip.Prefix{net3}},
		},
	}, []netio.TUN{tun}, rawA)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	budget := int(dev.stagedBudget)
	if budget >= 2*MaxStagedPackets {
		t.Fatalf("staging budget %d leaves room for two full peers; the test needs it smaller", budget)
	}
	// Queued before Up, so that the first read takes exactly the batch
	// for P2 and the second one all of P3's packets.
	n3 := budget - MaxStagedPackets + 1 // P3's container alone exceeds what is left
	for i := range MaxStagedPackets {
		tun.Outbound <- ipPacket(addrA4, netip.MustParseAddr("10.0.2.1"), uint64(i), 64)
	}
	for i := range n3 {
		tun.Outbound <- ipPacket(addrA4, netip.MustParseAddr("10.0.3.1"), uint64(i), 64)
	}
	if err := dev.Up(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "P3's packets dropped", func() bool { return dev.Stats().Drops["no_keypair_staged_overflow"] == uint64(n3) })
	if st := dev.Stats(); st.Buffers.Staged != MaxStagedPackets {
		t.Fatalf("staged %d, want P2's %d", st.Buffers.Staged, MaxStagedPackets)
	}
	// The reader is alive: one more packet for P2 pushes out its oldest
	// container (the batch of MaxStagedPackets).
	tun.Outbound <- ipPacket(addrA4, netip.MustParseAddr("10.0.2.1"), 1000, 64)
	waitFor(t, "the reader to go on", func() bool {
		return dev.Stats().Drops["no_keypair_staged_overflow"] == uint64(n3+MaxStagedPackets)
	})
}

// TestSendResult: a bind's report that it turned UDP GSO off and resent
// is success unless the resend failed.
func TestSendResult(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct{ in, want error }{
		{nil, nil},
		{boom, boom},
		{conn.ErrUDPGSODisabled{}, nil},
		{conn.ErrUDPGSODisabled{RetryErr: boom}, boom},
		{fmt.Errorf("wrapped: %w", conn.ErrUDPGSODisabled{}), nil},
	} {
		if got := sendResult(c.in); got != c.want {
			t.Errorf("sendResult(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestTUNReadErrorIsNotFatal: a TUN read error other than closing (here
// the fake's "packet larger than the buffer") loses that read, not the
// queue: the reader used to return, and nothing from that TUN queue was
// ever sent again.
func TestTUNReadErrorIsNotFatal(t *testing.T) {
	goroutineLeakCheck(t)
	a, b := newPair(t, pairOptions{})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 64)})
	a.tun.Outbound <- make([]byte, BufferSize) // cannot fit at offset HeaderSize
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 2, 64)})
	sendExpect(t, a, b, mixedPackets(addrA4, addrB4, addrA6, addrB6, 100, 3))
}

// TestStallWatchdog: readers blocked for a buffer while none comes back
// are reported once, with the pool state and (verbose) the stacks; a
// returned buffer ends the episode.
func TestStallWatchdog(t *testing.T) {
	var mu sync.Mutex
	var errs, verbose []string
	d := &Device{buffers: newBufferPool(2)}
	d.log = (&Logger{
		Errorf:   func(f string, a ...any) { mu.Lock(); errs = append(errs, fmt.Sprintf(f, a...)); mu.Unlock() },
		Verbosef: func(f string, a ...any) { mu.Lock(); verbose = append(verbose, fmt.Sprintf(f, a...)); mu.Unlock() },
	}).normalize()
	held := []*buffer{d.buffers.get(), d.buffers.get()}
	got := make(chan *buffer)
	go func() { got <- d.buffers.get() }()
	waitFor(t, "a waiting reader", func() bool { return d.Stats().Buffers.Waiting == 1 })
	if b := d.Stats().Buffers; b.InUse != 2 || b.Free != 0 || b.ExhaustedFor <= 0 || b.Waits != 1 {
		t.Fatalf("buffer stats %+v", b)
	}
	now := time.Now()
	d.checkStall(now)
	d.checkStall(now.Add(stallReportAfter / 2))
	if len(errs) != 0 {
		t.Fatalf("reported before stallReportAfter: %q", errs)
	}
	d.checkStall(now.Add(stallReportAfter))
	d.checkStall(now.Add(2 * stallReportAfter))
	mu.Lock()
	if len(errs) != 1 || !strings.Contains(errs[0], "data plane stalled") || !strings.Contains(errs[0], "2 in use, 0 free") {
		t.Fatalf("stall reports %q, want one", errs)
	}
	if len(verbose) != 1 || !strings.Contains(verbose[0], "goroutine") {
		t.Fatalf("no goroutine dump: %q", verbose)
	}
	mu.Unlock()
	d.buffers.put(held[0])
	<-got
	d.checkStall(now.Add(3 * stallReportAfter))
	if b := d.Stats().Buffers; b.Waiting != 0 || b.ExhaustedFor != 0 || d.stall.reported || !d.stall.since.IsZero() {
		t.Fatalf("after the wait: %+v, watchdog %+v", b, d.stall)
	}
}
