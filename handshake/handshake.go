package handshake

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/emmansun/gmsm/ecdh"
	"github.com/emmansun/gmsm/sm3"

	"github.com/gmtun/gmtun/ciphers"
)

// DefaultID is the SM2 user identity used when none is configured
// (GM/T 0009-2012 §10; GB/T 35276-2017): ASCII "1234567812345678".
const DefaultID = "1234567812345678"

// maxIDLen bounds an SM2 user ID: ENTL is a 16-bit bit length
// (GB/T 32918.2 §5.5).
const maxIDLen = 0x2000 - 1

// IndexAllocator hands out receiver indices that are unique on the device.
// The tunnel implements it with its index table (which also maps indices of
// established keypairs). The handshake package calls NewIndex once per
// handshake it starts or answers, and FreeIndex for indices of handshakes
// it abandons; indices of completed handshakes pass to the tunnel in Keys.
// Implementations must be safe for concurrent use.
type IndexAllocator interface {
	NewIndex(p *Peer) (uint32, error)
	FreeIndex(index uint32)
}

// Config configures a Local.
type Config struct {
	// PrivateKey is the local static key. Required.
	PrivateKey *PrivateKey
	// ID is the local SM2 user identity (GB/T 32918.2 §5.5); peers must
	// configure the same value for our key. Empty means DefaultID.
	ID []byte
	// Rand is the randomness source for ephemerals, cookie secrets and
	// cookie-reply nonces; nil means crypto/rand. Reads are serialized,
	// so a non-concurrent reader (tests) is fine.
	Rand io.Reader
	// Indices allocates receiver indices. Required.
	Indices IndexAllocator
}

// Local is one device's handshake state: its static key and identity, its
// configured peers, its pending handshakes and its cookie secret. All
// methods are safe for concurrent use by many handshake workers.
type Local struct {
	priv     *PrivateKey
	id       []byte
	z        [32]byte // Z of our own key and ID
	staticID [32]byte // SM3(P_self): our identity inside enc_static
	t0       [32]byte // H(C0 ‖ P_self): transcript start when we respond
	mac1Key  [32]byte // SM3("mac1----" ‖ P_self): verifies incoming mac1
	indices  IndexAllocator

	randMu sync.Mutex
	rand   io.Reader

	mac1Pool sync.Pool // *macState keyed with mac1Key
	macPool  sync.Pool // *macScratch for mac2 and cookies (cookie.go)

	mu      sync.RWMutex
	peers   map[[32]byte]*Peer // by static_id
	pending map[uint32]*Peer   // local index of a pending handshake → peer

	cookieMu     sync.Mutex
	cookieSecret [32]byte
	cookieTime   time.Time
	cookieSet    bool

	// trace, if set (tests only), receives every intermediate value.
	trace func(name string, v []byte)
}

var c0 = hashParts([]byte(protocolName))

// NewLocal returns the handshake state of a device.
func NewLocal(cfg Config) (*Local, error) {
	if cfg.PrivateKey == nil {
		return nil, errors.New("handshake: Config.PrivateKey is required")
	}
	if cfg.Indices == nil {
		return nil, errors.New("handshake: Config.Indices is required")
	}
	id, err := checkID(cfg.ID)
	if err != nil {
		return nil, err
	}
	l := &Local{
		priv:    cfg.PrivateKey,
		id:      id,
		indices: cfg.Indices,
		rand:    cfg.Rand,
		peers:   make(map[[32]byte]*Peer),
		pending: make(map[uint32]*Peer),
	}
	if l.rand == nil {
		l.rand = rand.Reader
	}
	pub := cfg.PrivateKey.Public()
	if l.z, err = za(pub, id); err != nil {
		return nil, err
	}
	l.staticID = hashParts(pub.raw[:])
	l.t0 = hashParts(c0[:], pub.raw[:])
	l.mac1Key = hashParts([]byte(labelMAC1), pub.raw[:])
	key := l.mac1Key
	l.mac1Pool.New = func() any { return &macState{h: hmac.New(sm3.New, key[:])} }
	return l, nil
}

func checkID(id []byte) ([]byte, error) {
	if len(id) == 0 {
		return []byte(DefaultID), nil
	}
	if len(id) > maxIDLen {
		return nil, fmt.Errorf("handshake: SM2 ID is %d bytes, at most %d allowed", len(id), maxIDLen)
	}
	return slices.Clone(id), nil
}

