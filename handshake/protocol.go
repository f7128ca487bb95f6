package handshake

import (
	"bytes"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/emmansun/gmsm/ecdh"
	"github.com/emmansun/gmsm/sm3"

	"github.com/gmtun/gmtun/ciphers"
)

// Status values of the responder's suite selection.
const (
	statusOK            = 0
	statusNoCommonSuite = 1
)

// SM2 key-exchange confirmation prefixes (GB/T 32918.3 §6.1 B8, A10).
const (
	prefixSB = 0x02
	prefixSA = 0x03
)

// sm2KeyLen is klen of GB/T 32918.3 §6.1 B7/A8 in bytes (256 bits).
const sm2KeyLen = 32

// sm2SharedKey returns K = KDF(x ‖ y ‖ Z_A ‖ Z_B, 256) (GB/T 32918.3 §6.1
// B7/A8), with the initiator as A.
func sm2SharedKey(uv *[64]byte, za, zb *[32]byte) (k [sm2KeyLen]byte) {
	var z [128]byte
	copy(z[:64], uv[:])
	copy(z[64:96], za[:])
	copy(z[96:], zb[:])
	out := sm3.Kdf(z[:], sm2KeyLen)
	copy(k[:], out)
	clear(out)
	clear(z[:])
	return k
}

func pointBytes(k *ecdh.PublicKey) (p Point) {
	copy(p[:], k.Bytes()[1:])
	return p
}

// CreateInitiation starts a handshake with p: it draws an ephemeral key and
// a receiver index and returns the 0x11 message. A previous pending
// initiation to p is abandoned (its index freed). now is wall-clock time:
// it becomes the anti-replay timestamp, and it times the cookie.
func (l *Local) CreateInitiation(p *Peer, now time.Time) (msg [MessageInitiationSize]byte, err error) {
	eph, err := l.newEphemeral()
	if err != nil {
		return msg, err
	}
	idx, err := l.indices.NewIndex(p)
	if err != nil {
		return msg, fmt.Errorf("handshake: allocating an index: %w", err)
	}
	var buf [MaxOffer]ciphers.SuiteID
	p.mu.Lock()
	active := p.activeSuites(now, &buf)
	p.mu.Unlock()
	if len(active) == 0 {
		l.indices.FreeIndex(idx)
		return msg, ErrSuitesRefused
	}
	st := &initiatorState{eph: eph, index: idx, created: now, offer: offerBytes(active)}
	st.ephPub = pointBytes(eph.PublicKey())

	putHeader(msg[:], MessageInitiationType)
	binary.LittleEndian.PutUint32(msg[MessageInitiationOffsetSender:], idx)
	copy(msg[MessageInitiationOffsetEphemeral:], st.ephPub[:])
	t1 := hashParts(p.t0[:], msg[:MessageInitiationOffsetStatic])

	es, err := eph.ECDH(p.ecdhPub)
	if err != nil {
		l.indices.FreeIndex(idx)
		return msg, ErrKeyExchange
	}
	var ck1 [32]byte
	var k1, k2 [16]byte
	kdf2(&ck1, &k1, labelES, c0[:], es, t1[:])
	encStatic := msg[MessageInitiationOffsetStatic:MessageInitiationOffsetPayload]
	seal(encStatic, &k1, l.staticID[:], t1[:])
	t2 := hashParts(t1[:], encStatic)
	kdf2(&st.ck2, &k2, labelSS, ck1[:], p.ss[:], t2[:])

	var payload [payloadSize]byte
	ts := tai64n(now)
	copy(payload[:tsSize], ts[:])
	copy(payload[tsSize:], st.offer[:])
	encPayload := msg[MessageInitiationOffsetPayload:MessageInitiationOffsetMAC1]
	seal(encPayload, &k2, payload[:], t2[:])
	st.t3 = hashParts(t2[:], encPayload)

	if l.trace != nil {
		l.tr("C0", c0[:])
		l.tr("T0", p.t0[:])
		l.tr("T1", t1[:])
		l.tr("es", es)
		l.tr("CK1", ck1[:])
		l.tr("k1", k1[:])
		l.tr("T2", t2[:])
		l.tr("ss", p.ss[:])
		l.tr("CK2", st.ck2[:])
		l.tr("k2", k2[:])
		l.tr("payload", payload[:])
		l.tr("T3", st.t3[:])
	}
	clear(es)
	clear(ck1[:])
	clear(k1[:])
	clear(k2[:])

	p.mu.Lock()
	p.addMACs(msg[:], MessageInitiationOffsetMAC1, MessageInitiationOffsetMAC2, now)
	p.setInit(st)
	p.mu.Unlock()
	return msg, nil
}

