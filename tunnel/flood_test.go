package tunnel

import (
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
	"github.com/gmtun/gmtun/tunnel/netio/netiotest"
)

// floodBind is a ChannelBind with a second receive path fed by a flooder:
// a message index arrives on ch, and the ReceiveFunc hands the device the
// message msgs[i%len] from the spoofed source srcs[i%len]. The flood has
// its own "socket" (ch, dropping when full like a UDP receive buffer), so
// the legitimate peer's datagrams are not lost to it before the device sees
// them: the test measures the device, not the socket.
type floodBind struct {
	*netiotest.ChannelBind
	ch     chan uint32
	msgs   [][]byte
	srcs   []netio.Endpoint
	once   sync.Once
	closed chan struct{}
}

func (f *floodBind) Open(port uint16) ([]netio.ReceiveFunc, uint16, error) {
	fns, p, err := f.ChannelBind.Open(port)
	if err != nil {
		return nil, 0, err
	}
	return append(fns, f.receive), p, nil
}

func (f *floodBind) Close() error {
	f.once.Do(func() { close(f.closed) })
	return f.ChannelBind.Close()
}

func (f *floodBind) receive(bufs [][]byte, sizes []int, eps []netio.Endpoint) (int, error) {
	var i uint32
	select {
	case <-f.closed:
		return 0, net.ErrClosed
	case i = <-f.ch:
	}
	n := 0
	for {
		sizes[n] = copy(bufs[n], f.msgs[int(i)%len(f.msgs)])
		eps[n] = f.srcs[int(i)%len(f.srcs)]
		n++
		if n == len(bufs) {
			return n, nil
		}
		select {
		case i = <-f.ch:
		default:
			return n, nil
		}
	}
}

// floodSources is the number of distinct spoofed sources (198.18.0.0/15
// has 2^17 addresses).
const floodSources = 1 << 17

