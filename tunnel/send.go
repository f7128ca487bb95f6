package tunnel

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"time"

	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/tun"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
)

// Data packet header fields (docs/PROTOCOL.md, "Data packets").
const (
	// MessageDataType is byte 0 of a data packet.
	MessageDataType = 0x14
	// ProtocolVersion is byte 1 of every gmtun datagram.
	ProtocolVersion = 1
	// paddingMultiple: bodies are zero-padded to a multiple of 16 bytes,
	// but never beyond the MTU (docs/PROTOCOL.md, "Data packets").
	paddingMultiple = 16
)

// paddedLen returns the body length of an inner packet of n bytes on a
// link of the given MTU: n rounded up to a multiple of 16, but not beyond
// the MTU (as WireGuard does), so a full-size packet still fits the outer
// path. Padding only hides the exact length; receivers accept any length.
func paddedLen(n, mtu int) int {
	p := (n + paddingMultiple - 1) &^ (paddingMultiple - 1)
	if p > mtu {
		p = max(n, mtu)
	}
	return p
}

// destination returns the destination address bytes of an IPv4 or IPv6
// packet, or nil if the packet is too short or of another version.
func destination(pkt []byte) []byte {
	if len(pkt) == 0 {
		return nil
	}
	switch pkt[0] >> 4 {
	case 4:
		if len(pkt) >= 20 {
			return pkt[16:20]
		}
	case 6:
		if len(pkt) >= 40 {
			return pkt[24:40]
		}
	}
	return nil
}

// linkScoped reports whether dst (4 or 16 bytes) never leaves the link:
// IPv6 link-local unicast (fe80::/10) and interface- or link-local
// multicast (ffx1::/16, ffx2::/16: router solicitations, MLD reports, the
// kernel sends them on every IPv6 link), IPv4 link-local (169.254.0.0/16),
// local network control multicast (224.0.0.0/24) and the limited
// broadcast. Unrouted, they are counted as link_local, not no_route: they
// are the kernel's own noise on an idle tunnel, not misrouted traffic.
func linkScoped(dst []byte) bool {
	if len(dst) == 16 {
		return dst[0] == 0xfe && dst[1]&0xc0 == 0x80 ||
			dst[0] == 0xff && (dst[1]&0x0f == 1 || dst[1]&0x0f == 2)
	}
	return dst[0] == 169 && dst[1] == 254 ||
		dst[0] == 224 && dst[1] == 0 && dst[2] == 0 ||
		dst[0] == 255 && dst[1] == 255 && dst[2] == 255 && dst[3] == 255
}

