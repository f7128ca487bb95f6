// The Peer: its state, and its life from newPeer through reconfigure to
// stop. The peer set is in peerset.go, the keypair slots in
// peer_keypairs.go, the endpoint in endpoint_update.go and the peer's timer
// walk in timers.go.

package tunnel

import (
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
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
	hsLastInit [handshake.MessageInitiationSize]byte
	hsResent   int
	// hsRetransmits counts every such retransmission, for PeerStats.
	hsRetransmits uint64
	// answered is the last initiation this side answered as responder,
	// hsAnswered the copies of such initiations answered again
	// (handshake_copies.go).
	answered     answeredInit
	hsAnswered   uint64
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
