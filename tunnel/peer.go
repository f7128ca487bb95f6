package tunnel

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/allowedips"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// Peer is one remote gateway of a Device.
type Peer struct {
	device   *Device
	hs       *handshake.Peer
	tunQueue int // TUN queue its received packets are written to

	// session-relevant configuration (a change replaces the peer)
	id     string
	psk    *[32]byte
	suites []ciphers.SuiteID

	mu                 sync.Mutex // guards the fields below
	name               string
	endpoint           netio.Endpoint
	endpointConfigured bool
	roaming            bool
	keepalive          time.Duration
	allowedIPs         []netip.Prefix

	kpMu          sync.Mutex // guards keypairs and lastHandshake
	keypairs      handshake.Keypairs[*keypair]
	lastHandshake time.Time
	// handshakes counts the keypairs installed (sessions established).
	handshakes uint64
	kpClosed   bool
	sendKP     atomic.Pointer[keypair] // mirror of keypairs.Current()

	sendMu        sync.Mutex      // orders counter reservation and enqueue
	staged        []*outContainer // staged[stagedHead:] are waiting
	stagedHead    int
	stagedPackets int
	sendClosed    bool
	outbound      chan *outContainer

	inMu     sync.Mutex
	inClosed bool
	inbound  chan *inContainer

	hsMu         sync.Mutex // guards the initiation state below
	hsInProgress bool
	hsStarted    time.Time
	hsLastSent   time.Time
	hsRetry      time.Duration
	// hsLastInit is the initiation sent at hsLastSent; hsResent counts its
	// identical retransmissions (FastRetransmitInterval), for a lost datagram.
	hsLastInit   [handshake.MessageInitiationSize]byte
	hsResent     int
	hsNoEndpoint bool // logged "no endpoint" once
	// hsCookieAt: initiation last re-sent on a cookie reply (handshakeq.go).
	hsCookieAt time.Time

	// Timers, as nanoseconds since the device epoch (0 = unset).
	lastSent       atomic.Int64 // any authenticated packet sent
	lastReceived   atomic.Int64 // any authenticated packet received
	keepaliveArmed atomic.Int64 // data received, nothing sent since
	sentUnanswered atomic.Int64 // data sent, nothing received since

	rxBytes, txBytes, rxPackets, txPackets atomic.Uint64
	// diag rate-limits the peer's diagnostics (diag.go).
	diag peerDiag

	// authBudget is the peer's forgery budget for short-tag suites
	// (authbudget.go); a replacement of the peer (SetPeers) inherits it.
	authBudget *peerAuthBudget
	// lastBudgetLog rate-limits the budget log lines (device ns).
	lastBudgetLog atomic.Int64

	removed  atomic.Bool // set when stop begins
	routines sync.WaitGroup
}

// String returns "peer(name)" for log lines.
func (p *Peer) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "peer(" + p.name + ")"
}

