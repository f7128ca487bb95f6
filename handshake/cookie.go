package handshake

import (
	"encoding/binary"
	"hash"
	"net/netip"
	"time"

	"github.com/emmansun/gmsm/sm3"
)

// Verdict is the outcome of screening a handshake message before it is
// queued for a handshake worker.
type Verdict uint8

// Screening outcomes.
const (
	// VerdictDrop: malformed or bad mac1; drop silently.
	VerdictDrop Verdict = iota
	// VerdictCookie: under load and without a valid mac2; answer with
	// CreateCookieReply (rate-limited) and drop the message.
	VerdictCookie
	// VerdictAccept: queue for a handshake worker (under load, apply the
	// per-source RateLimiter first).
	VerdictAccept
)

func (v Verdict) String() string {
	switch v {
	case VerdictDrop:
		return "drop"
	case VerdictCookie:
		return "cookie"
	case VerdictAccept:
		return "accept"
	}
	return "verdict(?)"
}

// Screen is the cheap gate in front of the handshake workers: exact length
// and header, then mac1 (HMAC-SM3 keyed by our public key), then — only
// when underLoad — mac2, which proves the source address can receive our
// cookie. A 0x13 needs no mac2 (it costs us no curve operation). It never
// performs an elliptic-curve operation and never allocates, so a tunnel
// runs it on its receive path before queueing anything. Cookie replies
// (0x15) are not screened: pass them to ConsumeCookieReply.
func (l *Local) Screen(msg []byte, src netip.AddrPort, underLoad bool, now time.Time) Verdict {
	m1, m2, ok := macOffsets(msg)
	if !ok || !l.checkMAC1(msg, m1) {
		return VerdictDrop
	}
	if !underLoad || m2 == 0 || l.checkMAC2(msg, m2, src, now) {
		return VerdictAccept
	}
	return VerdictCookie
}

// CarriesMAC2 reports whether msg (a handshake message of exact length)
// has a nonzero mac2 field: whether its sender claims to hold a cookie. It
// checks nothing cryptographic and costs a few byte loads, so a device
// under load can tell an initiation that can only earn a cookie reply
// from one that may be processed before it pays for mac1.
func CarriesMAC2(msg []byte) bool {
	_, m2, ok := macOffsets(msg)
	if !ok || m2 == 0 {
		return false
	}
	var nz byte
	for _, b := range msg[m2 : m2+macSize] {
		nz |= b
	}
	return nz != 0
}

// macScratch is a pooled SM3 state and the buffers of one HMAC-SM3 with a
// key chosen per call (the cookie secret, a cookie), so that checking mac2
// does not allocate. Key material left in it is cleared after each use.
type macScratch struct {
	h     hash.Hash
	pad   [sm3.BlockSize]byte
	inner [sm3.Size]byte
	out   [sm3.Size]byte
	src   [18]byte
	// A cookie reply's cookie, nonce, key and sealed cookie.
	cookie [cookieSize]byte
	nonce  [MessageCookieReplyOffsetCookie - MessageCookieReplyOffsetNonce]byte
	key    [16]byte
	sealed [cookieSize + macSize]byte
}

// labelCookieBytes is labelCookie for hash.Hash.Write (a conversion at
// each call would allocate).
var labelCookieBytes = []byte(labelCookie)

func (l *Local) getScratch() *macScratch {
	if s, ok := l.macPool.Get().(*macScratch); ok {
		return s
	}
	return &macScratch{h: sm3.New()}
}

func (l *Local) putScratch(s *macScratch) {
	clear(s.pad[:])
	clear(s.inner[:])
	clear(s.out[:])
	clear(s.src[:])
	clear(s.cookie[:])
	clear(s.key[:])
	clear(s.sealed[:])
	s.h.Reset()
	l.macPool.Put(s)
}

// hmac computes HMAC-SM3(key, a ‖ b) into s.out (RFC 2104; key ≤ 64 bytes).
func (s *macScratch) hmac(key, a, b []byte) {
	clear(s.pad[:])
	copy(s.pad[:], key)
	for i := range s.pad {
		s.pad[i] ^= 0x36
	}
	s.h.Reset()
	s.h.Write(s.pad[:])
	s.h.Write(a)
	s.h.Write(b)
	s.h.Sum(s.inner[:0])
	for i := range s.pad {
		s.pad[i] ^= 0x36 ^ 0x5c
	}
	s.h.Reset()
	s.h.Write(s.pad[:])
	s.h.Write(s.inner[:])
	s.h.Sum(s.out[:0])
}

// cookieSecretAt returns the cookie secret valid at now, drawing a new one
// every CookieRefreshTime (and when the clock steps back).
func (l *Local) cookieSecretAt(now time.Time) (secret [32]byte, err error) {
	l.cookieMu.Lock()
	defer l.cookieMu.Unlock()
	if !l.cookieSet || now.Sub(l.cookieTime) >= CookieRefreshTime || now.Before(l.cookieTime) {
		if err := l.readRand(l.cookieSecret[:]); err != nil {
			return secret, err
		}
		l.cookieTime, l.cookieSet = now, true
	}
	return l.cookieSecret, nil
}

