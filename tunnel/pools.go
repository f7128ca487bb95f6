package tunnel

import (
	"sync"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// BufferSize is the size of every packet buffer: a 16-byte header, the
// largest segment netio can deliver or coalesce (a TUN write may append
// the later packets of a flow into the first buffer, and a UDP GRO read
// fills up to 64 KiB), up to 15 bytes of padding and the largest tag.
const BufferSize = ciphers.HeaderSize + netio.MaxSegmentSize + 15 + ciphers.MaxTagSize

// buffer is one pooled packet buffer.
type buffer [BufferSize]byte

// Buffers are staggered: buffer k of a pool starts (k mod bufferStaggers)
// cache lines into its allocation. Go places every allocation of a
// buffer's size on a page boundary, so without the stagger the packets of
// a batch (each at the same offset of its own buffer) would all sit at the
// same address modulo 4 KiB: the 16 lanes of a ZUC kernel call then load
// and store lines that share one L1 set and alias in store-to-load
// disambiguation (kernels/zuc/doc.go), which cost 8–10 % of a
// zuc-128/zuc-256 seal of 64 packets (BenchmarkPoolSeal). 64
// staggers of 64 bytes cover every line offset of a 4 KiB page, and the
// extra ≤ 4032 bytes fit in the page rounding a 64 KiB + 47-byte
// allocation already has (9 pages of 8 KiB), so they cost no memory.
const (
	bufferStagger  = 64
	bufferStaggers = 4096 / bufferStagger
)

// newBuffer allocates the k-th buffer of a pool, staggered by k.
func newBuffer(k int) *buffer {
	off := k % bufferStaggers * bufferStagger
	return (*buffer)(make([]byte, off+BufferSize)[off:])
}

// bufferPool is a capped free list of buffers. Buffers are allocated on
// demand up to max and then recycled forever, so the steady state
// allocates nothing (a sync.Pool would drop them at each GC).
type bufferPool struct {
	mu        sync.Mutex
	cond      sync.Cond
	free      []*buffer
	allocated int
	max       int
	closed    bool

	// Diagnostics (Stats, the stall watchdog): goroutines blocked in
	// get, since when at least one has been, and how many gets waited.
	waiting   int
	waitStart time.Time
	waits     uint64
	puts      uint64 // put calls: progress, for the stall watchdog
}

func newBufferPool(max int) *bufferPool {
	p := &bufferPool{max: max, free: make([]*buffer, 0, max)}
	p.cond.L = &p.mu
	return p
}

// tryGet returns a buffer, or nil if the cap is reached and none is free.
func (p *bufferPool) tryGet() *buffer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takeLocked()
}

func (p *bufferPool) takeLocked() *buffer {
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		return b
	}
	if p.allocated < p.max {
		p.allocated++
		return newBuffer(p.allocated - 1)
	}
	return nil
}

// get returns a buffer, waiting while the cap is reached; it returns nil
// once the pool is closed.
func (p *bufferPool) get() *buffer {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	if b := p.takeLocked(); b != nil {
		return b
	}
	return p.waitLocked()
}

// refill replaces every nil entry of bufs with a buffer under one lock
// (waiting, like get, while the cap is reached), so a reader that handed
// a vector's buffers to containers pays one lock per vector, not one per
// packet. It reports false, with the entries it could not fill left nil,
// once the pool is closed.
func (p *bufferPool) refill(bufs []*buffer) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, b := range bufs {
		if b != nil {
			continue
		}
		if p.closed {
			return false
		}
		if b = p.takeLocked(); b == nil {
			if b = p.waitLocked(); b == nil {
				return false
			}
		}
		bufs[i] = b
	}
	return true
}

// waitLocked is get's slow path: it waits for a buffer, counted in the
// diagnostics. p.mu held.
func (p *bufferPool) waitLocked() *buffer {
	p.waits++
	if p.waiting == 0 {
		p.waitStart = time.Now()
	}
	p.waiting++
	defer func() { p.waiting-- }()
	for {
		p.cond.Wait()
		if p.closed {
			return nil
		}
		if b := p.takeLocked(); b != nil {
			return b
		}
	}
}