// za computes Z = SM3(ENTL ‖ ID ‖ a ‖ b ‖ x_G ‖ y_G ‖ x ‖ y) (GB/T 32918.2 §5.5).
func za(pub *PublicKey, id []byte) (z [32]byte, err error) {
	b, err := pub.k.SM2ZA(sm3.New(), id)
	if err != nil {
		return z, fmt.Errorf("handshake: computing Z: %w", err)
	}
	copy(z[:], b)
	return z, nil
}

// PublicKey returns the local static public key.
func (l *Local) PublicKey() *PublicKey { return l.priv.Public() }

func (l *Local) readRand(b []byte) error {
	l.randMu.Lock()
	defer l.randMu.Unlock()
	if _, err := io.ReadFull(l.rand, b); err != nil {
		return fmt.Errorf("handshake: reading randomness: %w", err)
	}
	return nil
}

func (l *Local) newEphemeral() (*ecdh.PrivateKey, error) {
	l.randMu.Lock()
	defer l.randMu.Unlock()
	return generateScalar(l.rand)
}

func (l *Local) tr(name string, v []byte) {
	if l.trace != nil {
		l.trace(name, v)
	}
}

// PeerConfig configures a peer.
type PeerConfig struct {
	// PublicKey is the peer's static key. Required; must differ from ours.
	PublicKey *PublicKey
	// ID is the peer's SM2 user identity; empty means DefaultID.
	ID []byte
	// PresharedKey is mixed into the key schedule; nil means 32 zero bytes.
	PresharedKey *[32]byte
	// Suites are the suites allowed with this peer, in preference order:
	// offered in this order when we initiate, and the allowed set when we
	// respond. Empty means ciphers.DefaultSuites (never zuc-128: a 32-bit
	// tag is accepted only when the configuration names it). At most
	// MaxOffer, no duplicates.
	Suites []ciphers.SuiteID
	// Context is an opaque value for the caller, returned by Peer.Context.
	Context any
}

// Peer is a configured remote gateway: immutable precomputed values plus the
// state of its pending handshakes, guarded by a mutex.
type Peer struct {
	local    *Local
	pub      *PublicKey
	ecdhPub  *ecdh.PublicKey
	id       []byte
	z        [32]byte
	staticID [32]byte
	ss       [32]byte // x([d_self] P_peer)
	t0       [32]byte // H(C0 ‖ P_peer): transcript start when we initiate
	mac1Key  [32]byte // SM3("mac1----" ‖ P_peer): mac1 on messages we send
	psk      [32]byte
	suites   []ciphers.SuiteID
	ctx      any

	mu         sync.Mutex
	lastTS     [tsSize]byte // greatest timestamp accepted from this peer
	lastInit   time.Time    // when the last initiation was consumed
	hasLastTS  bool
	init       *initiatorState
	resp       *responderState
	lastMAC1   [macSize]byte // mac1 of the last message we sent (cookie AAD)
	hasMAC1    bool
	cookie     [cookieSize]byte
	cookieTime time.Time
	hasCookie  bool
	refused    []suiteRefusal // suites refused for a while (RefuseSuite)
}

// suiteRefusal is one RefuseSuite: suite id is neither offered nor
// accepted before until.
type suiteRefusal struct {
	id    ciphers.SuiteID
	until time.Time
}

type initiatorState struct {
	eph     *ecdh.PrivateKey
	ephPub  Point
	index   uint32
	t3, ck2 [32]byte
	offer   [offerSize]byte
	created time.Time
}

// wipe zeroes the chaining values of an initiation that completed or was
// abandoned and drops its ephemeral key (gmsm keeps the scalar in its own
// memory, which Go cannot overwrite; without references it is garbage).
// p.mu held.
func (st *initiatorState) wipe() {
	clear(st.ck2[:])
	clear(st.t3[:])
	st.eph = nil
}

type responderState struct {
	index   uint32
	expect  [MessageConfirmOffsetMAC1]byte // the confirm we expect, minus mac1
	keys    *Keys
	created time.Time
}