// ResponderResult is what ConsumeInitiation produces.
type ResponderResult struct {
	// Peer is the authenticated initiator.
	Peer *Peer
	// Response is the 0x12 message to send back.
	Response [MessageResponseSize]byte
	// Offered is the initiator's offer in its preference order.
	Offered []ciphers.SuiteID
	// Refused reports an authenticated refusal (no common suite): the
	// Response must still be sent so the initiator learns why; Keys is nil.
	Refused bool
	// Keys is the new keypair. It is unconfirmed: the tunnel may receive
	// with it (that confirms it, see Peer.ConfirmedByData) but must not
	// send with it until ConsumeConfirm or such a data packet.
	Keys *Keys
}

// checkFresh applies the replay and flood rules to an initiation's
// timestamp. p.mu held.
func (p *Peer) checkFresh(ts *[tsSize]byte, now time.Time) error {
	if p.hasLastTS && bytes.Compare(ts[:], p.lastTS[:]) <= 0 {
		return ErrStaleTimestamp
	}
	if !p.lastInit.IsZero() && now.Sub(p.lastInit) < HandshakeInitiationRate {
		return ErrInitiationFlood
	}
	return nil
}

// selectSuite returns the first offered suite that allowed contains.
func selectSuite(offered, allowed []ciphers.SuiteID) (ciphers.SuiteID, bool) {
	for _, s := range offered {
		for _, a := range allowed {
			if s == a {
				return s, true
			}
		}
	}
	return 0, false
}

