package tunnel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// hsMessage is a handshake message copied out of the receive vector. A
// fixed set of them circulates between each queue and its free list
// (hsRing), so queueing never allocates and never blocks.
type hsMessage struct {
	buf  [handshake.MessageInitiationSize]byte
	n    int
	ep   netio.Endpoint
	kind uint8 // hsKind*
}

// handshakeSize returns the exact size of a handshake message type.
func handshakeSize(typ byte) int {
	switch typ {
	case handshake.MessageInitiationType:
		return handshake.MessageInitiationSize
	case handshake.MessageResponseType:
		return handshake.MessageResponseSize
	case handshake.MessageConfirmType:
		return handshake.MessageConfirmSize
	case handshake.MessageCookieReplyType:
		return handshake.MessageCookieReplySize
	}
	return -1
}

// queueHandshake screens a handshake message on the receive goroutine and
// copies it into the queue it belongs to, or counts why it was dropped.
// It never allocates and never blocks. mac1 is checked first (a message
// without it costs one HMAC-SM3); under load an initiation must carry a
// valid mac2 to be queued for processing, after the per-source bucket of
// the sources so proven; without one it is answered by a stateless cookie
// reply, within the device-wide bound, and nothing about its source is
// stored. An initiation without mac2 that the bound has no reply for is
// dropped before its mac1 is checked, and strangers' mac2 are checked at
// most mac2CheckRate times a second. 0x12, 0x13 and 0x15 go to the priority queue if their receiver
// index names a handshake of ours in progress (32 random bits an off-path
// sender does not know), so a flood of them cannot take its slots; a 0x12
// needs no mac2 for the same reason.
func (d *Device) queueHandshake(pkt []byte, ep netio.Endpoint) {
	typ := pkt[0]
	if len(pkt) != handshakeSize(typ) {
		d.handshakeInvalid("length")
		return
	}
	q := &d.hsq
	if typ == handshake.MessageCookieReplyType {
		if d.namesOurHandshake(pkt, handshake.MessageCookieReplyOffsetReceiver) && !q.prio.put(pkt, ep, hsKindProcess) {
			d.drop(dropHandshakeQueueFull, 1)
		}
		return
	}
	now := d.clock.Now()
	src := endpointAddrPort(ep)
	load := typ == handshake.MessageInitiationType && d.underLoad(now)
	var t int64
	var peerEP bool
	checkMAC2 := load
	if load {
		t = d.since(now)
		peerEP = d.isPeerEndpoint(src, t)
		// A mac2 costs two more HMAC-SM3 to check; at most mac2CheckRate
		// a second are checked (peers' endpoints have a bucket of their
		// own), and an initiation beyond that is taken as one without a
		// cookie.
		checkMAC2 = handshake.CarriesMAC2(pkt) && q.takeMAC2Check(peerEP, t)
		// Under load an initiation without a mac2 to check can earn
		// nothing but a cookie reply; when the reply bound has no token
		// for it, it is dropped before its mac1 is paid for, so a flood
		// beyond the bound costs a few loads per message instead of an
		// HMAC-SM3.
		if !checkMAC2 && q.cookieBucketEmpty(peerEP, t) {
			d.drop(dropCookieLimited, 1)
			return
		}
	}
	v := d.local.Screen(pkt, src, checkMAC2, now)
	if load && !checkMAC2 && v == handshake.VerdictAccept {
		v = handshake.VerdictCookie // mac1 is valid; no mac2 was checked
	}
	switch v {
	case handshake.VerdictDrop:
		d.drop(dropHandshakeMAC1, 1)
		return
	case handshake.VerdictCookie:
		d.queueCookieReply(pkt, ep, peerEP, t)
		return
	}
	r := &q.prio
	switch typ {
	case handshake.MessageResponseType:
		if !d.namesOurHandshake(pkt, handshake.MessageResponseOffsetReceiver) {
			return
		}
	case handshake.MessageConfirmType:
		if !d.namesOurHandshake(pkt, handshake.MessageConfirmOffsetReceiver) {
			return
		}
	}
	if typ == handshake.MessageInitiationType {
		r = &q.open
		if load {
			if !d.rate.Allow(src.Addr(), now) {
				d.drop(dropHandshakeRateLimited, 1)
				return
			}
			r = &q.proven
		}
	}
	if !r.put(pkt, ep, hsKindProcess) {
		d.drop(dropHandshakeQueueFull, 1)
	}
}

// namesOurHandshake reports whether the receiver index at off names a
// handshake of ours in progress; otherwise it counts the message (as the
// worker would have: handshake_late or unknown_index) and the message
// takes no queue slot.
func (d *Device) namesOurHandshake(pkt []byte, off int) bool {
	idx := binary.LittleEndian.Uint32(pkt[off:])
	if d.local.Pending(idx) {
		return true
	}
	if !d.droppedLate(pkt[0], idx) {
		d.handshakeInvalid(handshake.ErrUnknownIndex.Code)
	}
	return false
}

// droppedLate reports whether a response or confirm whose receiver index
// idx names no pending handshake comes after its work was done, late and
// harmless, and if so counts it as handshake_late: not a failure, but a
// datagram the daemon discarded, so that every datagram from the network
// is counted as received or dropped. Late are a confirm of a keypair
// already confirmed (the initiator's first data won the race), and a
// second response for a keypair we already installed as initiator (the
// network duplicated our initiation or the response, or the responder
// answered a copy of the initiation, handshake_copies.go).
func (d *Device) droppedLate(typ byte, idx uint32) bool {
	kp := d.indices.lookup(idx)
	late := false
	switch {
	case kp == nil:
	case typ == handshake.MessageConfirmType:
		late = kp.confirmed.Load()
	case typ == handshake.MessageResponseType:
		late = kp.isInitiator
	}
	if late {
		d.drop(dropHandshakeLate, 1)
	}
	return late
}