// AddPeer validates cfg, precomputes the peer's values (Z, static-static
// ECDH, mac1 key) and registers it.
func (l *Local) AddPeer(cfg PeerConfig) (*Peer, error) {
	if cfg.PublicKey == nil {
		return nil, errors.New("handshake: PeerConfig.PublicKey is required")
	}
	if cfg.PublicKey.Equal(l.priv.Public()) {
		return nil, errors.New("handshake: peer public key equals the local public key")
	}
	id, err := checkID(cfg.ID)
	if err != nil {
		return nil, err
	}
	suites := cfg.Suites
	if len(suites) == 0 {
		suites = ciphers.DefaultSuites[:]
	}
	if err := checkSuites(suites); err != nil {
		return nil, err
	}
	p := &Peer{
		local:   l,
		pub:     cfg.PublicKey,
		ecdhPub: cfg.PublicKey.k,
		id:      id,
		suites:  slices.Clone(suites),
		ctx:     cfg.Context,
	}
	if cfg.PresharedKey != nil {
		p.psk = *cfg.PresharedKey
	}
	if p.z, err = za(p.pub, id); err != nil {
		return nil, err
	}
	ss, err := l.priv.k.ECDH(p.ecdhPub)
	if err != nil {
		return nil, fmt.Errorf("handshake: static ECDH with peer: %w", err)
	}
	copy(p.ss[:], ss)
	clear(ss)
	p.staticID = hashParts(p.pub.raw[:])
	p.t0 = hashParts(c0[:], p.pub.raw[:])
	p.mac1Key = hashParts([]byte(labelMAC1), p.pub.raw[:])

	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.peers[p.staticID]; dup {
		return nil, errors.New("handshake: a peer with this public key is already configured")
	}
	l.peers[p.staticID] = p
	return p, nil
}

func checkSuites(s []ciphers.SuiteID) error {
	if len(s) > MaxOffer {
		return fmt.Errorf("handshake: at most %d suites per peer, got %d", MaxOffer, len(s))
	}
	for i, id := range s {
		if !slices.Contains(ciphers.Suites[:], id) {
			return fmt.Errorf("handshake: unknown suite %s", id)
		}
		if slices.Contains(s[:i], id) {
			return fmt.Errorf("handshake: suite %s listed twice", id)
		}
	}
	return nil
}

// RemovePeer unregisters p and abandons its pending handshakes (their
// indices are freed). Keys already returned stay valid.
func (l *Local) RemovePeer(p *Peer) {
	l.mu.Lock()
	if l.peers[p.staticID] == p {
		delete(l.peers, p.staticID)
	}
	l.mu.Unlock()
	p.ClearHandshakes()
}

// PublicKey returns the peer's static public key.
func (p *Peer) PublicKey() *PublicKey { return p.pub }

// Context returns PeerConfig.Context.
func (p *Peer) Context() any { return p.ctx }

// Suites returns the peer's allowed suites in preference order.
func (p *Peer) Suites() []ciphers.SuiteID { return slices.Clone(p.suites) }

// RefuseSuite stops offering and accepting suite id with this peer until
// the given time (compared with the now of CreateInitiation and
// ConsumeInitiation); a later call for the same suite replaces the time.
// The tunnel uses it to back off from zuc-128 after the peer's forgery
// budget ran out. A handshake whose only common suite is refused fails
// as without a common suite.
func (p *Peer) RefuseSuite(id ciphers.SuiteID, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.refused {
		if p.refused[i].id == id {
			p.refused[i].until = until
			return
		}
	}
	p.refused = append(p.refused, suiteRefusal{id: id, until: until})
}

// activeSuites returns the allowed suites not refused at now, into buf.
// p.mu held.
func (p *Peer) activeSuites(now time.Time, buf *[MaxOffer]ciphers.SuiteID) []ciphers.SuiteID {
	out := buf[:0]
	for _, id := range p.suites {
		ok := true
		for _, r := range p.refused {
			if r.id == id && now.Before(r.until) {
				ok = false
			}
		}
		if ok {
			out = append(out, id)
		}
	}
	return out
}

// ClearHandshakes abandons the peer's pending handshakes and frees their
// indices (the tunnel calls it when it gives up after RekeyAttemptTime).
func (p *Peer) ClearHandshakes() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setInit(nil)
	p.setResp(nil)
}

// setInit replaces the pending initiation, freeing the old index. p.mu held.
func (p *Peer) setInit(s *initiatorState) {
	l := p.local
	if old := p.init; old != nil {
		l.mu.Lock()
		delete(l.pending, old.index)
		l.mu.Unlock()
		l.indices.FreeIndex(old.index)
	}
	if old := p.init; old != nil && old != s {
		old.wipe()
	}
	p.init = s
	if s != nil {
		l.mu.Lock()
		l.pending[s.index] = p
		l.mu.Unlock()
	}
}