// RoutineReadFromTUN reads vectors from TUN queue q, routes each packet to
// its peer by destination (longest-prefix AllowedIPs), groups the packets
// of each peer into one container and hands the containers to the peers.
// It never waits for more packets than one read returned.
func (d *Device) RoutineReadFromTUN(q int) {
	defer d.readers.Done()
	d.log.Verbosef("Routine: TUN reader %d - started", q)
	defer d.log.Verbosef("Routine: TUN reader %d - stopped", q)
	t := d.tuns[q]
	batch := min(max(t.BatchSize(), 1), ciphers.MaxBatch)
	bufs := make([]*buffer, batch)
	pkts := make([][]byte, batch)
	sizes := make([]int, batch)
	conts := make([]*outContainer, 0, batch)
	defer func() {
		d.buffers.put(bufs...)
	}()
	for i := range bufs {
		if bufs[i] = d.buffers.get(); bufs[i] == nil {
			return
		}
		pkts[i] = bufs[i][:]
	}
	errorsInARow := 0
	for {
		n, err := t.Read(pkts, sizes, ciphers.HeaderSize)
		if err != nil && !errors.Is(err, tun.ErrTooManySegments) {
			if d.isClosed() || errors.Is(err, os.ErrClosed) {
				return
			}
			// Anything else may be transient (the packets read are
			// still valid): a reader that gave up would leave this
			// queue's traffic unsent for good.
			errorsInARow++
			d.errorLimited("Failed to read from TUN queue %d: %v", q, err)
			if errorsInARow > 10 {
				time.Sleep(10 * time.Millisecond)
			}
		} else {
			errorsInARow = 0
		}
		routes := d.routes.Load()
		for i := range n {
			pkt := bufs[i][ciphers.HeaderSize : ciphers.HeaderSize+sizes[i]]
			dst := destination(pkt)
			if dst == nil {
				d.drop(dropMalformedOutbound, 1)
				continue
			}
			peer, ok := routes.LookupIP(dst)
			if !ok {
				if linkScoped(dst) {
					d.drop(dropLinkLocal, 1)
				} else {
					d.drop(dropNoRoute, 1)
				}
				continue
			}
			var c *outContainer
			for _, x := range conts {
				if x.peer == peer {
					c = x
					break
				}
			}
			if c == nil {
				c = d.outPool.get()
				c.peer = peer
				conts = append(conts, c)
			}
			c.bufs[c.n], c.sizes[c.n] = bufs[i], sizes[i]
			c.n++
			bufs[i] = nil // refilled below, for the whole vector at once
		}
		if !d.buffers.refill(bufs[:n]) {
			// Closing: hand back what we hold.
			for _, c := range conts {
				d.releaseOut(c)
			}
			return
		}
		for i := range n {
			pkts[i] = bufs[i][:]
		}
		for i, c := range conts {
			// stagePackets may release c (peer removed, or c itself
			// pushed out of the staging queue): read its peer first.
			p := c.peer
			p.stagePackets(c)
			p.sendStaged()
			conts[i] = nil
		}
		conts = conts[:0]
	}
}

// stagePackets queues c until the peer has a usable keypair, dropping the
// oldest staged packets beyond MaxStagedPackets (or the device's staging
// budget).
func (p *Peer) stagePackets(c *outContainer) {
	d := p.device
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	if p.sendClosed {
		d.releaseOut(c)
		return
	}
	p.staged = append(p.staged, c)
	p.stagedPackets += c.n
	total := d.stagedTotal.Add(int64(c.n))
	for p.stagedLen() > 0 && (p.stagedPackets > MaxStagedPackets || total > d.stagedBudget) {
		old := p.popStaged()
		total = d.stagedTotal.Load()
		d.drop(dropStagedOverflow, old.n)
		d.releaseOut(old)
	}
}

func (p *Peer) stagedLen() int { return len(p.staged) - p.stagedHead }

// popStaged removes the oldest staged container. p.sendMu held, not empty.
// The slice is reused from its start once empty, so staging does not
// allocate in the steady state.
func (p *Peer) popStaged() *outContainer {
	c := p.staged[p.stagedHead]
	p.staged[p.stagedHead] = nil
	p.stagedHead++
	if p.stagedHead == len(p.staged) {
		p.staged, p.stagedHead = p.staged[:0], 0
	}
	p.stagedPackets -= c.n
	p.device.stagedTotal.Add(-int64(c.n))
	return c
}

// dropStagedLocked discards every staged packet. p.sendMu held.
func (p *Peer) dropStagedLocked(count bool) {
	d := p.device
	for p.stagedLen() > 0 {
		c := p.popStaged()
		if count {
			d.drop(dropStagedOverflow, c.n)
		}
		d.releaseOut(c)
	}
}

