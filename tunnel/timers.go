package tunnel

import (
	"time"
)

// RoutineTimers walks the peers every tick interval (see timerTick).
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
