package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel"
)

// Endpoints given as DNS names (peer.endpoint = "gw.example.net:51820"),
// as wg-quick's reresolve-dns does it:
//   - at start every name is resolved (retried for up to startResolveBudget);
//   - afterwards a resolver goroutine re-resolves each name: every
//     reresolveStale while the peer has no confirmed handshake younger than
//     staleAfter (it is not answering, or its session lapsed: a failed
//     handshake leads there), every reresolveHealthy otherwise;
//   - a new address is applied (tunnel.Device.SetPeerEndpoint) only to a
//     stale peer. A peer with a live session keeps the address it is heard
//     from: roaming wins while it works, DNS wins when it does not. (A name
//     changed by a reload is applied at its first resolution, as a changed
//     IP literal is.)
//
// Lookups run on the resolver goroutine only, never on the data path; a
// slow resolver delays the next lookup, nothing else.
const (
	resolveTimeout     = 10 * time.Second
	startResolveBudget = 15 * time.Second
	startResolveRetry  = time.Second
	reresolveStale     = 15 * time.Second
	reresolveHealthy   = 2 * time.Minute
	staleAfter         = 135 * time.Second // wg-quick's reresolve-dns threshold
	resolveTick        = 5 * time.Second
)

// lookupFunc resolves a host name to its addresses (A and AAAA).
type lookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// systemLookup is the system resolver (Go's or the C library's, per the
// usual GODEBUG=netdns rules): /etc/hosts, then DNS.
func systemLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// resolveLog is what the resolver logs through (the daemon's logger).
type resolveLog interface {
	Infof(format string, args ...any)
	Warnf(format string, args ...any)
	Debugf(format string, args ...any)
}

// endpointDevice is what the resolver needs of the tunnel device.
type endpointDevice interface {
	Stats() tunnel.Stats
	SetPeerEndpoint(key *handshake.PublicKey, ap netip.AddrPort) error
}

// nameEntry is one peer whose endpoint is a name.
type nameEntry struct {
	peer string
	key  *handshake.PublicKey
	name string
	port uint16
	addr netip.AddrPort // latest resolution; invalid if none succeeded
	next time.Time      // next lookup
	fail bool           // the latest lookup failed (logged once per streak)
	// force applies the next resolution even to a peer with a live
	// session: the name is new or changed by a reload, as a changed IP
	// literal would be applied at once.
	force bool
}

func (e *nameEntry) hostPort() string { return net.JoinHostPort(e.name, strconv.Itoa(int(e.port))) }