// ConsumeInitiation processes a 0x11 message: it checks the layout and
// mac1 before any elliptic-curve operation, validates the ephemeral,
// identifies the initiator, enforces the timestamp and rate rules, picks the
// suite and performs the responder's half of the SM2 key exchange
// (GB/T 32918.3 §6.1 B1–B9). On error no state has changed. now is
// monotonic-aware time (time.Now() in the tunnel).
func (l *Local) ConsumeInitiation(msg []byte, now time.Time) (*ResponderResult, error) {
	if err := checkHeader(msg, MessageInitiationType, MessageInitiationSize); err != nil {
		return nil, err
	}
	if !l.checkMAC1(msg, MessageInitiationOffsetMAC1) {
		return nil, ErrMAC1
	}
	var rI Point
	copy(rI[:], msg[MessageInitiationOffsetEphemeral:])
	ephI, err := parsePoint(&rI)
	if err != nil {
		return nil, ErrInvalidPoint
	}
	t1 := hashParts(l.t0[:], msg[:MessageInitiationOffsetStatic])
	es, err := l.priv.k.ECDH(ephI)
	if err != nil {
		return nil, ErrKeyExchange
	}
	var ck1, ck2, ck3 [32]byte
	var k1, k2, k3 [16]byte
	defer func() {
		clear(es)
		clear(ck1[:])
		clear(ck2[:])
		clear(ck3[:])
		clear(k1[:])
		clear(k2[:])
		clear(k3[:])
	}()
	kdf2(&ck1, &k1, labelES, c0[:], es, t1[:])
	encStatic := msg[MessageInitiationOffsetStatic:MessageInitiationOffsetPayload]
	var sid [staticIDSize]byte
	if !open(sid[:], &k1, encStatic, t1[:]) {
		return nil, fmt.Errorf("%w (initiator identity)", ErrDecrypt)
	}
	l.mu.RLock()
	p := l.peers[sid]
	l.mu.RUnlock()
	if p == nil {
		return nil, ErrUnknownPeer
	}
	t2 := hashParts(t1[:], encStatic)
	kdf2(&ck2, &k2, labelSS, ck1[:], p.ss[:], t2[:])
	encPayload := msg[MessageInitiationOffsetPayload:MessageInitiationOffsetMAC1]
	var payload [payloadSize]byte
	if !open(payload[:], &k2, encPayload, t2[:]) {
		return nil, fmt.Errorf("%w (initiation payload)", ErrDecrypt)
	}
	var ts [tsSize]byte
	copy(ts[:], payload[:tsSize])
	offered, ok := parseOffer(payload[tsSize:tsSize+offerSize], false)
	if !ok {
		return nil, fmt.Errorf("%w: bad suite offer %x", ErrMalformedPayload, payload[tsSize:tsSize+offerSize])
	}
	if binary.LittleEndian.Uint32(payload[tsSize+offerSize:]) != 0 {
		return nil, fmt.Errorf("%w: reserved flags set", ErrMalformedPayload)
	}
	p.mu.Lock()
	err = p.checkFresh(&ts, now)
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	t3 := hashParts(t2[:], encPayload)
	var buf [MaxOffer]ciphers.SuiteID
	p.mu.Lock()
	allowedNow := p.activeSuites(now, &buf)
	p.mu.Unlock()
	suite, found := selectSuite(offered, allowedNow)

	// GB/T 32918.3 §6.1 B1–B8 with A = initiator, B = us.
	ephR, err := l.newEphemeral()
	if err != nil {
		return nil, err
	}
	rR := pointBytes(ephR.PublicKey())
	v, err := l.priv.k.SM2MQV(ephR, p.ecdhPub, ephI)
	if err != nil {
		return nil, ErrKeyExchange
	}
	var uv [64]byte
	vb := v.Bytes()
	copy(uv[:], vb[1:])
	clear(vb)
	kstd := sm2SharedKey(&uv, &p.z, &l.z)
	sB := confirmValue(prefixSB, &uv, &p.z, &l.z, &rI, &rR)
	sA := confirmValue(prefixSA, &uv, &p.z, &l.z, &rI, &rR)
	if l.trace != nil {
		l.tr("V", uv[:])
		l.tr("Z_I", p.z[:])
		l.tr("Z_R", l.z[:])
		l.tr("K", kstd[:])
		l.tr("S_B", sB[:])
		l.tr("S_A", sA[:])
	}
	clear(uv[:])
	defer clear(kstd[:])

	var idx uint32
	if found {
		if idx, err = l.indices.NewIndex(p); err != nil {
			return nil, fmt.Errorf("handshake: allocating an index: %w", err)
		}
	}
	res := &ResponderResult{Peer: p, Offered: offered, Refused: !found}
	out := res.Response[:]
	putHeader(out, MessageResponseType)
	binary.LittleEndian.PutUint32(out[MessageResponseOffsetSender:], idx)
	binary.LittleEndian.PutUint32(out[MessageResponseOffsetReceiver:], senderIndex(msg))
	copy(out[MessageResponseOffsetEphemeral:], rR[:])
	copy(out[MessageResponseOffsetConfirm:], sB[:])
	t4 := hashParts(t3[:], out[:MessageResponseOffsetSelect])
	kdf2(&ck3, &k3, labelKex, ck2[:], kstd[:], p.psk[:], t4[:])
	var sel [selectSize]byte
	if found {
		sel[0] = byte(suite)
	} else {
		sel[1] = statusNoCommonSuite
		allowed := offerBytes(allowedNow)
		copy(sel[4:], allowed[:])
	}
	encSelect := out[MessageResponseOffsetSelect:MessageResponseOffsetMAC1]
	seal(encSelect, &k3, sel[:], t4[:])
	t5 := hashParts(t4[:], encSelect)
	if l.trace != nil {
		l.tr("T4", t4[:])
		l.tr("CK3", ck3[:])
		l.tr("k3", k3[:])
		l.tr("select", sel[:])
		l.tr("T5", t5[:])
	}

	var st *responderState
	if found {
		keys := l.deriveKeys(&ck3, &t5, suite, false)
		keys.Peer, keys.LocalIndex, keys.RemoteIndex, keys.Created = p, idx, senderIndex(msg), now
		st = &responderState{index: idx, keys: keys, created: now}
		l.confirmPrefix(&st.expect, idx, &sA, &ck3, &t5)
	}

	p.mu.Lock()
	if err := p.checkFresh(&ts, now); err != nil {
		// Another worker consumed a newer initiation meanwhile.
		p.mu.Unlock()
		if found {
			l.indices.FreeIndex(idx)
			st.keys.Wipe()
		}
		return nil, err
	}
	p.lastTS, p.hasLastTS, p.lastInit = ts, true, now
	p.addMACs(out, MessageResponseOffsetMAC1, MessageResponseOffsetMAC2, now)
	if found {
		p.setResp(st)
		res.Keys = st.keys
	}
	p.mu.Unlock()
	return res, nil
}

