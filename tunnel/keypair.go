package tunnel

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/replay"
)

// keypair is one session: both directions of a completed handshake.
type keypair struct {
	peer        *Peer
	suite       ciphers.SuiteID
	params      ciphers.Params
	send, recv  ciphers.Key
	localIndex  uint32 // the index the peer puts in packets to us
	remoteIndex uint32 // the index we put in packets to the peer
	isInitiator bool
	created     time.Time

	// sendCounter is the next counter to use; a batch of n reserves
	// [Add(n)-n, Add(n)) under the peer's send lock.
	sendCounter atomic.Uint64
	sendBytes   atomic.Uint64 // bytes sealed (bodies), for byte limits
	// confirmed is false for a responder's keypair until the peer proves
	// it holds it (0x13 or an authenticated data packet).
	confirmed atomic.Bool
	// authFailures counts the packets whose tag failed; authUsed adds
	// the checks reserved and not yet settled (reserveAuth). Neither
	// exceeds params.MaxAuthFailures.
	authFailures atomic.Uint64
	authUsed     atomic.Uint64
	// peerBudget is the peer's forgery budget, for short-tag suites
	// (zuc-128); nil otherwise.
	peerBudget *peerAuthBudget

	// refs counts the peer's own reference (until retire) and one per
	// container holding the keypair; the last release wipes the keys.
	refs    atomic.Int64
	retired atomic.Bool
	wiped   atomic.Bool // set after the last release wiped the keys

	// dead is set when the receive key used up its integrity budget:
	// the keypair neither sends nor receives any more.
	dead atomic.Bool

	// replay is touched only by the peer's sequential receiver.
	replay replay.Filter
}

// newKeypair builds the ciphers of a completed handshake and wipes the
// handshake's copy of the key material.
func newKeypair(p *Peer, k *handshake.Keys) (*keypair, error) {
	defer k.Wipe()
	send, err := ciphers.NewKey(k.Suite, k.Send)
	if err != nil {
		return nil, err
	}
	recv, err := ciphers.NewKey(k.Suite, k.Recv)
	if err != nil {
		send.Wipe()
		return nil, err
	}
	kp := &keypair{
		peer: p, suite: k.Suite, params: k.Suite.Params(),
		send: send, recv: recv,
		localIndex: k.LocalIndex, remoteIndex: k.RemoteIndex,
		isInitiator: k.IsInitiator, created: k.Created,
	}
	kp.confirmed.Store(k.IsInitiator)
	kp.refs.Store(1)
	if shortTag(kp.params) {
		kp.peerBudget = p.authBudget
	}
	return kp, nil
}

// indexEntry is what a receiver index names: a pending handshake of a peer
// (kp == nil) or an established keypair.
type indexEntry struct {
	peer *Peer
	kp   *keypair
}

// indexTable maps receiver indices to peers and keypairs. It implements
// handshake.IndexAllocator; the handshake package allocates an index per
// handshake and the table later learns the keypair that owns it.
type indexTable struct {
	mu    sync.RWMutex
	table map[uint32]indexEntry
}

var _ handshake.IndexAllocator = (*indexTable)(nil)

var errIndexSpace = errors.New("tunnel: no free receiver index")

// NewIndex allocates a random unused index for a handshake with hp.
func (t *indexTable) NewIndex(hp *handshake.Peer) (uint32, error) {
	p, _ := hp.Context().(*Peer)
	var b [4]byte
	for range 64 {
		if _, err := rand.Read(b[:]); err != nil {
			return 0, fmt.Errorf("tunnel: drawing an index: %w", err)
		}
		idx := binary.LittleEndian.Uint32(b[:])
		t.mu.Lock()
		if _, used := t.table[idx]; !used {
			t.table[idx] = indexEntry{peer: p}
			t.mu.Unlock()
			return idx, nil
		}
		t.mu.Unlock()
	}
	return 0, errIndexSpace
}

// FreeIndex releases an index.
func (t *indexTable) FreeIndex(idx uint32) {
	t.mu.Lock()
	delete(t.table, idx)
	t.mu.Unlock()
}

// setKeypair attaches kp to its local index, which the handshake has
// allocated; it fails if the index was freed meanwhile.
func (t *indexTable) setKeypair(kp *keypair) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.table[kp.localIndex]
	if !ok || e.peer != kp.peer {
		return false
	}
	t.table[kp.localIndex] = indexEntry{peer: kp.peer, kp: kp}
	return true
}

// freeKeypair releases kp's index if it still names kp.
func (t *indexTable) freeKeypair(kp *keypair) {
	t.mu.Lock()
	if e, ok := t.table[kp.localIndex]; ok && e.kp == kp {
		delete(t.table, kp.localIndex)
	}
	t.mu.Unlock()
}

// lookup returns the keypair of an index, or nil.
func (t *indexTable) lookup(idx uint32) *keypair {
	t.mu.RLock()
	e := t.table[idx]
	t.mu.RUnlock()
	return e.kp
}

func (t *indexTable) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.table)
}