// TestSpoofedFloodHandshakes: an off-path attacker who knows the victim's
// public key floods it, from one goroutine as fast as it can, with
// initiations carrying a valid mac1 (half of them a garbage mac2) from
// 131072 spoofed sources, while the
// legitimate peer re-handshakes in both directions. Each handshake must
// complete within 5 s, data must keep flowing and no established session
// may be torn down, and the victim's handshake state must stay bounded.
// Before the fix one FIFO in front of the workers, filled by the flood,
// dropped the peer's initiation and the 0x12/0x13 that complete it, and a
// per-source table of 4096 entries filled by spoofed sources refused it a
// cookie.
func TestSpoofedFloodHandshakes(t *testing.T) {
	if testing.Short() {
		t.Skip("floods for several seconds")
	}
	goroutineLeakCheck(t)
	var fb *floodBind
	a, b := newPair(t, pairOptions{clock: systemClock{}, wrapB: func(c *netiotest.ChannelBind) netio.Bind {
		fb = &floodBind{ChannelBind: c, ch: make(chan uint32, 8192), closed: make(chan struct{})}
		return fb
	}})
	// The flood: valid-mac1 initiations from a stranger (not a peer of B),
	// so that B, if it processed them, would pay for SM2 work each time.
	attacker, err := handshake.NewLocal(handshake.Config{PrivateKey: genKey(t), Indices: &indexTable{table: map[uint32]indexEntry{}}})
	if err != nil {
		t.Fatal(err)
	}
	bp, err := attacker.AddPeer(handshake.PeerConfig{PublicKey: b.key.Public()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 256 {
		m, err := attacker.CreateInitiation(bp, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 { // a garbage mac2 (mac1 stays valid): the costliest to screen
			for j := range 16 {
				m[handshake.MessageInitiationOffsetMAC2+j] = byte(i + j + 1)
			}
		}
		fb.msgs = append(fb.msgs, m[:])
	}
	fb.srcs = make([]netio.Endpoint, floodSources)
	for i := range fb.srcs {
		ip := netip.AddrFrom4([4]byte{198, 18 + byte(i>>16), byte(i >> 8), byte(i)})
		fb.srcs[i] = netiotest.ChannelEndpoint(netip.AddrPortFrom(ip, uint16(1024+i%60000)))
	}

	// An established session first.
	sendExpect(t, a, b, mixedPackets(addrA4, addrB4, addrA6, addrB6, 20, 0))
	sendExpect(t, b, a, mixedPackets(addrB4, addrA4, addrB6, addrA6, 20, 0))

	var heap0 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&heap0)

	stop := make(chan struct{})
	done := make(chan struct{})
	var offered, accepted atomic.Int64
	floodStart := time.Now()
	go func() { // the flooder: one goroutine, no pauses
		defer close(done)
		var i uint32
		for {
			for range 1024 {
				select {
				case fb.ch <- i:
					accepted.Add(1)
				default:
				}
				i++
			}
			offered.Add(1024)
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	stopFlood := sync.OnceFunc(func() { close(stop); <-done })
	defer stopFlood()

	// No session is ever torn down while the flood lasts.
	var torn atomic.Int64
	watchDone := make(chan struct{})
	watchStop := make(chan struct{})
	go func() {
		defer close(watchDone)
		for {
			select {
			case <-watchStop:
				return
			case <-time.After(time.Millisecond):
			}
			if a.peer.sendKP.Load() == nil || b.peer.sendKP.Load() == nil {
				torn.Add(1)
			}
		}
	}()
	defer func() { close(watchStop); <-watchDone }()

	waitFor(t, "the flood to put the victim under load", func() bool {
		return b.dev.Stats().Drops["handshake_cookie"] > 1000
	})

	rehandshake := func(name string, init, resp *side) {
		t.Helper()
		old := init.peer.sendKP.Load()
		start := time.Now()
		init.peer.initiateHandshake(true)
		for {
			kp := init.peer.sendKP.Load()
			if kp != nil && kp != old {
				if r := resp.peer.sendKP.Load(); r != nil && r.localIndex == kp.remoteIndex {
					break
				}
			}
			if time.Since(start) > 5*time.Second { // the legitimate handshake's deadline
				t.Fatalf("%s: handshake under flood did not complete within 5 s; victim: %s", name, statsString(b.dev))
			}
			time.Sleep(time.Millisecond)
		}
		t.Logf("%s: handshake under flood completed in %v", name, time.Since(start).Round(time.Millisecond))
	}
	rehandshake("peer initiates to the victim", a, b)
	sendExpect(t, a, b, mixedPackets(addrA4, addrB4, addrA6, addrB6, 20, 2000))
	sendExpect(t, b, a, mixedPackets(addrB4, addrA4, addrB6, addrA6, 20, 2000))
	rehandshake("victim initiates to the peer", b, a)
	sendExpect(t, a, b, mixedPackets(addrA4, addrB4, addrA6, addrB6, 20, 4000))
	sendExpect(t, b, a, mixedPackets(addrB4, addrA4, addrB6, addrA6, 20, 4000))

	// Keep flooding for 3 s and until every spoofed source was used at
	// least once, with data flowing meanwhile.
	for i := uint64(0); time.Since(floodStart) < 3*time.Second || accepted.Load() < floodSources; i++ {
		sendExpect(t, a, b, mixedPackets(addrA4, addrB4, addrA6, addrB6, 5, 5000+10*i))
		sendExpect(t, b, a, mixedPackets(addrB4, addrA4, addrB6, addrA6, 5, 5000+10*i))
		time.Sleep(20 * time.Millisecond)
	}
	var heap1 runtime.MemStats
	runtime.ReadMemStats(&heap1)
	st := b.dev.Stats()
	stopFlood()

	if n := torn.Load(); n != 0 {
		t.Errorf("a session was torn down during the flood (%d samples without a keypair)", n)
	}
	if n := b.dev.rate.GC(time.Now()); n > 4096 {
		t.Errorf("rate-limit table holds %d sources", n)
	}
	if q := st.Buffers.HandshakeQueue; q > QueueHandshakeSize+hsPrioSize+hsProvenSize+hsCookieSize {
		t.Errorf("handshake queues hold %d messages", q)
	}
	if grow := int64(heap1.HeapAlloc) - int64(heap0.HeapAlloc); grow > 64<<20 {
		t.Errorf("heap grew by %d MiB during the flood", grow>>20)
	}
	if inv := st.HandshakeInvalid["unknown_static"]; inv > 2000 {
		t.Errorf("the victim did SM2 work for %d flood initiations", inv)
	}
	t.Logf("flood: %v, offered %d, into the socket %d; victim: %s", time.Since(floodStart).Round(time.Millisecond),
		offered.Load(), accepted.Load(), statsString(b.dev))
}