// poolStats is a snapshot of a bufferPool.
type poolStats struct {
	max, allocated, free, waiting int
	waits, puts                   uint64
	exhaustedFor                  time.Duration // how long someone has been waiting (0: nobody)
}

func (p *bufferPool) stats() poolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := poolStats{max: p.max, allocated: p.allocated, free: len(p.free), waiting: p.waiting, waits: p.waits, puts: p.puts}
	if p.waiting > 0 {
		s.exhaustedFor = max(time.Since(p.waitStart), 1)
	}
	return s
}

// put returns buffers to the pool; nil entries are skipped.
func (p *bufferPool) put(bufs ...*buffer) {
	p.mu.Lock()
	for _, b := range bufs {
		if b != nil {
			p.free = append(p.free, b)
		}
	}
	p.puts++
	p.mu.Unlock()
	p.cond.Broadcast()
}

// close wakes every waiter in get; later gets return nil.
func (p *bufferPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cond.Broadcast()
}

// outContainer is a batch of outbound packets of one peer: the unit of
// encryption work and of ordering (see doc.go). Its mutex is held from
// enqueue until the encryption worker finishes.
type outContainer struct {
	mu    sync.Mutex
	peer  *Peer
	kp    *keypair
	n     int
	ok    bool // sealed successfully
	wire  int  // bytes on the wire after sealing
	bufs  [ciphers.MaxBatch]*buffer
	sizes [ciphers.MaxBatch]int // inner packet lengths
	pkts  [ciphers.MaxBatch][]byte
}

// inContainer is a batch of received data packets of one keypair. The
// packets are pkts[:n]; the container owns bufs[:nbufs], released with
// it. With in-place receive a buffer can hold several packets, some of
// them in earlier containers of the same peer (the container that owns
// it is the last one to be processed).
type inContainer struct {
	mu    sync.Mutex
	kp    *keypair
	n     int
	nbufs int
	mask  ciphers.Mask
	bufs  [ciphers.MaxBatch]*buffer
	pkts  [ciphers.MaxBatch][]byte
	eps   [ciphers.MaxBatch]netio.Endpoint
	owner [ciphers.MaxBatch]int16 // reader slot of each packet (in-place receive)
	seq   int                     // creation order within the reader's vector
	// Set by openContainer: pkts[:verified] had their tags checked; the
	// rest were refused unchecked, short when a forgery budget (peerShort:
	// the peer's) was spent.
	verified         int
	short, peerShort bool
}

// containerPool recycles containers of type T (no cap: every live
// container holds at least one buffer, and buffers are capped).
type containerPool[T any] struct {
	mu   sync.Mutex
	free []*T
}

func (p *containerPool[T]) get() *T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		c := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		return c
	}
	return new(T)
}

func (p *containerPool[T]) put(c *T) {
	p.mu.Lock()
	p.free = append(p.free, c)
	p.mu.Unlock()
}

// releaseOut returns c's buffers and c itself to the device pools, clearing
// every pointer first (limits the damage of a use after free).
func (d *Device) releaseOut(c *outContainer) {
	d.buffers.put(c.bufs[:c.n]...)
	clear(c.bufs[:c.n])
	clear(c.pkts[:c.n])
	if c.kp != nil {
		c.kp.release()
	}
	c.n, c.peer, c.kp, c.ok, c.wire = 0, nil, nil, false, 0
	d.outPool.put(c)
}

// releaseIn is releaseOut for inbound containers.
func (d *Device) releaseIn(c *inContainer) {
	d.buffers.put(c.bufs[:c.nbufs]...)
	clear(c.bufs[:c.nbufs])
	clear(c.pkts[:c.n])
	clear(c.eps[:c.n])
	if c.kp != nil {
		c.kp.release()
	}
	c.n, c.nbufs, c.kp, c.mask = 0, 0, nil, ciphers.Mask{}
	c.verified, c.short, c.peerShort = 0, false, false
	d.inPool.put(c)
}