// confirmPrefix writes the 0x13 message up to mac1: header, receiver
// index, S_A and the transcript tag.
func (l *Local) confirmPrefix(dst *[MessageConfirmOffsetMAC1]byte, receiver uint32, sA, ck3, t5 *[32]byte) {
	putHeader(dst[:], MessageConfirmType)
	binary.LittleEndian.PutUint32(dst[MessageConfirmOffsetReceiver:], receiver)
	copy(dst[MessageConfirmOffsetConfirm:], sA[:])
	t6 := hashParts(t5[:], dst[:MessageConfirmOffsetTag])
	var kc [16]byte
	kdf(kc[:], labelConfirm, ck3[:], t6[:])
	seal(dst[MessageConfirmOffsetTag:], &kc, nil, t6[:])
	if l.trace != nil {
		l.tr("T6", t6[:])
		l.tr("k_conf", kc[:])
	}
	clear(kc[:])
}

// deriveKeys derives the traffic keys of both directions (sizes from
// suite.Params()): KDF(u8(len) ‖ label ‖ CK3 ‖ T5 ‖ suite, L).
func (l *Local) deriveKeys(ck3, t5 *[32]byte, suite ciphers.SuiteID, initiator bool) *Keys {
	pr := suite.Params()
	one := func(label string, n int) []byte {
		if n == 0 {
			return nil
		}
		b := make([]byte, n)
		kdf(b, label, ck3[:], t5[:], []byte{byte(suite)})
		l.tr(label, b)
		return b
	}
	i2r := ciphers.DirectionKeys{
		Enc: one(labelI2REnc, pr.EncKeySize), MAC: one(labelI2RMAC, pr.MACKeySize),
		Salt: one(labelI2RSalt, pr.SaltSize), Direction: 0,
	}
	r2i := ciphers.DirectionKeys{
		Enc: one(labelR2IEnc, pr.EncKeySize), MAC: one(labelR2IMAC, pr.MACKeySize),
		Salt: one(labelR2ISalt, pr.SaltSize), Direction: 1,
	}
	k := &Keys{Suite: suite, IsInitiator: initiator}
	if initiator {
		k.Send, k.Recv = i2r, r2i
	} else {
		k.Send, k.Recv = r2i, i2r
	}
	return k
}

// InitiatorResult is what ConsumeResponse produces.
type InitiatorResult struct {
	// Peer is the authenticated responder.
	Peer *Peer
	// Keys is the new keypair; it is confirmed and may be used at once.
	Keys *Keys
	// Confirm is the 0x13 message to send.
	Confirm [MessageConfirmSize]byte
}