// SetPeers replaces the peer set with syncconf semantics: peers are matched
// by public key; a peer whose ID, PSK and suites are unchanged keeps its
// sessions, pending handshakes and counters and only takes the new name,
// endpoint (if one is given and differs), AllowedIPs, keepalive and roaming
// setting; other peers are removed or (re)created. The whole set is
// validated first (canonical, non-overlapping AllowedIPs, distinct keys), so
// on error nothing changed.
func (d *Device) SetPeers(cfgs []PeerConfig) error {
	d.configMu.Lock()
	defer d.configMu.Unlock()
	if d.stateClosed.Load() {
		return errors.New("tunnel: device is closed")
	}
	var all []netip.Prefix
	seen := make(map[[handshake.PublicKeySize]byte]bool)
	for i := range cfgs {
		c := &cfgs[i]
		if c.PublicKey == nil {
			return fmt.Errorf("tunnel: peer %q: public key is required", c.Name)
		}
		k := c.PublicKey.Bytes()
		if seen[k] {
			return fmt.Errorf("tunnel: peer %q: public key configured twice", c.Name)
		}
		seen[k] = true
		for _, pfx := range c.AllowedIPs {
			if err := allowedips.CheckPrefix(pfx); err != nil {
				return fmt.Errorf("tunnel: peer %q: %w", c.Name, err)
			}
		}
		if c.PublicKey.Equal(d.local.PublicKey()) {
			return fmt.Errorf("tunnel: peer %q: public key is the device's own", c.Name)
		}
		if len(c.ID) >= 0x2000 {
			return fmt.Errorf("tunnel: peer %q: SM2 ID too long", c.Name)
		}
		if err := checkSuites(effectiveSuites(c, d.suites)); err != nil {
			return fmt.Errorf("tunnel: peer %q: %w", c.Name, err)
		}
		if c.PersistentKeepalive < 0 {
			return fmt.Errorf("tunnel: peer %q: negative persistent keepalive", c.Name)
		}
		all = append(all, c.AllowedIPs...)
	}
	if a, b, ok := allowedips.FirstOverlap(all); ok {
		return fmt.Errorf("tunnel: allowed IPs %s and %s overlap", a, b)
	}

	d.peersMu.RLock()
	old := maps(d.peers)
	d.peersMu.RUnlock()

	// Peers that keep their session, and those that go (removed, or
	// replaced because ID, PSK or suites changed). The old ones are
	// stopped before their replacements register with the handshake.
	keep := make(map[*Peer]bool)
	for i := range cfgs {
		if p := old[cfgs[i].PublicKey.Bytes()]; p != nil && p.sameSession(&cfgs[i], d.suites) {
			keep[p] = true
		}
	}
	var removed []*Peer
	for _, p := range old {
		if !keep[p] {
			removed = append(removed, p)
		}
	}
	if len(removed) > 0 {
		d.peersMu.Lock()
		for _, p := range removed {
			delete(d.peers, p.hs.PublicKey().Bytes())
		}
		d.peerList = slices.DeleteFunc(slices.Clone(d.peerList), func(p *Peer) bool { return !keep[p] })
		d.peersMu.Unlock()
		for _, p := range removed {
			p.stop()
			d.log.Verbosef("%v - removed", p)
		}
	}

	newList := make([]*Peer, 0, len(cfgs))
	var created []*Peer
	for i := range cfgs {
		c := &cfgs[i]
		if p := old[c.PublicKey.Bytes()]; p != nil && keep[p] {
			newList = append(newList, p)
			continue
		}
		p, err := d.newPeer(c, old[c.PublicKey.Bytes()])
		if err != nil {
			// Validation makes this unreachable in practice; keep the
			// device consistent: the peers handled so far stay.
			for j, q := range newList {
				q.reconfigure(&cfgs[j])
			}
			d.publishPeers(newList)
			return fmt.Errorf("tunnel: peer %q: %w", c.Name, err)
		}
		created = append(created, p)
		newList = append(newList, p)
	}
	for i, p := range newList {
		p.reconfigure(&cfgs[i])
	}
	d.publishPeers(newList)

	for _, p := range created {
		d.log.Verbosef("%v - added", p)
		if p.keepaliveInterval() > 0 && d.stateUp {
			p.sendKeepalive()
		}
	}
	return nil
}

// publishPeers installs list as the peer set and rebuilds the routing
// table from the peers' AllowedIPs.
func (d *Device) publishPeers(list []*Peer) {
	routes := new(allowedips.Table[*Peer])
	for _, p := range list {
		p.mu.Lock()
		for _, pfx := range p.allowedIPs {
			if err := routes.Insert(pfx, p); err != nil {
				d.log.Errorf("%v - route %v: %v", p, pfx, err) // unreachable: checked
			}
		}
		p.mu.Unlock()
	}
	d.peersMu.Lock()
	clear(d.peers)
	for _, p := range list {
		d.peers[p.hs.PublicKey().Bytes()] = p
	}
	d.peerList = list
	d.peersMu.Unlock()
	routes.Freeze() // published tables never change: lock-free lookups
	d.routes.Store(routes)
}

// emptyRoutes returns a frozen table without routes.
func emptyRoutes() *allowedips.Table[*Peer] {
	t := new(allowedips.Table[*Peer])
	t.Freeze()
	return t
}

