package tunnel

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// Copies of an answered initiation.
//
// An initiator that hears nothing re-sends its initiation's exact bytes
// (FastRetransmitInterval, at most MaxFastRetransmits times). When the
// original reached us and only our response was lost, handshake
// ConsumeInitiation would refuse the copy as a replay (same timestamp)
// after paying for its key exchange, and the initiator would wait for its
// RekeyTimeout retry. So the responder remembers, per peer, the last
// initiation it answered and its response. A byte-identical copy is never
// consumed again:
//
//   - from the source address the original came from, while the keypair
//     the original made is unconfirmed, within RekeyTimeout and at most
//     MaxFastRetransmits times, it is answered with the same response
//     (public bytes already sent once, 24 bytes shorter than the copy);
//   - otherwise it is refused as the replay it is (stale_timestamp),
//     without any elliptic-curve work.
//
// No state changes either way: the pending handshake the response names
// is the one the original made.

// answeredSlots is the size of the device's table from an initiation's
// sender index to the peer that answered it last (a power of two).
const answeredSlots = 64

// answeredInit is a peer's last answered initiation. Guarded by the peer's
// hsMu.
type answeredInit struct {
	init       [handshake.MessageInitiationSize]byte
	resp       [handshake.MessageResponseSize]byte
	src        netip.AddrPort
	at         time.Time
	localIndex uint32 // of the keypair the original made
	resent     int
	valid      bool
}

// answeredTable maps an initiation's sender index (random, chosen by the
// initiator) to the peer that answered it; colliding entries overwrite
// each other, and a copy whose entry was overwritten is consumed as any
// initiation (and refused as stale).
type answeredTable [answeredSlots]atomic.Pointer[Peer]

func answeredSlot(init []byte) int {
	return int(binary.LittleEndian.Uint32(init[handshake.MessageInitiationOffsetSender:]) % answeredSlots)
}

// rememberAnswer records the initiation msg from ep that made kp, and
// the response about to be sent for it.
func (p *Peer) rememberAnswer(msg []byte, ep netio.Endpoint, kp *keypair, resp *[handshake.MessageResponseSize]byte, now time.Time) {
	p.hsMu.Lock()
	a := &p.answered
	copy(a.init[:], msg)
	a.resp = *resp
	a.src = endpointAddrPort(ep)
	a.at, a.localIndex, a.resent, a.valid = now, kp.localIndex, 0, true
	p.hsMu.Unlock()
	p.device.answered[answeredSlot(msg)].Store(p)
}

// answerCopy handles msg if it is a copy of an initiation a peer already
// answered, and reports whether it did (see "Copies of an answered
// initiation" above).
func (d *Device) answerCopy(msg []byte, ep netio.Endpoint, now time.Time) bool {
	p := d.answered[answeredSlot(msg)].Load()
	if p == nil || p.removed.Load() {
		return false
	}
	p.hsMu.Lock()
	a := &p.answered
	if !a.valid || !bytes.Equal(msg, a.init[:]) {
		p.hsMu.Unlock()
		return false
	}
	kp := d.indices.lookup(a.localIndex)
	answer := a.resent < MaxFastRetransmits && now.Sub(a.at) < handshake.RekeyTimeout &&
		endpointAddrPort(ep) == a.src && kp != nil && kp.peer == p && !kp.confirmed.Load()
	var resp [handshake.MessageResponseSize]byte
	if answer {
		a.resent++
		p.hsAnswered++
		resp = a.resp
	}
	p.hsMu.Unlock()
	if !answer {
		d.handshakeInvalid(handshake.ErrStaleTimestamp.Code)
		return true
	}
	p.countReceived(len(msg))
	d.log.Verbosef("%v - received a copy of the answered handshake initiation, sending the response again", p)
	p.sendControl(resp[:])
	return true
}
