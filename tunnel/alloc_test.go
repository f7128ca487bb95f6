package tunnel

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// The fakes below move packets without allocating, unlike netiotest's, so
// that allocation counts and benchmarks measure the device alone.

type pipeEndpoint struct{ ap netip.AddrPort }

func (e *pipeEndpoint) ClearSrc()           {}
func (e *pipeEndpoint) SrcToString() string { return "" }
func (e *pipeEndpoint) DstToString() string { return e.ap.String() }
func (e *pipeEndpoint) DstToBytes() []byte  { b, _ := e.ap.MarshalBinary(); return b }
func (e *pipeEndpoint) DstIP() netip.Addr   { return e.ap.Addr() }
func (e *pipeEndpoint) SrcIP() netip.Addr   { return netip.Addr{} }

type dgram struct {
	buf  [2048]byte
	n    int
	from *pipeEndpoint
}

// pipeBind is one end of a lossless in-memory link with a fixed set of
// datagram slots: Send waits for a free slot (backpressure).
type pipeBind struct {
	self     *pipeEndpoint
	peer     *pipeBind
	rx, free chan *dgram
	mu       sync.Mutex
	closed   chan struct{}
}

func newPipeBinds() (a, b *pipeBind) {
	mk := func(ap string) *pipeBind {
		p := &pipeBind{self: &pipeEndpoint{netip.MustParseAddrPort(ap)}, rx: make(chan *dgram, 1024), free: make(chan *dgram, 1024)}
		for range 1024 {
			p.free <- new(dgram)
		}
		return p
	}
	a, b = mk("198.18.1.1:1"), mk("198.18.1.2:2")
	a.peer, b.peer = b, a
	return a, b
}

func (p *pipeBind) Open(uint16) ([]netio.ReceiveFunc, uint16, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	closed := make(chan struct{})
	p.closed = closed
	fn := func(bufs [][]byte, sizes []int, eps []netio.Endpoint) (int, error) {
		n := 0
		for n < len(bufs) {
			var d *dgram
			if n == 0 {
				select {
				case d = <-p.rx:
				case <-closed:
					return 0, net.ErrClosed
				}
			} else {
				select {
				case d = <-p.rx:
				default:
					return n, nil
				}
			}
			sizes[n] = copy(bufs[n], d.buf[:d.n])
			eps[n] = d.from
			p.free <- d
			n++
		}
		return n, nil
	}
	return []netio.ReceiveFunc{fn}, p.self.ap.Port(), nil
}

func (p *pipeBind) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed != nil {
		close(p.closed)
		p.closed = nil
	}
	return nil
}

func (p *pipeBind) Send(bufs [][]byte, ep netio.Endpoint) error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed == nil {
		return net.ErrClosed
	}
	for _, b := range bufs {
		var d *dgram
		select {
		case d = <-p.peer.free:
		case <-closed:
			return net.ErrClosed
		}
		d.n = copy(d.buf[:], b)
		d.from = p.self
		p.peer.rx <- d
	}
	return nil
}

func (p *pipeBind) ParseEndpoint(s string) (netio.Endpoint, error) {
	if s == p.peer.self.ap.String() {
		return p.peer.self, nil
	}
	return nil, errors.New("pipe: unknown endpoint")
}

func (p *pipeBind) SetMark(uint32) error { return nil }
func (p *pipeBind) BatchSize() int       { return ciphers.MaxBatch }

// genTUN produces copies of a template packet on demand (Read) and
// counts the packets written to it (Write).
type genTUN struct {
	template []byte
	want     chan int // packets to produce
	pending  int
	written  atomic.Int64
	notify   chan struct{}
	closed   chan struct{}
	once     sync.Once
}

func newGenTUN(template []byte) *genTUN {
	return &genTUN{template: template, want: make(chan int, 1024), notify: make(chan struct{}, 1), closed: make(chan struct{})}
}

func (g *genTUN) Read(bufs [][]byte, sizes []int, offset int) (int, error) {
	for g.pending == 0 {
		select {
		case n := <-g.want:
			g.pending = n
		case <-g.closed:
			return 0, os.ErrClosed
		}
	}
	n := min(g.pending, len(bufs))
	for i := range n {
		sizes[i] = copy(bufs[i][offset:], g.template)
		binary.BigEndian.PutUint32(bufs[i][offset+28:], uint32(g.pending-i))
	}
	g.pending -= n
	return n, nil
}