// sendStaged sends the staged containers with the current keypair:
// reserve counters (one atomic add per container), write headers, pad,
// lock the container and push it to the peer's ordered queue and the
// encryption queue. All of it happens under p.sendMu so that enqueue order
// is counter order. Without a usable keypair it starts a handshake and
// leaves the packets staged.
func (p *Peer) sendStaged() {
	d := p.device
	needHandshake := false
	p.sendMu.Lock()
	if p.sendClosed || p.stagedLen() == 0 {
		p.sendMu.Unlock()
		return
	}
	now := d.clock.Now()
	kp := p.sendKP.Load()
	for p.stagedLen() > 0 {
		c := p.staged[p.stagedHead]
		if kp == nil || kp.dead.Load() {
			needHandshake = true
			break
		}
		body := 0
		for i := range c.n {
			body += paddedLen(c.sizes[i], p.device.mtu)
		}
		age := now.Sub(kp.created)
		n := uint64(c.n)
		sent := kp.sendCounter.Load()
		if handshake.SendExpired(kp.params, age, sent+n-1, kp.sendBytes.Load()+uint64(body), 0) {
			needHandshake = true
			break
		}
		if !kp.acquire() {
			// Retired meanwhile (its keys are wiped): take the
			// keypair that replaced it, if any.
			if next := p.sendKP.Load(); next != kp {
				kp = next
				continue
			}
			needHandshake = true
			break
		}
		c0 := kp.sendCounter.Add(n) - n
		sentBytes := kp.sendBytes.Add(uint64(body))
		p.popStaged()
		for i := range c.n {
			b := c.bufs[i]
			size := c.sizes[i]
			padded := paddedLen(size, p.device.mtu)
			clear(b[ciphers.HeaderSize+size : ciphers.HeaderSize+padded])
			b[0], b[1], b[2], b[3] = MessageDataType, ProtocolVersion, 0, 0
			binary.LittleEndian.PutUint32(b[4:8], kp.remoteIndex)
			binary.LittleEndian.PutUint64(b[8:16], c0+uint64(i))
			c.pkts[i] = b[:ciphers.HeaderSize+padded]
		}
		c.kp, c.peer = kp, p
		rekey := handshake.ShouldRekeyOnSend(kp.params, kp.isInitiator, age, c0+n, sentBytes)
		needHandshake = needHandshake || rekey
		if d.inline {
			// Run to completion, in counter order: sendMu keeps the
			// next container behind this one.
			d.seal(c)
			p.transmit(c)
			d.releaseOut(c)
			continue
		}
		c.mu.Lock()
		p.outbound <- c
		d.encryptQueue <- c
	}
	p.sendMu.Unlock()
	if needHandshake {
		p.initiateHandshake(false)
	}
}

// sendKeepalive sends an empty data packet (or, without a keypair, stages
// one and starts a handshake). Nothing is added if packets are already
// staged: they will do.
func (p *Peer) sendKeepalive() {
	d := p.device
	p.sendMu.Lock()
	if p.sendClosed {
		p.sendMu.Unlock()
		return
	}
	if p.stagedLen() == 0 {
		b := d.buffers.tryGet()
		if b == nil {
			p.sendMu.Unlock()
			return
		}
		c := d.outPool.get()
		c.peer, c.bufs[0], c.sizes[0], c.n = p, b, 0, 1
		p.staged = append(p.staged, c)
		p.stagedPackets++
		d.stagedTotal.Add(1)
	}
	p.sendMu.Unlock()
	p.sendStaged()
}

// initiateHandshake sends a handshake initiation. Unless retry is set it
// does nothing while a handshake is in progress or within RekeyTimeout of
// the previous initiation.
func (p *Peer) initiateHandshake(retry bool) {
	d := p.device
	if d.isClosed() || p.removed.Load() {
		return
	}
	p.hsMu.Lock()
	now := d.clock.Now()
	if !retry && (p.hsInProgress || (!p.hsLastSent.IsZero() && now.Sub(p.hsLastSent) < handshake.RekeyTimeout)) {
		p.hsMu.Unlock()
		return
	}
	ep := p.getEndpoint()
	if ep == nil {
		if !p.hsNoEndpoint {
			p.hsNoEndpoint = true
			d.log.Verbosef("%v - no endpoint known, cannot start a handshake", p)
		}
		p.hsInProgress = false
		p.hsMu.Unlock()
		return
	}
	p.hsNoEndpoint = false
	if !p.hsInProgress {
		p.hsInProgress, p.hsStarted = true, now
	}
	msg, err := d.local.CreateInitiation(p.hs, now)
	if err != nil {
		p.hsInProgress = false
		p.hsMu.Unlock()
		if !errors.Is(err, handshake.ErrSuitesRefused) || p.budgetLogAllowed() {
			d.log.Errorf("%v - creating a handshake initiation: %v", p, err)
		}
		return
	}
	p.hsLastSent = now
	p.hsLastInit, p.hsResent = msg, 0
	p.hsRetry = handshake.RetryTimeout(uint16(rand.Uint32()))
	p.hsMu.Unlock()
	d.log.Verbosef("%v - sending handshake initiation", p)
	p.sendControl(msg[:])
}