// handshakeInvalid counts a handshake message that failed, by reason.
func (d *Device) handshakeInvalid(reason string) {
	d.drop(dropHandshakeInvalid, 1)
	d.hsInvalidMu.Lock()
	d.hsInvalid[reason]++
	d.hsInvalidMu.Unlock()
}

// RoutineHandshake is one of the bounded pool of handshake workers. It
// serves the queues in priority order (nextHandshake): messages that
// complete handshakes first, then initiations proven by mac2, then the
// others, and cookie replies last. Every message was screened before it
// was queued (queueHandshake).
func (d *Device) RoutineHandshake(id int) {
	defer d.hsWorkers.Done()
	d.log.Verbosef("Routine: handshake worker %d - started", id)
	defer d.log.Verbosef("Routine: handshake worker %d - stopped", id)
	var reply cookieReplyBuf // reused: a cookie reply allocates nothing
	for {
		m, r, ok := d.nextHandshake()
		if !ok {
			return
		}
		if m.kind == hsKindProcess {
			d.handleHandshake(m.buf[:m.n], m.ep)
		} else {
			d.sendCookieReply(&reply, m.buf[:m.n], m.ep)
		}
		m.ep = nil
		r.free <- m
	}
}

func (d *Device) handleHandshake(msg []byte, ep netio.Endpoint) {
	now := d.clock.Now()
	if msg[0] == handshake.MessageCookieReplyType {
		hp, err := d.local.ConsumeCookieReply(msg, now)
		if err != nil {
			d.handshakeInvalid(handshake.Reason(err))
			return
		}
		p := hp.Context().(*Peer)
		p.countReceived(len(msg))
		p.retryOnCookie(now)
		return
	}
	switch msg[0] {
	case handshake.MessageInitiationType:
		if d.answerCopy(msg, ep, now) {
			return
		}
		res, err := d.local.ConsumeInitiation(msg, now)
		if err != nil {
			d.handshakeInvalid(handshake.Reason(err))
			return
		}
		p := res.Peer.Context().(*Peer)
		p.countReceived(len(msg))
		p.setEndpointFromHandshake(ep)
		if res.Refused {
			p.diagnose(slog.LevelWarn, handshake.ErrNoCommonSuite.Code,
				fmt.Sprintf("refused the peer's initiation: no common suite (it offered %s; this side allows %s)", suiteNames(res.Offered), suiteNames(p.suites)),
				handshake.Hint(handshake.ErrNoCommonSuite))
			p.sendControl(res.Response[:])
			return
		}
		kp, err := newKeypair(p, res.Keys)
		if err != nil {
			d.log.Errorf("%v - building keys: %v", p, err)
			return
		}
		if !p.installKeypair(kp, now) {
			return
		}
		d.log.Verbosef("%v - received handshake initiation, responding with %v", p, kp.suite)
		p.rememberAnswer(msg, ep, kp, &res.Response, now)
		p.sendControl(res.Response[:])
	case handshake.MessageResponseType:
		// The peer first: a refusal frees the pending handshake's index.
		idx := binary.LittleEndian.Uint32(msg[handshake.MessageResponseOffsetReceiver:])
		named := d.indices.lookupPeer(idx)
		res, err := d.local.ConsumeResponse(msg, now)
		if err != nil {
			if errors.Is(err, handshake.ErrUnknownIndex) && d.droppedLate(msg[0], idx) {
				return
			}
			d.handshakeInvalid(handshake.Reason(err))
			named.diagnoseFailure(err)
			return
		}
		p := res.Peer.Context().(*Peer)
		p.countReceived(len(msg))
		p.setEndpointFromHandshake(ep)
		kp, err := newKeypair(p, res.Keys)
		if err != nil {
			d.log.Errorf("%v - building keys: %v", p, err)
			return
		}
		// Install before the confirm leaves: the responder sends on the
		// keypair as soon as the confirm arrives, and a packet that beat
		// the install would name an index without a keypair yet
		// (unknown_index; TestInitiatorInstallsBeforeConfirm).
		if !p.installKeypair(kp, now) {
			return
		}
		p.sendControl(res.Confirm[:])
		p.hsMu.Lock()
		p.hsInProgress = false
		p.hsMu.Unlock()
		d.log.Verbosef("%v - handshake complete (initiator, %v)", p, kp.suite)
		p.sendStaged()
	case handshake.MessageConfirmType:
		idx := binary.LittleEndian.Uint32(msg[handshake.MessageConfirmOffsetReceiver:])
		named := d.indices.lookupPeer(idx)
		keys, err := d.local.ConsumeConfirm(msg, now)
		if err != nil {
			// The initiator sends its confirm and its first data at
			// once; when the data wins the race it confirms the keypair
			// and ends the handshake, and the confirm that follows names
			// no pending handshake any more.
			if errors.Is(err, handshake.ErrUnknownIndex) && d.droppedLate(msg[0], idx) {
				return
			}
			d.handshakeInvalid(handshake.Reason(err))
			named.diagnoseFailure(err)
			return
		}
		p := keys.Peer.Context().(*Peer)
		p.countReceived(len(msg))
		p.setEndpointFromHandshake(ep)
		if kp := d.indices.lookup(keys.LocalIndex); kp != nil && kp.peer == p && p.confirmKeypair(kp) {
			d.log.Verbosef("%v - handshake complete (responder, %v)", p, kp.suite)
			p.sendStaged()
		}
	}
}