// setResp replaces the pending response, freeing the old index and wiping
// the old unconfirmed keys. p.mu held.
func (p *Peer) setResp(s *responderState) {
	l := p.local
	if old := p.resp; old != nil {
		l.mu.Lock()
		delete(l.pending, old.index)
		l.mu.Unlock()
		l.indices.FreeIndex(old.index)
	}
	p.resp = s
	if s != nil {
		l.mu.Lock()
		l.pending[s.index] = p
		l.mu.Unlock()
	}
}

// Keys is the result of a completed handshake: one keypair.
type Keys struct {
	// Peer is the remote gateway.
	Peer *Peer
	// Suite is the negotiated data suite.
	Suite ciphers.SuiteID
	// Send and Recv are the two directions. The initiator sends with
	// direction 0 (initiator→responder) and receives with direction 1.
	Send, Recv ciphers.DirectionKeys
	// LocalIndex is the receiver index the peer puts in data packets to
	// us; it stays allocated and now belongs to the caller. RemoteIndex is
	// the one we put in data packets to the peer.
	LocalIndex, RemoteIndex uint32
	// IsInitiator reports whether we initiated this handshake (only the
	// initiator rekeys by time).
	IsInitiator bool
	// Created is the `now` at which the keys were derived.
	Created time.Time
}

// Wipe zeroes the key material.
func (k *Keys) Wipe() {
	for _, d := range []*ciphers.DirectionKeys{&k.Send, &k.Recv} {
		clear(d.Enc)
		clear(d.MAC)
		clear(d.Salt)
	}
}

// tai64n encodes t as TAI64N (seconds since 1970 + 2^62 + 10, big-endian,
// then nanoseconds big-endian) with the low 24 bits of the nanoseconds
// cleared so the timestamp does not reveal fine clock state.
func tai64n(t time.Time) (b [tsSize]byte) {
	const base = uint64(1)<<62 + 10
	binary.BigEndian.PutUint64(b[:8], base+uint64(t.Unix()))
	binary.BigEndian.PutUint32(b[8:], uint32(t.Nanosecond())&^(1<<24-1))
	return b
}

func offerBytes(s []ciphers.SuiteID) (o [offerSize]byte) {
	for i, id := range s {
		o[i] = byte(id)
	}
	return o
}

// parseOffer validates an offer or allowed list: suite IDs, then zero
// padding, no zero before a non-zero, no duplicates. Unknown IDs are kept
// (a later version may offer suites we do not implement).
func parseOffer(o []byte, allowEmpty bool) ([]ciphers.SuiteID, bool) {
	var out []ciphers.SuiteID
	end := false
	for i, b := range o {
		if b == 0 {
			end = true
			continue
		}
		if end || bytes.IndexByte(o[:i], b) >= 0 {
			return nil, false
		}
		out = append(out, ciphers.SuiteID(b))
	}
	return out, allowEmpty || len(out) > 0
}

// checkMAC1 verifies mac1 of a message whose length and header are valid.
func (l *Local) checkMAC1(msg []byte, off int) bool {
	m := l.mac1Pool.Get().(*macState)
	ok := m.verify(msg[:off], msg[off:off+macSize])
	l.mac1Pool.Put(m)
	return ok
}

// addMACs writes mac1 (keyed by the peer's public key) and, if we hold a
// fresh cookie from the peer, mac2 into msg. p.mu held.
func (p *Peer) addMACs(msg []byte, mac1Off, mac2Off int, now time.Time) {
	m1 := hmacSM3(p.mac1Key[:], msg[:mac1Off])
	copy(msg[mac1Off:mac1Off+macSize], m1[:macSize])
	copy(p.lastMAC1[:], m1[:macSize])
	p.hasMAC1 = true
	if mac2Off == 0 {
		return
	}
	clear(msg[mac2Off : mac2Off+macSize])
	if p.hasCookie && now.Sub(p.cookieTime) < CookieRefreshTime-RekeyTimeout {
		m2 := hmacSM3(p.cookie[:], msg[:mac2Off])
		copy(msg[mac2Off:], m2[:macSize])
	}
}
