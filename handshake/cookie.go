package handshake

import (
	"encoding/binary"
	"net/netip"
	"time"
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
// performs an elliptic-curve operation. Cookie replies (0x15) are not
// screened: pass them to ConsumeCookieReply.
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

// cookieValue returns the cookie for src: HMAC-SM3(secret, IPv6-mapped
// address ‖ BE16(port))[:16], where the 32-byte secret is redrawn every
// CookieRefreshTime.
func (l *Local) cookieValue(src netip.AddrPort, now time.Time) (c [cookieSize]byte, err error) {
	l.cookieMu.Lock()
	if !l.cookieSet || now.Sub(l.cookieTime) >= CookieRefreshTime || now.Before(l.cookieTime) {
		if err := l.readRand(l.cookieSecret[:]); err != nil {
			l.cookieMu.Unlock()
			return c, err
		}
		l.cookieTime, l.cookieSet = now, true
	}
	secret := l.cookieSecret
	l.cookieMu.Unlock()
	var in [18]byte
	a := src.Addr().As16()
	copy(in[:16], a[:])
	binary.BigEndian.PutUint16(in[16:], src.Port())
	m := hmacSM3(secret[:], in[:])
	copy(c[:], m[:cookieSize])
	clear(secret[:])
	return c, nil
}

func (l *Local) checkMAC2(msg []byte, off int, src netip.AddrPort, now time.Time) bool {
	c, err := l.cookieValue(src, now)
	if err != nil {
		return false
	}
	m := hmacSM3(c[:], msg[:off])
	return equal16(m[:macSize], msg[off:off+macSize])
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
	c, err := l.cookieValue(src, now)
	if err != nil {
		return r, err
	}
	putHeader(r[:], MessageCookieReplyType)
	binary.LittleEndian.PutUint32(r[MessageCookieReplyOffsetReceiver:], senderIndex(msg))
	nonce := r[MessageCookieReplyOffsetNonce:MessageCookieReplyOffsetCookie]
	if err := l.readRand(nonce); err != nil {
		return r, err
	}
	k := cookieKey(l.priv.Public(), nonce)
	seal(r[MessageCookieReplyOffsetCookie:], &k, c[:], msg[m1:m1+macSize])
	clear(k[:])
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
