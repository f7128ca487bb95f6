// The peer's keypair slots (handshake.Keypairs): installing and confirming
// the keypairs of completed handshakes, freeing the ones they replace, and
// discarding keypairs whose forgery budget (authbudget.go) is spent.

package tunnel

import "time"

// freeKeypairs forgets dropped keypairs and retires them: their keys are
// wiped once no container uses them. p.kpMu held.
func (p *Peer) freeKeypairs(dropped []*keypair) {
	for _, kp := range dropped {
		p.device.indices.freeKeypair(kp)
		kp.retire()
	}
	cur, ok := p.keypairs.Current()
	if !ok {
		cur = nil
	}
	p.sendKP.Store(cur)
}

// installKeypair adds a keypair from a completed handshake. It reports
// false if the peer or the index went away meanwhile.
func (p *Peer) installKeypair(kp *keypair, now time.Time) bool {
	p.kpMu.Lock()
	defer p.kpMu.Unlock()
	if p.kpClosed || !p.device.indices.setKeypair(kp) {
		kp.retire()
		return false
	}
	p.freeKeypairs(p.keypairs.Install(kp, kp.isInitiator, now))
	if kp.isInitiator {
		// The response proved the peer holds the keys: established. A
		// responder's keypair counts once confirmKeypair promotes it
		// (the initiator may still reject it).
		p.lastHandshake = now
		p.handshakes++
	}
	return true
}

// confirmKeypair promotes a responder's keypair once the peer proved it
// holds it, and reports whether it was promoted.
func (p *Peer) confirmKeypair(kp *keypair) bool {
	p.kpMu.Lock()
	defer p.kpMu.Unlock()
	dropped, promoted := p.keypairs.Confirm(kp)
	if promoted {
		kp.confirmed.Store(true)
		p.freeKeypairs(dropped)
		p.lastHandshake = p.device.clock.Now()
		p.handshakes++
	}
	return promoted
}

// discardKeypair retires kp after its receive key used up the suite's
// integrity budget: it stops receiving (its index is freed) and sending,
// and a new handshake starts.
func (p *Peer) discardKeypair(kp *keypair) {
	if kp.dead.Swap(true) {
		return
	}
	p.device.indices.freeKeypair(kp)
	if p.budgetLogAllowed() {
		p.device.log.Errorf("%v - keypair %d (%v) used up its authentication-failure budget (%d forged or corrupted packets), rekeying",
			p, kp.localIndex, kp.suite, kp.authFailures.Load())
	}
	p.initiateHandshake(false)
}

// budgetLogAllowed rate-limits the forgery-budget log lines of a peer to
// one a minute.
func (p *Peer) budgetLogAllowed() bool {
	now := p.device.since(p.device.clock.Now())
	last := p.lastBudgetLog.Load()
	if last != 0 && now-last < int64(time.Minute) {
		return false
	}
	return p.lastBudgetLog.CompareAndSwap(last, now)
}

// peerBudgetSpent handles a container refused because the peer's forgery
// budget ran dry (authbudget.go): every short-tag keypair of the peer is
// discarded, short-tag suites are refused with the peer until the bucket
// holds peerAuthResume tokens again, and a handshake starts, which
// continues the session on another common suite if there is one. A trip
// is counted (and logged) once per refusal period.
func (p *Peer) peerBudgetSpent(kp *keypair) {
	d := p.device
	b := p.authBudget
	now := d.clock.Now()
	t := d.since(now)
	until := max(b.readyAt(peerAuthResume), t+int64(time.Second))
	old := b.refusedUntil.Load()
	newTrip := old <= t
	if until > old {
		b.refusedUntil.CompareAndSwap(old, until)
	}
	p.refuseShortTagSuites(now, until)
	p.kpMu.Lock()
	var victims []*keypair
	for _, get := range []func() (*keypair, bool){p.keypairs.Current, p.keypairs.Previous, p.keypairs.Next} {
		if x, ok := get(); ok && x != nil && shortTag(x.params) {
			victims = append(victims, x)
		}
	}
	p.kpMu.Unlock()
	if newTrip {
		b.trips.Add(1)
		d.log.Errorf("%v - the peer's forgery budget for short-tag suites is spent (%d failed tags charged, trip %d); refusing %v with this peer for %v, rekeying on another suite if one is common",
			p, b.failures.Load(), b.trips.Load(), kp.suite, time.Duration(until-t).Round(time.Minute))
	}
	for _, x := range append(victims, kp) {
		if !x.dead.Swap(true) {
			d.indices.freeKeypair(x)
		}
	}
	p.initiateHandshake(false)
}

// refuseShortTagSuites tells the handshake to refuse the peer's
// short-tag suites until device time until.
func (p *Peer) refuseShortTagSuites(now time.Time, until int64) {
	at := now.Add(time.Duration(until - p.device.since(now)))
	for _, id := range p.suites {
		if shortTag(id.Params()) {
			p.hs.RefuseSuite(id, at)
		}
	}
}