// endpointResolver re-resolves the peers' endpoint names.
type endpointResolver struct {
	lookup lookupFunc
	log    resolveLog
	now    func() time.Time
	// budget and retry bound the lookups at start (variables for tests).
	budget, retry time.Duration

	mu      sync.Mutex
	entries map[string]*nameEntry // by public key (base64)

	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func newEndpointResolver(lookup lookupFunc, log resolveLog) *endpointResolver {
	return &endpointResolver{lookup: lookup, log: log, now: time.Now, budget: startResolveBudget, retry: startResolveRetry,
		entries: map[string]*nameEntry{}, kick: make(chan struct{}, 1)}
}

// resolveOnce looks name up with a timeout and returns the address to
// use: cur if the name still resolves to it, else the first unicast
// address in the resolver's order (RFC 6724 for Go's resolver).
func (r *endpointResolver) resolveOnce(ctx context.Context, e *nameEntry, cur netip.AddrPort) (netip.AddrPort, error) {
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := r.lookup(ctx, e.name)
	if err != nil {
		return netip.AddrPort{}, err
	}
	var first netip.AddrPort
	for _, a := range addrs {
		a = a.Unmap()
		if !a.IsValid() || a.IsUnspecified() || a.IsMulticast() {
			continue
		}
		ap := netip.AddrPortFrom(a.WithZone(""), e.port)
		if ap == cur {
			return cur, nil
		}
		if !first.IsValid() {
			first = ap
		}
	}
	if !first.IsValid() {
		return netip.AddrPort{}, fmt.Errorf("no usable address (got %v)", addrs)
	}
	return first, nil
}

// resolveAtStart resolves every name of cfg and fills the peers'
// Endpoint. A name that does not resolve within the start budget is
// fatal only when this side has no listen_port (then the peer could not
// reach us either); otherwise gmtun starts without that endpoint, the peer
// can still initiate, and the name is retried every reresolveStale.
func (r *endpointResolver) resolveAtStart(ctx context.Context, cfg *config.Config) error {
	now := r.now()
	for i := range cfg.Peers {
		p := &cfg.Peers[i]
		if p.EndpointName == "" {
			continue
		}
		e := &nameEntry{peer: p.Name, key: p.PublicKey, name: p.EndpointName, port: p.EndpointPort}
		var err error
		deadline := now.Add(r.budget)
		for {
			var ap netip.AddrPort
			if ap, err = r.resolveOnce(ctx, e, netip.AddrPort{}); err == nil {
				e.addr = ap
				break
			}
			if !r.now().Add(r.retry).Before(deadline) || ctx.Err() != nil {
				break
			}
			select {
			case <-time.After(r.retry):
			case <-ctx.Done():
			}
		}
		if err != nil {
			if cfg.Interface.ListenPort == 0 {
				return &config.Error{File: cfg.Path, Line: p.EndpointLine, Key: "peer.endpoint", Peer: p.Name,
					Msg: fmt.Sprintf("cannot resolve %s: %v; with no listen_port the peer cannot reach this side either, so gmtun does not start (set listen_port to start without it)", e.hostPort(), err)}
			}
			e.fail = true
			e.next = r.now().Add(reresolveStale)
			r.log.Warnf("peer(%s) - cannot resolve endpoint %s (%s:%d): %v; starting without it (the peer can still reach port %d); retrying every %v",
				p.Name, e.hostPort(), cfg.Path, p.EndpointLine, err, cfg.Interface.ListenPort, reresolveStale)
		} else {
			p.Endpoint = e.addr
			e.next = r.now().Add(reresolveHealthy)
			r.log.Infof("peer(%s) - endpoint %s resolves to %v", p.Name, e.hostPort(), e.addr)
		}
		r.mu.Lock()
		r.entries[p.PublicKey.String()] = e
		r.mu.Unlock()
	}
	return nil
}

// sync adopts a reloaded configuration: entries follow next's peers
// (a peer keeps its latest resolution while its name and port are
// unchanged) and next's peers get those addresses as Endpoint. New names
// are resolved by the goroutine right away, not by the reload.
func (r *endpointResolver) sync(next *config.Config) {
	r.mu.Lock()
	old := r.entries
	r.entries = map[string]*nameEntry{}
	kick := false
	for i := range next.Peers {
		p := &next.Peers[i]
		if p.EndpointName == "" {
			continue
		}
		k := p.PublicKey.String()
		e := old[k]
		if e == nil || e.name != p.EndpointName || e.port != p.EndpointPort {
			e = &nameEntry{key: p.PublicKey, name: p.EndpointName, port: p.EndpointPort, next: r.now(), force: e != nil}
			kick = true
		}
		e.peer = p.Name
		r.entries[k] = e
		if e.addr.IsValid() {
			p.Endpoint = e.addr
		}
	}
	r.mu.Unlock()
	if kick {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// start runs the re-resolution goroutine against dev until stop.
func (r *endpointResolver) start(dev endpointDevice) {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		t := time.NewTicker(resolveTick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-r.kick:
			}
			r.step(ctx, dev)
		}
	}()
}

// stop ends the goroutine (a lookup in flight is cancelled).
func (r *endpointResolver) stop() {
	if r.cancel != nil {
		r.cancel()
		<-r.done
		r.cancel = nil
	}
}

// step re-resolves the names that are due and applies new addresses to
// stale peers.
func (r *endpointResolver) step(ctx context.Context, dev endpointDevice) {
	now := r.now()
	r.mu.Lock()
	type item struct {
		e    *nameEntry
		peer string // e.peer, which a reload may change
	}
	var due []item
	for _, e := range r.entries {
		if !now.Before(e.next) {
			due = append(due, item{e, e.peer})
		}
	}
	r.mu.Unlock()
	if len(due) == 0 {
		return
	}
	peers := map[string]tunnel.PeerStats{}
	for _, p := range dev.Stats().Peers {
		peers[p.PublicKey] = p
	}
	for _, it := range due {
		e, peer := it.e, it.peer // name, port and key never change
		ps, ok := peers[e.key.String()]
		if !ok {
			continue // removed meanwhile
		}
		stale := ps.LastHandshake.IsZero() || now.Sub(ps.LastHandshake) > staleAfter
		ap, err := r.resolveOnce(ctx, e, ps.Endpoint)
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		if r.entries[e.key.String()] != e { // replaced by a reload meanwhile
			r.mu.Unlock()
			continue
		}
		interval := reresolveHealthy
		if stale {
			interval = reresolveStale
		}
		e.next = now.Add(interval)
		if err != nil {
			first := !e.fail
			e.fail = true
			e.next = now.Add(reresolveStale)
			r.mu.Unlock()
			if first {
				r.log.Warnf("peer(%s) - cannot resolve endpoint %s: %v; keeping %v, retrying every %v", peer, e.hostPort(), err, orNoneAddr(ps.Endpoint), reresolveStale)
			}
			continue
		}
		if e.fail {
			r.log.Infof("peer(%s) - endpoint %s resolves again, to %v", peer, e.hostPort(), ap)
		}
		e.fail = false
		e.addr = ap
		force := e.force
		e.force = false
		r.mu.Unlock()
		switch {
		case ap == ps.Endpoint:
		case !stale && !force:
			r.log.Debugf("peer(%s) - endpoint %s now resolves to %v; the peer answers at %v, which is kept while its session lives",
				peer, e.hostPort(), ap, ps.Endpoint)
		default:
			if err := dev.SetPeerEndpoint(e.key, ap); err != nil {
				r.log.Warnf("peer(%s) - cannot use endpoint %v: %v", peer, ap, err)
				continue
			}
			r.log.Infof("peer(%s) - endpoint %s re-resolved: %v (was %v)", peer, e.hostPort(), ap, orNoneAddr(ps.Endpoint))
		}
	}
}

func orNoneAddr(ap netip.AddrPort) string {
	if !ap.IsValid() {
		return "none"
	}
	return ap.String()
}

// resolveEndpoints resolves the endpoint names of the configuration
// before the device is created (start).
func (d *daemon) resolveEndpoints() error {
	d.resolver = newEndpointResolver(systemLookup, d.log)
	return d.resolver.resolveAtStart(context.Background(), d.cfg)
}

// startResolver starts re-resolution once the device runs.
func (d *daemon) startResolver() {
	if d.resolver != nil {
		d.resolver.start(d.dev)
	}
}

// stopResolver ends re-resolution (shutdown).
func (d *daemon) stopResolver() {
	if d.resolver != nil {
		d.resolver.stop()
	}
}

// syncResolver gives a reloaded configuration the resolved endpoints.
func (d *daemon) syncResolver(next *config.Config) {
	if d.resolver != nil {
		d.resolver.sync(next)
	}
}

// configEndpoint is a peer's endpoint as configured: the IP literal, the
// NAME:port of a DNS name, or "" if there is none (check, showconf).
func configEndpoint(p *config.Peer) string {
	switch {
	case p.Endpoint.IsValid():
		return p.Endpoint.String()
	case p.EndpointName != "":
		return net.JoinHostPort(p.EndpointName, strconv.Itoa(int(p.EndpointPort)))
	}
	return ""
}