// ConsumeResponse processes a 0x12 message for one of our pending
// initiations: layout and mac1 first, then the index, the point checks and
// the initiator's half of the SM2 key exchange with the mandatory S_B check
// (GB/T 32918.3 §6.1 A4–A10), then the authenticated suite selection. On
// error no state has changed, except that an authenticated refusal
// (*NoCommonSuiteError) ends the pending initiation.
func (l *Local) ConsumeResponse(msg []byte, now time.Time) (*InitiatorResult, error) {
	if err := checkHeader(msg, MessageResponseType, MessageResponseSize); err != nil {
		return nil, err
	}
	if !l.checkMAC1(msg, MessageResponseOffsetMAC1) {
		return nil, ErrMAC1
	}
	recv := binary.LittleEndian.Uint32(msg[MessageResponseOffsetReceiver:])
	l.mu.RLock()
	p := l.pending[recv]
	l.mu.RUnlock()
	if p == nil {
		return nil, ErrUnknownIndex
	}
	// The chaining values are copied under the lock: a newer initiation
	// wipes the state it replaces (setInit).
	var ck2, t3 [32]byte
	var eph *ecdh.PrivateKey
	defer clear(ck2[:])
	defer clear(t3[:])
	p.mu.Lock()
	st := p.init
	if st != nil {
		ck2, t3, eph = st.ck2, st.t3, st.eph
	}
	p.mu.Unlock()
	if st == nil || st.index != recv {
		return nil, ErrUnknownIndex
	}
	if now.Sub(st.created) > RejectAfterTime {
		return nil, ErrHandshakeExpired
	}
	var rR Point
	copy(rR[:], msg[MessageResponseOffsetEphemeral:])
	if rR == st.ephPub {
		return nil, ErrReflection
	}
	ephR, err := parsePoint(&rR)
	if err != nil {
		return nil, ErrInvalidPoint
	}
	u, err := l.priv.k.SM2MQV(eph, p.ecdhPub, ephR)
	if err != nil {
		return nil, ErrKeyExchange
	}
	var uv [64]byte
	ub := u.Bytes()
	copy(uv[:], ub[1:])
	clear(ub)
	kstd := sm2SharedKey(&uv, &l.z, &p.z)
	s1 := confirmValue(prefixSB, &uv, &l.z, &p.z, &st.ephPub, &rR)
	sA := confirmValue(prefixSA, &uv, &l.z, &p.z, &st.ephPub, &rR)
	clear(uv[:])
	var ck3 [32]byte
	var k3 [16]byte
	defer func() {
		clear(kstd[:])
		clear(ck3[:])
		clear(k3[:])
		clear(sA[:])
	}()
	if subtle.ConstantTimeCompare(s1[:], msg[MessageResponseOffsetConfirm:MessageResponseOffsetSelect]) != 1 {
		return nil, ErrConfirmMismatch
	}
	t4 := hashParts(t3[:], msg[:MessageResponseOffsetSelect])
	kdf2(&ck3, &k3, labelKex, ck2[:], kstd[:], p.psk[:], t4[:])
	encSelect := msg[MessageResponseOffsetSelect:MessageResponseOffsetMAC1]
	var sel [selectSize]byte
	if !open(sel[:], &k3, encSelect, t4[:]) {
		return nil, ErrSelectDecrypt
	}
	t5 := hashParts(t4[:], encSelect)
	suite := ciphers.SuiteID(sel[0])
	switch {
	case sel[1] == statusOK && sel[2]|sel[3] == 0 && binary.LittleEndian.Uint32(sel[4:]) == 0:
		if sel[0] == 0 || bytes.IndexByte(st.offer[:], sel[0]) < 0 {
			return nil, fmt.Errorf("%w (%s)", ErrSuiteNotOffered, suite)
		}
	case sel[1] == statusNoCommonSuite && sel[0]|sel[2]|sel[3] == 0:
		allowed, ok := parseOffer(sel[4:], true)
		if !ok {
			return nil, fmt.Errorf("%w: bad allowed list in refusal", ErrMalformedPayload)
		}
		offered, _ := parseOffer(st.offer[:], true)
		p.mu.Lock()
		if p.init == st {
			p.setInit(nil)
		}
		p.mu.Unlock()
		return nil, &NoCommonSuiteError{Offered: offered, Allowed: allowed}
	default:
		return nil, fmt.Errorf("%w: suite selection %x", ErrMalformedPayload, sel)
	}

	res := &InitiatorResult{Peer: p}
	remote := senderIndex(msg)
	var prefix [MessageConfirmOffsetMAC1]byte
	l.confirmPrefix(&prefix, remote, &sA, &ck3, &t5)
	copy(res.Confirm[:], prefix[:])
	keys := l.deriveKeys(&ck3, &t5, suite, true)
	keys.Peer, keys.LocalIndex, keys.RemoteIndex, keys.Created = p, st.index, remote, now

	p.mu.Lock()
	if p.init != st {
		// A newer initiation replaced this one, or a duplicate response won.
		p.mu.Unlock()
		keys.Wipe()
		return nil, ErrUnknownIndex
	}
	// The index now belongs to the keypair: forget it without freeing.
	p.init = nil
	l.mu.Lock()
	delete(l.pending, st.index)
	l.mu.Unlock()
	p.addMACs(res.Confirm[:], MessageConfirmOffsetMAC1, 0, now)
	st.wipe()
	p.mu.Unlock()
	res.Keys = keys
	return res, nil
}

