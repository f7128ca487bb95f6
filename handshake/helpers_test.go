package handshake

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
)

// testIndices is a deterministic IndexAllocator that checks the package
// frees only indices it owns.
type testIndices struct {
	mu    sync.Mutex
	base  uint32
	next  uint32
	used  map[uint32]bool
	fails []string
}

func newTestIndices(base uint32) *testIndices {
	return &testIndices{base: base, used: map[uint32]bool{}}
}

func (a *testIndices) NewIndex(*Peer) (uint32, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	i := a.base + a.next
	a.used[i] = true
	return i, nil
}

func (a *testIndices) FreeIndex(i uint32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.used[i] {
		a.fails = append(a.fails, fmt.Sprintf("free of unallocated index %#x", i))
	}
	delete(a.used, i)
}

func (a *testIndices) inUse() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.used)
}

// detRand is a deterministic byte stream: SM3(seed ‖ counter) blocks.
type detRand struct {
	seed string
	ctr  uint64
	buf  []byte
}

func (d *detRand) Read(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(d.buf) == 0 {
			var c [8]byte
			binary.BigEndian.PutUint64(c[:], d.ctr)
			d.ctr++
			h := hashParts([]byte(d.seed), c[:])
			d.buf = h[:]
		}
		k := copy(p, d.buf)
		p, d.buf = p[k:], d.buf[k:]
	}
	return n, nil
}

type pairOpts struct {
	iSuites, rSuites []ciphers.SuiteID
	iPSK, rPSK       *[32]byte
	iIDofR, rIDofI   []byte // what each side believes the other's ID is
}

type pair struct {
	i, r       *Local
	iIdx, rIdx *testIndices
	pi         *Peer // R as seen by I
	pr         *Peer // I as seen by R
}

func testKey(t testing.TB, seed string) *PrivateKey {
	t.Helper()
	k, err := GeneratePrivateKey(&detRand{seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newPair(t testing.TB, o pairOpts) *pair {
	t.Helper()
	ki, kr := testKey(t, "static-i"), testKey(t, "static-r")
	p := &pair{iIdx: newTestIndices(0x1000), rIdx: newTestIndices(0x2000)}
	var err error
	if p.i, err = NewLocal(Config{PrivateKey: ki, Rand: &detRand{seed: "rand-i"}, Indices: p.iIdx}); err != nil {
		t.Fatal(err)
	}
	if p.r, err = NewLocal(Config{PrivateKey: kr, Rand: &detRand{seed: "rand-r"}, Indices: p.rIdx}); err != nil {
		t.Fatal(err)
	}
	if p.pi, err = p.i.AddPeer(PeerConfig{PublicKey: kr.Public(), Suites: o.iSuites, PresharedKey: o.iPSK, ID: o.iIDofR}); err != nil {
		t.Fatal(err)
	}
	if p.pr, err = p.r.AddPeer(PeerConfig{PublicKey: ki.Public(), Suites: o.rSuites, PresharedKey: o.rPSK, ID: o.rIDofI}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, a := range []*testIndices{p.iIdx, p.rIdx} {
			for _, f := range a.fails {
				t.Error(f)
			}
		}
	})
	return p
}

// state is a comparable snapshot of everything a rejected message must not
// change.
type state struct {
	pending   int
	indices   int
	peers     [4]peerState
	cookieSet bool
}

type peerState struct {
	lastTS    [tsSize]byte
	hasLastTS bool
	lastInit  time.Time
	init      *initiatorState
	resp      *responderState
	hasCookie bool
	cookie    [cookieSize]byte
	lastMAC1  [macSize]byte
}

func snap(l *Local, idx *testIndices) state {
	l.mu.RLock()
	s := state{pending: len(l.pending), indices: idx.inUse()}
	i := 0
	for _, p := range l.peers {
		p.mu.Lock()
		s.peers[i] = peerState{p.lastTS, p.hasLastTS, p.lastInit, p.init, p.resp, p.hasCookie, p.cookie, p.lastMAC1}
		p.mu.Unlock()
		i++
	}
	l.mu.RUnlock()
	l.cookieMu.Lock()
	s.cookieSet = l.cookieSet
	l.cookieMu.Unlock()
	return s
}

// remac recomputes mac1 of a tampered message for the given receiver.
func remac(msg []byte, receiver *PublicKey) {
	var off int
	switch len(msg) {
	case MessageInitiationSize:
		off = MessageInitiationOffsetMAC1
	case MessageResponseSize:
		off = MessageResponseOffsetMAC1
	case MessageConfirmSize:
		off = MessageConfirmOffsetMAC1
	default:
		panic("remac: bad message")
	}
	key := hashParts([]byte(labelMAC1), receiver.raw[:])
	m := hmacSM3(key[:], msg[:off])
	copy(msg[off:], m[:macSize])
}

var t0 = time.Unix(1_750_000_000, 0)

func mustAddrPort(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
