// Package faultbed is gmtun's fault bed: a user-space impairment relay for
// the UDP underlay between two sites (loss, duplication, reordering, bit
// corruption, delay, rate), a flooder of garbage and valid-mac1 handshake
// initiations from spoofed sources, and the traffic checkers the tests use
// (a UDP echo prober with byte-exact payloads and arrival gaps, a TCP
// transfer with SHA-256 at both ends).
//
// The kernel of the test machines has no netem qdisc, so the impairment is
// built here: the relay runs in a middle network namespace, each site's
// peer endpoint names the relay, and the relay forwards each datagram to
// the other site. The end-to-end checks live in cmd/gmtun
// (netns_fault_test.go); `sudo make bench-faults` runs them longer and
// prints a table (cmd/faulttable).
//
// Sockets are created by the caller inside the namespace it wants (they
// stay there); every type here only uses them.
package faultbed

import (
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Impairment says what the relay does to the datagrams of one direction.
// Each datagram suffers at most one of loss, duplication, corruption and
// reordering (drawn in that order), so the receiver's counters can be
// checked against the relay's: a corrupted datagram is one authentication
// failure, a duplicate one replay.
type Impairment struct {
	// Loss, Dup, Corrupt and Reorder are probabilities in [0, 1].
	Loss, Dup, Corrupt, Reorder float64
	// ReorderHold is how long a reordered datagram is held back (default
	// 5 ms): the datagrams behind it overtake it.
	ReorderHold time.Duration
	// Delay is added to every datagram.
	Delay time.Duration
	// RateBytes caps the bytes per second forwarded (0: no cap).
	RateBytes int64
}

// Counters count what the relay did to the datagrams sent toward one side.
// Data counts only datagrams whose type byte was 0x14 (transport data)
// before any corruption.
type Counters struct {
	Received, Forwarded, Lost, Duplicated, Corrupted, Reordered, Blackholed atomic.Uint64
	DataDuplicated, DataCorrupted                                           atomic.Uint64
}

// Snapshot is a plain copy of Counters.
type Snapshot struct {
	Received, Forwarded, Lost, Duplicated, Corrupted, Reordered, Blackholed uint64
	DataDuplicated, DataCorrupted                                           uint64
}

// Snapshot copies the counters.
func (c *Counters) Snapshot() Snapshot {
	return Snapshot{
		Received: c.Received.Load(), Forwarded: c.Forwarded.Load(), Lost: c.Lost.Load(),
		Duplicated: c.Duplicated.Load(), Corrupted: c.Corrupted.Load(), Reordered: c.Reordered.Load(),
		Blackholed: c.Blackholed.Load(), DataDuplicated: c.DataDuplicated.Load(), DataCorrupted: c.DataCorrupted.Load(),
	}
}

// Side is one end of the relay: the sockets the relay uses toward a site
// (it reads all of them and sends from the active one, so switching the
// active socket looks like the other site roaming to a new address) and
// the site's address (updated from the source of what the site sends, as
// a NAT would, so the site itself can roam).
type Side struct {
	Conns []*net.UDPConn
	Peer  netip.AddrPort
}

// dataType is the type byte of a transport data datagram.
const dataType = 0x14

type side struct {
	conns  []*net.UDPConn
	active atomic.Int32
	peer   atomic.Pointer[netip.AddrPort]
	in     chan item // datagrams to send toward this side
	c      Counters
	imp    atomic.Pointer[Impairment]
}

type item struct {
	b       []byte
	release time.Time
}

// Relay forwards datagrams between two sides with impairments.
type Relay struct {
	sides     [2]*side
	blackhole atomic.Bool
	wg        sync.WaitGroup
	closeOnce sync.Once
	done      chan struct{}
	free      chan []byte
}

// NewRelay starts a relay between a and b; imp applies to both
// directions until SetImpairment changes it.
func NewRelay(a, b Side, imp Impairment, seed uint64) (*Relay, error) {
	if len(a.Conns) == 0 || len(b.Conns) == 0 {
		return nil, errors.New("faultbed: a relay side needs a socket")
	}
	r := &Relay{done: make(chan struct{})}
	r.free = make(chan []byte, 16384)
	for i, s := range []Side{a, b} {
		sd := &side{conns: s.Conns, in: make(chan item, 4096)}
		p := s.Peer
		sd.peer.Store(&p)
		im := imp
		sd.imp.Store(&im)
		r.sides[i] = sd
	}
	for i, sd := range r.sides {
		other := r.sides[1-i]
		for j, c := range sd.conns {
			r.wg.Add(1)
			go r.read(sd, other, c, rand.New(rand.NewPCG(seed, uint64(i*16+j))))
		}
		r.wg.Add(1)
		go r.send(sd)
	}
	return r, nil
}

// SetImpairment changes the impairment of both directions.
func (r *Relay) SetImpairment(imp Impairment) {
	for _, sd := range r.sides {
		im := imp
		sd.imp.Store(&im)
	}
}

// SetBlackhole drops every datagram (both ways) while on: the sites cannot
// reach each other.
func (r *Relay) SetBlackhole(on bool) { r.blackhole.Store(on) }

// SetActive makes the relay send toward side i (0 = a, 1 = b) from its
// conn-th socket: to that site the other one has moved to a new address.
func (r *Relay) SetActive(i, conn int) { r.sides[i].active.Store(int32(conn)) }

// Toward returns the counters of the datagrams sent toward side i.
func (r *Relay) Toward(i int) Snapshot { return r.sides[i].c.Snapshot() }

// Peer returns the current address of side i's site.
func (r *Relay) Peer(i int) netip.AddrPort { return *r.sides[i].peer.Load() }

// Close stops the relay and closes its sockets.
func (r *Relay) Close() {
	r.closeOnce.Do(func() {
		close(r.done)
		for _, sd := range r.sides {
			for _, c := range sd.conns {
				c.Close()
			}
		}
		r.wg.Wait()
	})
}

// read receives datagrams from one site (from) and queues them, impaired,
// toward the other (to).
func (r *Relay) read(from, to *side, c *net.UDPConn, rng *rand.Rand) {
	defer r.wg.Done()
	for {
		buf := r.get()
		n, src, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			r.put(buf)
			select {
			case <-r.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if cur := from.peer.Load(); *cur != src {
			from.peer.Store(&src)
		}
		b := buf[:n]
		st := &to.c
		st.Received.Add(1)
		if r.blackhole.Load() {
			st.Blackholed.Add(1)
			r.put(buf)
			continue
		}
		imp := to.imp.Load()
		now := time.Now()
		release := now.Add(imp.Delay)
		isData := n > 0 && b[0] == dataType
		x := rng.Float64()
		switch {
		case x < imp.Loss:
			st.Lost.Add(1)
			r.put(buf)
			continue
		case x < imp.Loss+imp.Dup:
			st.Duplicated.Add(1)
			if isData {
				st.DataDuplicated.Add(1)
			}
			dup := append(r.get()[:0], b...)
			r.enqueue(to, item{b: dup, release: release})
		case x < imp.Loss+imp.Dup+imp.Corrupt:
			if n > 0 {
				st.Corrupted.Add(1)
				if isData {
					st.DataCorrupted.Add(1)
				}
				bit := rng.IntN(n * 8)
				b[bit/8] ^= 1 << (bit % 8)
			}
		case x < imp.Loss+imp.Dup+imp.Corrupt+imp.Reorder:
			st.Reordered.Add(1)
			hold := imp.ReorderHold
			if hold == 0 {
				hold = 5 * time.Millisecond
			}
			release = release.Add(hold)
		}
		r.enqueue(to, item{b: b, release: release})
	}
}

func (r *Relay) enqueue(to *side, it item) {
	select {
	case to.in <- it:
	case <-r.done:
	}
}

// send forwards the queued datagrams toward sd when their release time
// comes, within the rate cap. Held (reordered) datagrams are released by
// time, so later ones overtake them.
func (r *Relay) send(sd *side) {
	defer r.wg.Done()
	var queue []item // sorted by release
	var nextFree time.Time
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var wake <-chan time.Time
		if len(queue) > 0 {
			d := time.Until(queue[0].release)
			if d <= 0 {
				it := queue[0]
				queue = queue[1:]
				r.forward(sd, it.b, &nextFree)
				continue
			}
			timer.Reset(d)
			wake = timer.C
		}
		select {
		case it := <-sd.in:
			if len(queue) == 0 && !it.release.After(time.Now()) {
				r.forward(sd, it.b, &nextFree)
				continue
			}
			// Insert in release order (held datagrams are few).
			i := len(queue)
			for i > 0 && queue[i-1].release.After(it.release) {
				i--
			}
			queue = append(queue, item{})
			copy(queue[i+1:], queue[i:])
			queue[i] = it
		case <-wake:
		case <-r.done:
			return
		}
		if wake != nil && !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

func (r *Relay) forward(sd *side, b []byte, nextFree *time.Time) {
	imp := sd.imp.Load()
	if imp.RateBytes > 0 {
		now := time.Now()
		if nextFree.After(now) {
			time.Sleep(nextFree.Sub(now))
		} else {
			*nextFree = now
		}
		*nextFree = nextFree.Add(time.Duration(int64(len(b)) * int64(time.Second) / imp.RateBytes))
	}
	c := sd.conns[int(sd.active.Load())%len(sd.conns)]
	if _, err := c.WriteToUDPAddrPort(b, *sd.peer.Load()); err == nil {
		sd.c.Forwarded.Add(1)
	}
	r.put(b[:cap(b)])
}

// bufSize holds any datagram of a 1500-byte MTU underlay (no GRO on the
// relay's sockets).
const bufSize = 2048

func (r *Relay) get() []byte {
	select {
	case b := <-r.free:
		return b
	default:
		return make([]byte, bufSize)
	}
}

func (r *Relay) put(b []byte) {
	select {
	case r.free <- b[:bufSize]:
	default:
	}
}