// cookieInto computes into s.out[:cookieSize] the cookie for src:
// HMAC-SM3(secret, IPv6-mapped address ‖ BE16(port))[:16], where the
// 32-byte secret is redrawn every CookieRefreshTime. It is stateless per
// source: nothing about src is stored.
func (l *Local) cookieInto(s *macScratch, src netip.AddrPort, now time.Time) error {
	secret, err := l.cookieSecretAt(now)
	if err != nil {
		return err
	}
	a := src.Addr().As16()
	copy(s.src[:16], a[:])
	binary.BigEndian.PutUint16(s.src[16:], src.Port())
	s.hmac(secret[:], s.src[:], nil)
	clear(secret[:])
	return nil
}

// checkMAC2 verifies mac2 of msg from src without allocating. An all-zero
// mac2 (the sender holds no cookie) is refused without computing anything.
func (l *Local) checkMAC2(msg []byte, off int, src netip.AddrPort, now time.Time) bool {
	mac := msg[off : off+macSize]
	var nz byte
	for _, b := range mac {
		nz |= b
	}
	if nz == 0 {
		return false
	}
	s := l.getScratch()
	defer l.putScratch(s)
	if l.cookieInto(s, src, now) != nil {
		return false
	}
	var c [cookieSize]byte
	copy(c[:], s.out[:cookieSize])
	s.hmac(c[:], msg[:off], nil)
	clear(c[:])
	return equal16(s.out[:macSize], mac)
}

// cookieKey is the per-reply SM4 key SM3("cookie--" ‖ P ‖ nonce)[:16]
// where P is the public key of the party under load.
func cookieKey(pub *PublicKey, nonce []byte) (k [16]byte) {
	h := hashParts([]byte(labelCookie), pub.raw[:], nonce)
	copy(k[:], h[:16])
	return k
}

// CreateCookieReply answers msg (a 0x11 or 0x12 that Screen judged
// VerdictCookie) from src with a 0x15 carrying the cookie for src,
// encrypted under a key derived from our public key and a fresh 24-byte
// nonce, bound to msg's mac1.
func (l *Local) CreateCookieReply(msg []byte, src netip.AddrPort, now time.Time) (r [MessageCookieReplySize]byte, err error) {
	m1, m2, ok := macOffsets(msg)
	if !ok || m2 == 0 {
		return r, ErrMessageHeader
	}
	// Everything that passes through an interface or the SM4 kernels is
	// in the pooled scratch, so a flood's cookie replies allocate nothing.
	s := l.getScratch()
	defer l.putScratch(s)
	if err := l.cookieInto(s, src, now); err != nil {
		return r, err
	}
	copy(s.cookie[:], s.out[:cookieSize])
	if err := l.readRand(s.nonce[:]); err != nil {
		return r, err
	}
	// The reply key SM3("cookie--" ‖ P ‖ nonce)[:16] (cookieKey).
	s.h.Reset()
	s.h.Write(labelCookieBytes)
	s.h.Write(l.priv.Public().raw[:])
	s.h.Write(s.nonce[:])
	s.h.Sum(s.inner[:0])
	copy(s.key[:], s.inner[:16])
	seal(s.sealed[:], &s.key, s.cookie[:], msg[m1:m1+macSize])
	putHeader(r[:], MessageCookieReplyType)
	binary.LittleEndian.PutUint32(r[MessageCookieReplyOffsetReceiver:], senderIndex(msg))
	copy(r[MessageCookieReplyOffsetNonce:MessageCookieReplyOffsetCookie], s.nonce[:])
	copy(r[MessageCookieReplyOffsetCookie:], s.sealed[:])
	return r, nil
}

// ConsumeCookieReply processes a 0x15 sent in answer to our latest
// initiation or response to a peer. On success the cookie is stored and
// later messages to that peer carry mac2 for CookieRefreshTime −
// RekeyTimeout. It costs a map lookup and one SM3 + SM4-GCM block.
func (l *Local) ConsumeCookieReply(msg []byte, now time.Time) (*Peer, error) {
	if err := checkHeader(msg, MessageCookieReplyType, MessageCookieReplySize); err != nil {
		return nil, err
	}
	recv := binary.LittleEndian.Uint32(msg[MessageCookieReplyOffsetReceiver:])
	l.mu.RLock()
	p := l.pending[recv]
	l.mu.RUnlock()
	if p == nil {
		return nil, ErrUnknownIndex
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !((p.init != nil && p.init.index == recv) || (p.resp != nil && p.resp.index == recv)) || !p.hasMAC1 {
		return nil, ErrUnknownIndex
	}
	k := cookieKey(p.pub, msg[MessageCookieReplyOffsetNonce:MessageCookieReplyOffsetCookie])
	var c [cookieSize]byte
	ok := open(c[:], &k, msg[MessageCookieReplyOffsetCookie:], p.lastMAC1[:])
	clear(k[:])
	if !ok {
		return nil, ErrCookieReply
	}
	p.cookie, p.cookieTime, p.hasCookie = c, now, true
	return p, nil
}

// Pending reports whether idx is the local index of a handshake of ours in
// progress (an initiation or a response we sent): the index a 0x12, 0x13
// or 0x15 must name to be worth processing. It is a map lookup under a
// read lock, so a tunnel asks it on the receive path and messages naming
// no handshake of ours (an off-path sender cannot know our random
// indices) never take a slot in the priority queue.
func (l *Local) Pending(idx uint32) bool {
	l.mu.RLock()
	_, ok := l.pending[idx]
	l.mu.RUnlock()
	return ok
}