func maps(m map[[handshake.PublicKeySize]byte]*Peer) map[[handshake.PublicKeySize]byte]*Peer {
	out := make(map[[handshake.PublicKeySize]byte]*Peer, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func checkSuites(s []ciphers.SuiteID) error {
	if len(s) > handshake.MaxOffer {
		return fmt.Errorf("at most %d suites", handshake.MaxOffer)
	}
	for i, id := range s {
		if !slices.Contains(ciphers.Suites[:], id) || slices.Contains(s[:i], id) {
			return fmt.Errorf("unknown or repeated suite %v", id)
		}
	}
	return nil
}

func effectiveSuites(c *PeerConfig, def []ciphers.SuiteID) []ciphers.SuiteID {
	if len(c.Suites) > 0 {
		return c.Suites
	}
	return def
}

// sameSession reports whether c keeps p's session: same identity, PSK and
// suites.
func (p *Peer) sameSession(c *PeerConfig, def []ciphers.SuiteID) bool {
	if p.id != c.ID || (p.psk == nil) != (c.PSK == nil) || (p.psk != nil && *p.psk != *c.PSK) {
		return false
	}
	return slices.Equal(p.suites, effectiveSuites(c, def))
}

// newPeer registers c with the handshake and starts the peer's routines.
// A peer it replaces (prev, same public key, or nil) hands over its
// forgery budget and any refusal of short-tag suites.
func (d *Device) newPeer(c *PeerConfig, prev *Peer) (*Peer, error) {
	p := &Peer{
		device:   d,
		id:       c.ID,
		suites:   slices.Clone(effectiveSuites(c, d.suites)),
		outbound: make(chan *outContainer, QueueOutboundSize),
		inbound:  make(chan *inContainer, QueueInboundSize),
		tunQueue: d.nextTunQueue % len(d.tuns),
	}
	if c.PSK != nil {
		psk := *c.PSK
		p.psk = &psk
	}
	hp, err := d.local.AddPeer(handshake.PeerConfig{
		PublicKey: c.PublicKey, ID: []byte(c.ID), PresharedKey: p.psk, Suites: p.suites, Context: p,
	})
	if err != nil {
		return nil, err
	}
	p.hs = hp
	p.authBudget = new(peerAuthBudget)
	if prev != nil {
		p.authBudget = prev.authBudget
		if until := p.authBudget.refusedUntil.Load(); until != 0 {
			p.refuseShortTagSuites(d.clock.Now(), until)
		}
	}
	p.name = c.Name
	d.nextTunQueue++
	if !d.inline { // RunToCompletion: the readers send and deliver
		p.routines.Add(2)
		go p.RoutineSequentialSender()
		go p.RoutineSequentialReceiver()
	}
	return p, nil
}

// reconfigure applies the fields that do not touch the session.
func (p *Peer) reconfigure(c *PeerConfig) {
	var ep netio.Endpoint
	if c.Endpoint.IsValid() {
		var err error
		ep, err = p.device.bind.ParseEndpoint(c.Endpoint.String())
		if err != nil {
			p.device.log.Errorf("peer(%s) - endpoint %s: %v", c.Name, c.Endpoint, err)
			ep = nil
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name = c.Name
	p.roaming = c.Roaming
	p.keepalive = c.PersistentKeepalive
	p.allowedIPs = slices.Clone(c.AllowedIPs)
	if ep != nil && (!p.endpointConfigured || p.endpoint == nil || p.endpoint.DstToString() != ep.DstToString()) {
		p.endpoint = ep
	}
	p.endpointConfigured = ep != nil
}

func (p *Peer) keepaliveInterval() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keepalive
}

// getEndpoint returns the current endpoint, or nil.
func (p *Peer) getEndpoint() netio.Endpoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.endpoint
}

// setEndpointFromData follows a roaming peer to the source of an
// authenticated data packet.
func (p *Peer) setEndpointFromData(ep netio.Endpoint) {
	if ep == nil {
		return
	}
	p.mu.Lock()
	if p.roaming {
		p.endpoint = ep
	}
	p.mu.Unlock()
}

// setEndpointFromHandshake updates the endpoint from an authenticated
// handshake message: always when roaming, otherwise only while no endpoint
// was configured.
func (p *Peer) setEndpointFromHandshake(ep netio.Endpoint) {
	if ep == nil {
		return
	}
	p.mu.Lock()
	if p.roaming || !p.endpointConfigured {
		p.endpoint = ep
	}
	p.mu.Unlock()
}

// stop ends the peer: its handshakes are abandoned, its queues closed and
// drained, its keypairs dropped.
func (p *Peer) stop() {
	d := p.device
	p.removed.Store(true)
	d.local.RemovePeer(p.hs)
	p.sendMu.Lock()
	p.sendClosed = true
	p.dropStagedLocked(false)
	close(p.outbound)
	p.sendMu.Unlock()
	p.inMu.Lock()
	p.inClosed = true
	close(p.inbound)
	p.inMu.Unlock()
	p.routines.Wait()
	p.kpMu.Lock()
	p.kpClosed = true
	p.freeKeypairs(p.keypairs.Clear())
	p.sendKP.Store(nil)
	p.kpMu.Unlock()
}

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
		// already consumed them refuses the copy (same timestamp), one
		// that never saw them answers it.
		p.hsResent++
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