func (g *genTUN) Write(bufs [][]byte, offset int) (int, error) {
	g.written.Add(int64(len(bufs)))
	select {
	case g.notify <- struct{}{}:
	default:
	}
	return len(bufs), nil
}

func (g *genTUN) waitWritten(n int64) {
	for g.written.Load() < n {
		<-g.notify // Write leaves a token after every increment
	}
}

func (g *genTUN) BatchSize() int        { return ciphers.MaxBatch }
func (g *genTUN) MTU() (int, error)     { return 1420, nil }
func (g *genTUN) Name() (string, error) { return "gen", nil }
func (g *genTUN) Close() error          { g.once.Do(func() { close(g.closed) }); return nil }

// newPipePair returns devices A and B joined by pipe binds; A's TUN
// produces copies of template addressed to B, B's TUN counts them.
func newPipePair(t testing.TB, suite ciphers.SuiteID, template []byte) (tunA, tunB *genTUN) {
	bindA, bindB := newPipeBinds()
	tunA, tunB = newGenTUN(template), newGenTUN(template)
	keyA, keyB := genKey(t), genKey(t)
	clock := newFakeClock()
	devA, err := NewDevice(Config{PrivateKey: keyA, Suites: []ciphers.SuiteID{suite}, Clock: clock, Peers: []PeerConfig{{
		Name: "B", PublicKey: keyB.Public(), Endpoint: bindB.self.ap, AllowedIPs: netB,
	}}}, []netio.TUN{tunA}, bindA)
	if err != nil {
		t.Fatal(err)
	}
	devB, err := NewDevice(Config{PrivateKey: keyB, Suites: []ciphers.SuiteID{suite}, Clock: clock, Peers: []PeerConfig{{
		Name: "A", PublicKey: keyA.Public(), Endpoint: bindA.self.ap, AllowedIPs: netA,
	}}}, []netio.TUN{tunB}, bindB)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*Device{devA, devB} {
		if err := d.Up(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
	}
	// Handshake and warm-up: fill the pools.
	tunA.want <- 1
	tunB.waitWritten(1)
	for i := range 20 {
		tunA.want <- ciphers.MaxBatch
		tunB.waitWritten(int64(1 + (i+1)*ciphers.MaxBatch))
	}
	return tunA, tunB
}

func TestSteadyStateAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation measurement")
	}
	for _, suite := range ciphers.Suites {
		t.Run(suite.String(), func(t *testing.T) {
			tunA, tunB := newPipePair(t, suite, ipPacket(addrA4, addrB4, 0, 1000))
			const batch = 64
			target := tunB.written.Load()
			allocs := testing.AllocsPerRun(200, func() {
				target += batch
				tunA.want <- batch
				tunB.waitWritten(target)
			})
			t.Logf("%.2f allocations per batch of %d packets", allocs, batch)
			// Every packet passes through the TUN reader, the staging
			// queue, an encryption worker, the sender, the bind, the
			// network reader, a decryption worker and the receiver: none of
			// it may allocate. A small bound leaves room for the runtime
			// (timers, channel wakeups).
			if allocs > 1 {
				t.Fatalf("%.2f allocations per batch of %d packets, want ≈ 0", allocs, batch)
			}
		})
	}
}

func BenchmarkTwoDevices(b *testing.B) {
	for _, suite := range ciphers.Suites {
		for _, size := range []int{64, 1400} {
			b.Run(suite.String()+"/"+itoa(size), func(b *testing.B) {
				tmpl := ipPacket(addrA4, addrB4, 0, size-28)
				tunA, tunB := newPipePair(b, suite, tmpl)
				base := tunB.written.Load()
				b.SetBytes(int64(len(tmpl)))
				b.ReportAllocs()
				b.ResetTimer()
				for left := b.N; left > 0; {
					n := min(left, ciphers.MaxBatch)
					tunA.want <- n
					left -= n
				}
				tunB.waitWritten(base + int64(b.N))
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pkts/s")
			})
		}
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
