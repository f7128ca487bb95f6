// The timers: the device's tick (RoutineTimers, timerTick), the stall
// watchdog, and each peer's part of the walk (expireTimers): handshake
// retransmission, keypair expiry and zeroing, keepalives.

package tunnel

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/gmtun/gmtun/handshake"
)

// RoutineTimers walks the peers every tick interval (see timerTick) and
// runs the stall watchdog (checkStall).
func (d *Device) RoutineTimers() {
	defer d.timerRoutine.Done()
	d.log.Verbosef("Routine: timers - started")
	defer d.log.Verbosef("Routine: timers - stopped")
	t := time.NewTicker(d.tick)
	defer t.Stop()
	for {
		select {
		case <-d.closing:
			return
		case <-t.C:
			d.timerTick()
			d.checkStall(time.Now())
		}
	}
}

// timerTick runs every timer of every peer against the device clock:
// handshake retransmission and give-up, keypair expiry and zeroing,
// new handshake after unanswered data, passive and persistent keepalives.
// It is safe to call concurrently (tests step a fake clock and call it).
func (d *Device) timerTick() {
	d.tickMu.Lock()
	defer d.tickMu.Unlock()
	if d.isClosed() {
		return
	}
	now := d.clock.Now()
	d.peersMu.RLock()
	d.tickPeers = append(d.tickPeers[:0], d.peerList...)
	d.peersMu.RUnlock()
	for _, p := range d.tickPeers {
		p.expireTimers(now)
	}
	clear(d.tickPeers)
	d.rate.GC(now)
}

// stallReportAfter is how long readers may wait for a packet buffer while
// none comes back before the watchdog reports a stall.
const stallReportAfter = 10 * time.Second

// stallWatch is the state of the stall watchdog (RoutineTimers only).
type stallWatch struct {
	puts     uint64    // the pool's put count when since was set
	since    time.Time // first seen exhausted with no put since (zero: not)
	reported bool
	dumped   bool // goroutine stacks are logged once per device
}

// checkStall logs an error, once per episode, when readers have waited
// for a free buffer for stallReportAfter (wall time) and no buffer was
// returned meanwhile: then nothing is read any more, not even handshake
// messages, and the pipeline that should free the buffers is stuck. The
// line carries the pool and queue state; the first one also logs every
// goroutine's stack at verbose level.
func (d *Device) checkStall(now time.Time) {
	ps := d.buffers.stats()
	w := &d.stall
	if ps.waiting == 0 || ps.puts != w.puts || w.since.IsZero() {
		w.puts, w.since, w.reported = ps.puts, time.Time{}, false
		if ps.waiting > 0 {
			w.since = now
		}
		return
	}
	if w.reported || now.Sub(w.since) < stallReportAfter {
		return
	}
	w.reported = true
	d.log.Errorf("data plane stalled: no packet buffer returned for %v while %d reader(s) wait; %s",
		now.Sub(w.since).Round(time.Second), ps.waiting, d.stallSummary())
	if !w.dumped {
		w.dumped = true
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		d.log.Verbosef("goroutines at the stall:\n%s", buf)
	}
}

// stallSummary describes where the buffers are, for the watchdog. It
// takes no lock that a stuck pipeline could hold for long (the peer list
// and each peer's name only if free).
func (d *Device) stallSummary() string {
	b := d.bufferStats()
	var sb strings.Builder
	fmt.Fprintf(&sb, "buffers: %d in use, %d free, %d allocated of %d; staged %d; queues: encrypt %d, decrypt %d, handshake %d; receive errors %d",
		b.InUse, b.Free, b.Allocated, b.Max, b.Staged, b.EncryptQueue, b.DecryptQueue, b.HandshakeQueue, d.recvErrors.Load())
	if !d.peersMu.TryRLock() {
		return sb.String()
	}
	peers := append([]*Peer(nil), d.peerList...)
	d.peersMu.RUnlock()
	for _, p := range peers {
		name := "?"
		if p.mu.TryLock() {
			name = p.name
			p.mu.Unlock()
		}
		staged := -1
		if p.sendMu.TryLock() {
			staged = p.stagedPackets
			p.sendMu.Unlock()
		}
		fmt.Fprintf(&sb, "; peer(%s) inbound %d, outbound %d, staged %d", name, len(p.inbound), len(p.outbound), staged)
	}
	return sb.String()
}

// expireTimers is the peer's part of the timer walk.
func (p *Peer) expireTimers(now time.Time) {
	d := p.device
	// Handshake retransmission and giving up.
	retry, giveUp := false, false
	var resend [handshake.MessageInitiationSize]byte
	resending := false
	p.hsMu.Lock()
	if p.hsInProgress && now.Sub(p.hsLastSent) >= p.hsRetry {
		if handshake.GiveUpHandshake(p.hsStarted, now) {
			p.hsInProgress, giveUp = false, true
		} else {
			retry = true
		}
	} else if p.hsInProgress && p.hsResent < MaxFastRetransmits &&
		now.Sub(p.hsLastSent) >= time.Duration(p.hsResent+1)*FastRetransmitInterval {
		// No answer yet: the datagram (or the answer) may be lost, as it
		// is under a flood. Send the same bytes again: a responder that
		// never saw them answers the copy, one that already answered them
		// sends the same response again (handshake_copies.go).
		p.hsResent++
		p.hsRetransmits++
		resend, resending = p.hsLastInit, true
	}
	p.hsMu.Unlock()
	if resending {
		d.log.Verbosef("%v - retransmitting the handshake initiation", p)
		p.sendControl(resend[:])
	}
	if giveUp {
		p.hs.ClearHandshakes()
		p.sendMu.Lock()
		p.dropStagedLocked(true)
		p.sendMu.Unlock()
		d.log.Verbosef("%v - handshake did not complete after %v, giving up", p, handshake.RekeyAttemptTime)
		p.diagnoseNoAnswer()
	}
	if retry {
		p.initiateHandshake(true)
	}

	// Keypair expiry and zeroing.
	p.kpMu.Lock()
	if !p.kpClosed {
		dropped := p.keypairs.Expire(now)
		if handshake.ShouldZeroKeys(p.lastHandshake, now) {
			dropped = append(dropped, p.keypairs.Clear()...)
			p.lastHandshake = time.Time{}
		}
		if len(dropped) > 0 {
			p.freeKeypairs(dropped)
		}
	}
	p.kpMu.Unlock()

	t := d.since(now)
	// No answer to data for KeepaliveTimeout + RekeyTimeout: new handshake.
	if s := p.sentUnanswered.Load(); s != 0 && t-s >= int64(handshake.KeepaliveTimeout+handshake.RekeyTimeout) {
		p.sentUnanswered.Store(0)
		p.initiateHandshake(false)
	}
	// Passive keepalive: data received, nothing sent for KeepaliveTimeout.
	if r := p.keepaliveArmed.Load(); r != 0 && t-r >= int64(handshake.KeepaliveTimeout) {
		p.keepaliveArmed.Store(0)
		p.sendKeepalive()
	}
	// Persistent keepalive.
	if ka := p.keepaliveInterval(); ka > 0 {
		last := max(p.lastSent.Load(), p.lastReceived.Load())
		if t-last >= int64(ka) {
			p.sendKeepalive()
		}
	}
}
