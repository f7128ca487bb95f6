package tunnel

import (
	"encoding/binary"
	"errors"

	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// hsMessage is a handshake message copied out of the receive vector. A
// fixed set of QueueHandshakeSize of them circulates between the free list
// and the queue, so queueing never allocates and never blocks.
type hsMessage struct {
	buf [handshake.MessageInitiationSize]byte
	n   int
	ep  netio.Endpoint
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

// queueHandshake copies a handshake message into the bounded handshake
// queue, or counts it as dropped when the queue is full.
func (d *Device) queueHandshake(pkt []byte, ep netio.Endpoint) {
	if len(pkt) != handshakeSize(pkt[0]) {
		d.handshakeInvalid("length")
		return
	}
	select {
	case m := <-d.hsFree:
		m.n = copy(m.buf[:], pkt)
		m.ep = ep
		d.hsQueue <- m // never blocks: there are only cap(hsQueue) messages
	default:
		d.drop(dropHandshakeQueueFull, 1)
	}
}

// handshakeInvalid counts a handshake message that failed, by reason.
func (d *Device) handshakeInvalid(reason string) {
	d.drop(dropHandshakeInvalid, 1)
	d.hsInvalidMu.Lock()
	d.hsInvalid[reason]++
	d.hsInvalidMu.Unlock()
}

// RoutineHandshake is one of the bounded pool of handshake workers. Each
// message is screened (mac1 always, mac2 under load) before any
// elliptic-curve work; under load a source without a valid cookie gets a
// cookie reply, and sources are rate-limited per address.
func (d *Device) RoutineHandshake(id int) {
	defer d.hsWorkers.Done()
	d.log.Verbosef("Routine: handshake worker %d - started", id)
	defer d.log.Verbosef("Routine: handshake worker %d - stopped", id)
	for m := range d.hsQueue {
		d.handleHandshake(m.buf[:m.n], m.ep)
		m.ep = nil
		d.hsFree <- m
	}
}

func (d *Device) handleHandshake(msg []byte, ep netio.Endpoint) {
	now := d.clock.Now()
	if msg[0] == handshake.MessageCookieReplyType {
		if _, err := d.local.ConsumeCookieReply(msg, now); err != nil {
			d.handshakeInvalid(handshake.Reason(err))
		}
		return
	}
	src := endpointAddrPort(ep)
	underLoad := d.load.UnderLoad(len(d.hsQueue), cap(d.hsQueue), now)
	switch d.local.Screen(msg, src, underLoad, now) {
	case handshake.VerdictDrop:
		d.handshakeInvalid("screen")
		return
	case handshake.VerdictCookie:
		d.drop(dropHandshakeCookie, 1)
		if !d.rate.Allow(src.Addr(), now) {
			return
		}
		reply, err := d.local.CreateCookieReply(msg, src, now)
		if err == nil {
			err = sendResult(d.bind.Send([][]byte{reply[:]}, ep))
		}
		if err != nil {
			d.log.Verbosef("Sending a cookie reply to %v: %v", src, err)
		}
		return
	}
	if underLoad && !d.rate.Allow(src.Addr(), now) {
		d.drop(dropHandshakeRateLimited, 1)
		return
	}
	switch msg[0] {
	case handshake.MessageInitiationType:
		res, err := d.local.ConsumeInitiation(msg, now)
		if err != nil {
			d.handshakeInvalid(handshake.Reason(err))
			return
		}
		p := res.Peer.Context().(*Peer)
		p.setEndpointFromHandshake(ep)
		if res.Refused {
			d.log.Verbosef("%v - refused initiation: no common suite (offered %v, allowed %v)", p, res.Offered, p.suites)
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
		p.sendControl(res.Response[:])
	case handshake.MessageResponseType:
		res, err := d.local.ConsumeResponse(msg, now)
		if err != nil {
			if errors.Is(err, handshake.ErrNoCommonSuite) {
				d.log.Errorf("handshake refused: %v", err)
			}
			d.handshakeInvalid(handshake.Reason(err))
			return
		}
		p := res.Peer.Context().(*Peer)
		p.setEndpointFromHandshake(ep)
		kp, err := newKeypair(p, res.Keys)
		if err != nil {
			d.log.Errorf("%v - building keys: %v", p, err)
			return
		}
		p.sendControl(res.Confirm[:])
		if !p.installKeypair(kp, now) {
			return
		}
		p.hsMu.Lock()
		p.hsInProgress = false
		p.hsMu.Unlock()
		d.log.Verbosef("%v - handshake complete (initiator, %v)", p, kp.suite)
		p.sendStaged()
	case handshake.MessageConfirmType:
		keys, err := d.local.ConsumeConfirm(msg, now)
		if err != nil {
			if errors.Is(err, handshake.ErrUnknownIndex) {
				// The initiator sends its confirm and its first data
				// at once; when the data wins the race it confirms
				// the keypair and ends the handshake, and the confirm
				// that follows names no pending handshake any more.
				idx := binary.LittleEndian.Uint32(msg[handshake.MessageConfirmOffsetReceiver:])
				if kp := d.indices.lookup(idx); kp != nil && kp.confirmed.Load() {
					return // late, redundant confirm: not a failure
				}
			}
			d.handshakeInvalid(handshake.Reason(err))
			return
		}
		p := keys.Peer.Context().(*Peer)
		p.setEndpointFromHandshake(ep)
		if kp := d.indices.lookup(keys.LocalIndex); kp != nil && kp.peer == p && p.confirmKeypair(kp) {
			d.log.Verbosef("%v - handshake complete (responder, %v)", p, kp.suite)
			p.sendStaged()
		}
	}
}
