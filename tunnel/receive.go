package tunnel

import (
	"encoding/binary"
	"errors"
	"net"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// innerPacket validates a decrypted body as an IPv4 or IPv6 packet and
// returns its length according to its own header (the rest is padding)
// and its source address bytes.
func innerPacket(body []byte) (n int, src []byte, ok bool) {
	if len(body) == 0 {
		return 0, nil, false
	}
	switch body[0] >> 4 {
	case 4:
		if len(body) < 20 {
			return 0, nil, false
		}
		ihl := int(body[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(body[2:4]))
		if ihl < 20 || total < ihl || total > len(body) {
			return 0, nil, false
		}
		return total, body[12:16], true
	case 6:
		if len(body) < 40 {
			return 0, nil, false
		}
		total := 40 + int(binary.BigEndian.Uint16(body[4:6]))
		if total > len(body) {
			return 0, nil, false
		}
		return total, body[8:24], true
	}
	return 0, nil, false
}

// classifyState carries the per-vector lookups of classify.
type classifyState struct {
	now       time.Time
	lastIndex uint32
	lastKP    *keypair
}

// classify checks one received datagram. For a data packet to decrypt it
// returns its keypair; otherwise it queues a handshake message (copied)
// or counts a drop, and returns nil.
func (d *Device) classify(pkt []byte, ep netio.Endpoint, st *classifyState) *keypair {
	if len(pkt) < 4 {
		d.drop(dropShortPacket, 1)
		return nil
	}
	switch pkt[0] {
	case MessageDataType:
	case handshake.MessageInitiationType, handshake.MessageResponseType,
		handshake.MessageConfirmType, handshake.MessageCookieReplyType:
		d.queueHandshake(pkt, ep)
		return nil
	default:
		d.drop(dropBadType, 1)
		return nil
	}
	if len(pkt) < ciphers.HeaderSize {
		d.drop(dropShortPacket, 1)
		return nil
	}
	if pkt[1] != ProtocolVersion || pkt[2]|pkt[3] != 0 {
		d.drop(dropBadType, 1)
		return nil
	}
	idx := binary.LittleEndian.Uint32(pkt[4:8])
	kp := st.lastKP
	if kp == nil || idx != st.lastIndex {
		kp = d.indices.lookup(idx)
		if kp == nil {
			d.drop(dropUnknownIndex, 1)
			return nil
		}
		st.lastIndex, st.lastKP = idx, kp
	}
	if len(pkt)-ciphers.HeaderSize-kp.params.TagSize < 0 {
		d.drop(dropShortPacket, 1)
		return nil
	}
	if st.now.IsZero() {
		st.now = d.clock.Now()
	}
	if kp.dead.Load() || handshake.ReceiveExpired(kp.params, st.now.Sub(kp.created), kp.authFailures.Load()) {
		d.drop(dropExpiredKeypair, 1)
		return nil
	}
	return kp
}

// inPlaceSlots is the number of buffers a RoutineReceiveInPlace reader
// hands to each receive call; with GRO each may return up to 64
// datagrams.
const inPlaceSlots = 8

// RoutineReceiveInPlace is the receive pipeline, one per receive function
// of the bind (netio.InPlaceBind, or a copying bind behind netio.InPlace):
// GRO-coalesced datagrams are decrypted where the kernel put them instead
// of being copied apart. A
// buffer whose datagrams all go to one peer is handed to the last of that
// peer's containers holding one of them (the peer's containers are
// processed and released in order, so the earlier ones are done with it
// first); datagrams of a buffer shared between peers (which only a
// misbehaving source produces) are copied out into buffers of their own.
func (d *Device) RoutineReceiveInPlace(recv netio.InPlaceReceiveFunc) {
	defer d.readers.Done()
	d.log.Verbosef("Routine: receive incoming (in place) - started")
	defer d.log.Verbosef("Routine: receive incoming (in place) - stopped")
	const npkts = inPlaceSlots * 64
	var bufs [inPlaceSlots]*buffer
	var raw [inPlaceSlots][]byte
	var last [inPlaceSlots]*inContainer
	var shared [inPlaceSlots]bool
	pkts := make([][]byte, npkts)
	owner := make([]int, npkts)
	eps := make([]netio.Endpoint, npkts)
	conts := make([]*inContainer, 0, npkts)
	defer func() { d.buffers.put(bufs[:]...) }()
	for i := range bufs {
		if bufs[i] = d.buffers.get(); bufs[i] == nil {
			return
		}
		raw[i] = bufs[i][:netio.MaxSegmentSize]
	}
	releaseAll := func() {
		for _, c := range conts {
			d.releaseIn(c)
		}
	}
	errorsInARow := 0
	for {
		n, err := recv(raw[:], pkts, owner, eps)
		if err != nil {
			if d.isClosed() || errors.Is(err, net.ErrClosed) {
				return
			}
			errorsInARow++
			d.recvErrors.Add(1)
			d.log.Verbosef("Failed to receive packets: %v", err)
			if errorsInARow > 10 {
				time.Sleep(10 * time.Millisecond)
			}
			if n == 0 {
				continue
			}
		} else {
			errorsInARow = 0
		}
		var st classifyState
		for k := range n {
			kp := d.classify(pkts[k], eps[k], &st)
			if kp == nil {
				continue
			}
			var c *inContainer
			for _, x := range conts {
				if x.kp == kp && x.n < ciphers.MaxBatch {
					c = x
					break
				}
			}
			if c == nil {
				if !kp.acquire() { // retired meanwhile
					d.drop(dropExpiredKeypair, 1)
					continue
				}
				c = d.inPool.get()
				c.kp, c.seq = kp, len(conts)
				conts = append(conts, c)
			}
			o := owner[k]
			c.pkts[c.n], c.eps[c.n], c.owner[c.n] = pkts[k], eps[k], int16(o)
			c.n++
			if l := last[o]; l == nil || c.seq > l.seq {
				if l != nil && l.kp.peer != kp.peer {
					shared[o] = true
				}
				last[o] = c
			} else if l.kp.peer != kp.peer {
				shared[o] = true
			}
		}
		clear(pkts[:n])
		clear(eps[:n])
		closing := false
		for o := range inPlaceSlots {
			c := last[o]
			if c == nil {
				continue
			}
			last[o] = nil
			if shared[o] {
				shared[o] = false
				closing = closing || !d.copyOut(conts, o)
				continue // the buffer stays with the reader
			}
			c.bufs[c.nbufs] = bufs[o]
			c.nbufs++
			bufs[o], raw[o] = nil, nil
			if !closing {
				if bufs[o] = d.buffers.get(); bufs[o] == nil {
					closing = true
				} else {
					raw[o] = bufs[o][:netio.MaxSegmentSize]
				}
			}
		}
		if closing {
			releaseAll()
			return
		}
		d.enqueueInboundVector(conts)
		conts = conts[:0]
	}
}

// enqueueInboundVector hands the containers of one in-place read to their
// peers, in order, clearing conts. A peer's containers may share buffers,
// each owned by the last of them, so they go in under one hold of the
// peer's inMu: a peer removed meanwhile gets all of them or none (then
// all are released here), never the earlier ones queued while the owner
// of their buffer is released.
func (d *Device) enqueueInboundVector(conts []*inContainer) {
	for i, c := range conts {
		if c == nil {
			continue
		}
		p := c.kp.peer
		p.inMu.Lock()
		for j := i; j < len(conts); j++ {
			x := conts[j]
			if x == nil || x.kp.peer != p {
				continue
			}
			conts[j] = nil
			if p.inClosed {
				d.releaseIn(x)
				continue
			}
			if d.inline {
				// Run to completion, in the peer's order: inMu keeps
				// any other receiver's containers of p behind these,
				// and a slot's buffer goes with its last container.
				d.openContainer(x)
				p.receiveContainer(x)
				d.releaseIn(x)
				continue
			}
			x.mu.Lock()
			p.inbound <- x
			d.decryptQueue <- x
		}
		p.inMu.Unlock()
	}
}

// copyOut gives every packet of reader slot o its own buffer (copying
// it there), for a slot whose packets went to several peers. It reports
// false if the pool closed; the copied packets so far stay owned by their
// containers.
func (d *Device) copyOut(conts []*inContainer, o int) bool {
	for _, c := range conts {
		for j := range c.n {
			if int(c.owner[j]) != o {
				continue
			}
			nb := d.buffers.get()
			if nb == nil {
				return false
			}
			m := copy(nb[:], c.pkts[j])
			c.pkts[j] = nb[:m:m]
			c.owner[j] = -1
			c.bufs[c.nbufs] = nb
			c.nbufs++
		}
	}
	return true
}

// RoutineDecryption opens one container per call of Key.Open, within the
// keypair's and the peer's forgery budgets (openContainer), then unlocks
// it for the peer's sequential receiver.
func (d *Device) RoutineDecryption(id int) {
	defer d.cryptoWorkers.Done()
	for c := range d.decryptQueue {
		d.openContainer(c)
		c.mu.Unlock()
	}
}

// RoutineSequentialReceiver processes the peer's containers in order: for
// each authenticated packet the replay window, then keepalive or inner
// packet checks (length from its IP header, source in the peer's
// AllowedIPs), and one TUN write per container.
func (p *Peer) RoutineSequentialReceiver() {
	defer p.routines.Done()
	d := p.device
	for c := range p.inbound {
		c.mu.Lock()
		p.receiveContainer(c)
		c.mu.Unlock()
		d.releaseIn(c)
	}
}

func (p *Peer) receiveContainer(c *inContainer) {
	d := p.device
	kp := c.kp
	d.drop(dropAuthFailed, c.verified-c.mask.Count())
	if kp.dead.Load() {
		// The budget was spent by an earlier container (in the peer's
		// order): nothing of this keypair is delivered any more, even
		// packets that a worker authenticated meanwhile.
		d.drop(dropAuthBudget, c.n-(c.verified-c.mask.Count()))
		return
	}
	// Refused unchecked: a budget ran out within this container. The
	// packets checked before it still count; the keypair ends here.
	d.drop(dropAuthBudget, c.n-c.verified)
	if c.peerShort {
		defer p.peerBudgetSpent(kp)
	} else if c.short || handshake.AuthFailureExceeded(kp.params, kp.authFailures.Load()) {
		defer p.discardKeypair(kp)
	}
	routes := d.routes.Load()
	var lastEP netio.Endpoint
	out, rxBytes, rxPackets, data := 0, 0, 0, false
	for i := range c.n {
		if !c.mask.Has(i) {
			continue
		}
		pkt := c.pkts[i]
		if !kp.replay.ValidateCounter(ciphers.Counter(pkt), kp.params.RejectAfterMessages) {
			d.drop(dropReplay, 1)
			continue
		}
		lastEP = c.eps[i]
		rxPackets++
		rxBytes += len(pkt) + kp.params.TagSize // as on the wire
		body := pkt[ciphers.HeaderSize:]
		if len(body) == 0 {
			continue // keepalive
		}
		data = true
		n, src, ok := innerPacket(body)
		if !ok {
			d.drop(dropMalformedInner, 1)
			continue
		}
		if owner, ok := routes.LookupIP(src); !ok || owner != p {
			d.drop(dropDisallowedSource, 1)
			continue
		}
		c.pkts[out] = pkt[:ciphers.HeaderSize+n]
		out++
	}
	if rxPackets == 0 {
		return
	}
	now := d.clock.Now()
	t := d.since(now)
	p.rxBytes.Add(uint64(rxBytes))
	p.rxPackets.Add(uint64(rxPackets))
	p.lastReceived.Store(t)
	p.sentUnanswered.Store(0)
	if data {
		p.keepaliveArmed.CompareAndSwap(0, t)
	}
	p.setEndpointFromData(lastEP)
	if !kp.confirmed.Load() {
		p.hs.ConfirmedByData(kp.localIndex)
		if p.confirmKeypair(kp) {
			d.log.Verbosef("%v - keypair %d confirmed by data", p, kp.localIndex)
			p.sendStaged()
		}
	}
	if cur := p.sendKP.Load(); cur == kp && handshake.ShouldRekeyOnReceive(kp.isInitiator, now.Sub(kp.created)) {
		p.initiateHandshake(false)
	}
	if out > 0 {
		q := p.tunQueue
		d.tunWriters[q].Lock()
		_, err := d.tuns[q].Write(c.pkts[:out], ciphers.HeaderSize)
		d.tunWriters[q].Unlock()
		if err != nil {
			d.drop(dropTUNWriteError, out)
			if !d.isClosed() {
				d.errorLimited("Failed to write packets to TUN queue %d: %v", q, err)
			}
		}
	}
}