// sendControl sends one handshake message to the peer's endpoint.
func (p *Peer) sendControl(msg []byte) {
	ep := p.getEndpoint()
	if ep == nil {
		p.device.drop(dropNoEndpoint, 1)
		return
	}
	if err := sendResult(p.device.bind.Send([][]byte{msg}, ep)); err != nil {
		p.device.drop(dropSendError, 1)
		p.device.log.Verbosef("%v - sending a handshake message: %v", p, err)
		return
	}
	p.txBytes.Add(uint64(len(msg)))
	p.txPackets.Add(1)
}

// sendResult is the error of a bind's Send that matters: a
// conn.ErrUDPGSODisabled only reports that the bind turned UDP GSO off
// and resent without it, so its RetryErr is the result.
func sendResult(err error) error {
	if err == nil {
		return nil // before gsoOff: it escapes, and this path must not allocate
	}
	var gsoOff conn.ErrUDPGSODisabled
	if errors.As(err, &gsoOff) {
		return gsoOff.RetryErr
	}
	return err
}

// RoutineEncryption seals one container per call of Key.Seal, then
// unlocks it for the peer's sequential sender.
func (d *Device) RoutineEncryption(id int) {
	defer d.cryptoWorkers.Done()
	for c := range d.encryptQueue {
		d.seal(c)
		c.mu.Unlock()
	}
}

// seal encrypts the container's packets in place and records the outcome
// (c.ok) and its wire size.
func (d *Device) seal(c *outContainer) {
	t := d.sealBatches.start()
	c.ok = c.kp.send.Seal(c.pkts[:c.n]) == nil
	d.sealBatches.done(t, c.n)
	if c.ok {
		c.wire = 0
		for _, pkt := range c.pkts[:c.n] {
			c.wire += len(pkt)
		}
	}
}

// RoutineSequentialSender sends the peer's containers in order, one
// bind.Send per container, waiting on each container's lock for its
// encryption to finish.
func (p *Peer) RoutineSequentialSender() {
	defer p.routines.Done()
	d := p.device
	for c := range p.outbound {
		c.mu.Lock()
		p.transmit(c)
		c.mu.Unlock()
		d.releaseOut(c)
	}
}

// transmit sends the sealed container c to the peer's endpoint in one
// bind.Send and accounts for it (or counts its drop).
func (p *Peer) transmit(c *outContainer) {
	d := p.device
	switch ep := p.getEndpoint(); {
	case !c.ok:
		d.drop(dropSendError, c.n)
	case ep == nil:
		d.drop(dropNoEndpoint, c.n)
	default:
		if err := sendResult(d.bind.Send(c.pkts[:c.n], ep)); err != nil {
			d.drop(dropSendError, c.n)
			if !d.isClosed() {
				d.errorLimited("%v - failed to send data packets: %v", p, err)
			}
			break
		}
		now := d.since(d.clock.Now())
		p.txBytes.Add(uint64(c.wire))
		p.txPackets.Add(uint64(c.n))
		p.lastSent.Store(now)
		p.keepaliveArmed.Store(0)
		for i := range c.n {
			if c.sizes[i] > 0 {
				p.sentUnanswered.CompareAndSwap(0, now)
				break
			}
		}
	}
}