// ConsumeConfirm processes a 0x13 message: layout, mac1, index, then S_A
// (GB/T 32918.3 §6.1 B10) and the transcript tag, both compared in constant
// time against values precomputed when the response was created. It
// returns the keypair that ConsumeInitiation handed out, now confirmed. On
// error no state has changed.
func (l *Local) ConsumeConfirm(msg []byte, now time.Time) (*Keys, error) {
	if err := checkHeader(msg, MessageConfirmType, MessageConfirmSize); err != nil {
		return nil, err
	}
	if !l.checkMAC1(msg, MessageConfirmOffsetMAC1) {
		return nil, ErrMAC1
	}
	recv := binary.LittleEndian.Uint32(msg[MessageConfirmOffsetReceiver:])
	l.mu.RLock()
	p := l.pending[recv]
	l.mu.RUnlock()
	if p == nil {
		return nil, ErrUnknownIndex
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.resp
	if st == nil || st.index != recv {
		return nil, ErrUnknownIndex
	}
	if now.Sub(st.created) > RejectAfterTime {
		return nil, ErrHandshakeExpired
	}
	sAOK := subtle.ConstantTimeCompare(msg[MessageConfirmOffsetConfirm:MessageConfirmOffsetTag],
		st.expect[MessageConfirmOffsetConfirm:MessageConfirmOffsetTag])
	tagOK := subtle.ConstantTimeCompare(msg[MessageConfirmOffsetTag:MessageConfirmOffsetMAC1],
		st.expect[MessageConfirmOffsetTag:])
	if sAOK != 1 {
		return nil, ErrConfirmMismatch
	}
	if tagOK != 1 {
		return nil, ErrConfirmTag
	}
	p.forgetResp(st)
	return st.keys, nil
}

// forgetResp drops the pending response without freeing its index (it
// belongs to the keypair). p.mu held.
func (p *Peer) forgetResp(st *responderState) {
	p.resp = nil
	p.local.mu.Lock()
	delete(p.local.pending, st.index)
	p.local.mu.Unlock()
}

// ConfirmedByData tells the handshake that a data packet authenticated
// under the unconfirmed keypair with the given local index (implicit
// confirmation, covering a lost 0x13). It reports whether a pending
// response was confirmed; afterwards a late 0x13 for it is ErrUnknownIndex.
func (p *Peer) ConfirmedByData(localIndex uint32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.resp; st != nil && st.index == localIndex {
		p.forgetResp(st)
		return true
	}
	return false
}
