package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel"
)

// These tests inject the resolver: no real DNS is queried. A netns test
// with a hosts-file name is not possible here (a private /etc/hosts needs
// a mount namespace the test bed does not make), so the lookup function is
// the seam, and tunnel.TestSetPeerEndpoint covers the device side.

// fakeDNS answers from a table the test changes; it counts lookups.
type fakeDNS struct {
	mu    sync.Mutex
	addrs map[string][]netip.Addr
	errs  map[string]error
	calls map[string]int
	block chan struct{} // if set, every lookup waits for it (or ctx)
}

func newFakeDNS() *fakeDNS {
	return &fakeDNS{addrs: map[string][]netip.Addr{}, errs: map[string]error{}, calls: map[string]int{}}
}

func (f *fakeDNS) set(host string, addrs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addrs[host] = nil
	delete(f.errs, host)
	for _, a := range addrs {
		f.addrs[host] = append(f.addrs[host], netip.MustParseAddr(a))
	}
}

func (f *fakeDNS) fail(host string, err error) {
	f.mu.Lock()
	f.errs[host] = err
	f.mu.Unlock()
}

func (f *fakeDNS) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	f.calls[host]++
	block := f.block
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errs[host]; err != nil {
		return nil, err
	}
	if a, ok := f.addrs[host]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", host)
}

func (f *fakeDNS) count(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[host]
}

// fakeDevice has the peers' stats and records SetPeerEndpoint.
type fakeDevice struct {
	mu    sync.Mutex
	peers []tunnel.PeerStats
	sets  []string
}

func (d *fakeDevice) Stats() tunnel.Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return tunnel.Stats{Peers: append([]tunnel.PeerStats(nil), d.peers...)}
}

func (d *fakeDevice) SetPeerEndpoint(k *handshake.PublicKey, ap netip.AddrPort) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range d.peers {
		if d.peers[i].PublicKey == k.String() {
			d.peers[i].Endpoint = ap
			d.sets = append(d.sets, d.peers[i].Name+"="+ap.String())
			return nil
		}
	}
	return tunnel.ErrUnknownPeer
}

func (d *fakeDevice) update(name string, fn func(*tunnel.PeerStats)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range d.peers {
		if d.peers[i].Name == name {
			fn(&d.peers[i])
		}
	}
}

// recLog records log lines.
type recLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *recLog) add(level, f string, a ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, level+" "+fmt.Sprintf(f, a...))
	l.mu.Unlock()
}
func (l *recLog) Infof(f string, a ...any)  { l.add("INFO", f, a...) }
func (l *recLog) Warnf(f string, a ...any)  { l.add("WARN", f, a...) }
func (l *recLog) Debugf(f string, a ...any) { l.add("DEBUG", f, a...) }
func (l *recLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func resolveConfig(t *testing.T, listenPort uint16) *config.Config {
	t.Helper()
	cfg := &config.Config{Path: "/etc/gmtun/gm0.toml", Interface: config.Interface{ListenPort: listenPort}}
	for i, ep := range []string{"gw-b.example:51820", "gw-c.example:51821", "198.18.0.4:51822"} {
		k, err := handshake.GeneratePrivateKey(&seedReader{next: byte(10 * (i + 1))})
		if err != nil {
			t.Fatal(err)
		}
		p := config.Peer{Name: []string{"site-b", "site-c", "site-d"}[i], PublicKey: k.Public(), EndpointLine: 10 + 5*i}
		if ap, err := netip.ParseAddrPort(ep); err == nil {
			p.Endpoint = ap
		} else {
			host, port, _ := strings.Cut(ep, ":")
			p.EndpointName = host
			fmt.Sscan(port, &p.EndpointPort)
		}
		cfg.Peers = append(cfg.Peers, p)
	}
	return cfg
}

// testClock is a settable clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestResolver(dns *fakeDNS, log *recLog, clock *testClock) *endpointResolver {
	r := newEndpointResolver(dns.lookup, log)
	r.now = clock.now
	r.budget, r.retry = 30*time.Millisecond, 10*time.Millisecond
	return r
}

// TestResolveAtStart: names resolve to IPv4 and IPv6 endpoints before the
// device exists; IP literals are left alone.
func TestResolveAtStart(t *testing.T) {
	dns := newFakeDNS()
	dns.set("gw-b.example", "198.18.0.2", "fd00::2")
	dns.set("gw-c.example", "fd00::3")
	cfg := resolveConfig(t, 0)
	log := &recLog{}
	r := newTestResolver(dns, log, &testClock{t: time.Unix(1000, 0)})
	if err := r.resolveAtStart(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"198.18.0.2:51820", "[fd00::3]:51821", "198.18.0.4:51822"} {
		if got := cfg.Peers[i].Endpoint.String(); got != want {
			t.Errorf("peer %s endpoint %s, want %s", cfg.Peers[i].Name, got, want)
		}
	}
	if dns.count("198.18.0.4") != 0 || dns.count("gw-b.example") != 1 {
		t.Errorf("lookups %v", dns.calls)
	}
	if !strings.Contains(log.text(), "peer(site-c) - endpoint gw-c.example:51821 resolves to [fd00::3]:51821") {
		t.Errorf("log:\n%s", log.text())
	}
}

// TestResolveAtStartFailure: without listen_port an unresolvable name
// stops the start with FILE:LINE: key; with one, gmtun starts without
// that endpoint and says so once.
func TestResolveAtStartFailure(t *testing.T) {
	dns := newFakeDNS()
	dns.set("gw-c.example", "198.18.0.3")
	dns.fail("gw-b.example", errors.New("lookup gw-b.example: server misbehaving"))
	cfg := resolveConfig(t, 0)
	r := newTestResolver(dns, &recLog{}, &testClock{t: time.Unix(1000, 0)})
	r.now = time.Now // the retry loop needs a moving clock
	err := r.resolveAtStart(context.Background(), cfg)
	var ce *config.Error
	if !errors.As(err, &ce) || ce.File != cfg.Path || ce.Line != 10 || ce.Key != "peer.endpoint" || ce.Peer != "site-b" {
		t.Fatalf("err = %v, want a config.Error at %s:10 peer.endpoint (peer site-b)", err, cfg.Path)
	}
	want := `/etc/gmtun/gm0.toml:10: key "peer.endpoint" (peer "site-b"): cannot resolve gw-b.example:51820: lookup gw-b.example: server misbehaving; with no listen_port`
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q\nwant prefix %q", err, want)
	}
	if n := dns.count("gw-b.example"); n < 2 {
		t.Errorf("%d lookups of a failing name at start, want retries", n)
	}

	cfg = resolveConfig(t, 51820)
	log := &recLog{}
	r = newTestResolver(dns, log, &testClock{t: time.Unix(1000, 0)})
	r.now = time.Now
	if err := r.resolveAtStart(context.Background(), cfg); err != nil {
		t.Fatalf("with listen_port: %v", err)
	}
	if cfg.Peers[0].Endpoint.IsValid() || cfg.Peers[1].Endpoint.String() != "198.18.0.3:51821" {
		t.Errorf("endpoints %v, %v", cfg.Peers[0].Endpoint, cfg.Peers[1].Endpoint)
	}
	if want := "WARN peer(site-b) - cannot resolve endpoint gw-b.example:51820 (/etc/gmtun/gm0.toml:10): lookup gw-b.example: server misbehaving; starting without it (the peer can still reach port 51820)"; !strings.Contains(log.text(), want) {
		t.Errorf("log:\n%s\nwant %q", log.text(), want)
	}
}

// TestResolveReresolve: a stale peer (no confirmed handshake for 135 s) gets the
// new address of its name; a peer with a live session keeps the address
// it is heard from (roaming wins) until it goes stale; a failing lookup
// keeps the endpoint and is logged once; timing follows the constants.
func TestResolveReresolve(t *testing.T) {
	dns := newFakeDNS()
	dns.set("gw-b.example", "198.18.0.2")
	dns.set("gw-c.example", "198.18.0.3")
	cfg := resolveConfig(t, 51820)
	clock := &testClock{t: time.Unix(10000, 0)}
	log := &recLog{}
	r := newTestResolver(dns, log, clock)
	if err := r.resolveAtStart(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	dev := &fakeDevice{}
	for _, p := range cfg.Peers {
		dev.peers = append(dev.peers, tunnel.PeerStats{Name: p.Name, PublicKey: p.PublicKey.String(), Endpoint: p.Endpoint})
	}
	// site-b: session live; site-c: never answered (stale).
	dev.update("site-b", func(p *tunnel.PeerStats) { p.LastHandshake = clock.now() })
	ctx := context.Background()

	r.step(ctx, dev) // nothing is due yet
	if dns.count("gw-b.example") != 1 || dns.count("gw-c.example") != 1 {
		t.Fatalf("lookups before anything is due: %v", dns.calls)
	}
	// Both names move.
	dns.set("gw-b.example", "198.18.0.12")
	dns.set("gw-c.example", "fd00::13", "198.18.0.13")
	clock.add(reresolveHealthy)
	dev.update("site-b", func(p *tunnel.PeerStats) { p.LastHandshake = clock.now().Add(-time.Minute) })
	r.step(ctx, dev)
	if got := strings.Join(dev.sets, " "); got != "site-c=[fd00::13]:51821" {
		t.Fatalf("applied %q, want only the stale site-c, to the first address", got)
	}
	if !strings.Contains(log.text(), "INFO peer(site-c) - endpoint gw-c.example:51821 re-resolved: [fd00::13]:51821 (was 198.18.0.3:51821)") {
		t.Errorf("log:\n%s", log.text())
	}
	// site-c is stale: looked up again after 15 s, site-b not before 2 min.
	clock.add(reresolveStale)
	r.step(ctx, dev)
	if dns.count("gw-c.example") != 3 || dns.count("gw-b.example") != 2 {
		t.Errorf("lookups %v, want gw-c 3 (stale: every %v), gw-b 2", dns.calls, reresolveStale)
	}
	if len(dev.sets) != 1 {
		t.Errorf("the current address was applied again: %v", dev.sets)
	}
	// site-b's session lapses: the next resolution moves it.
	clock.add(reresolveHealthy)
	r.step(ctx, dev)
	if got := strings.Join(dev.sets, " "); got != "site-c=[fd00::13]:51821 site-b=198.18.0.12:51820" {
		t.Fatalf("applied %q after site-b went stale", got)
	}
	// A failing lookup keeps the endpoint; logged once, then recovery.
	dns.fail("gw-c.example", errors.New("lookup gw-c.example: i/o timeout"))
	for range 3 {
		clock.add(reresolveStale)
		r.step(ctx, dev)
	}
	if n := strings.Count(log.text(), "cannot resolve endpoint gw-c.example:51821"); n != 1 {
		t.Errorf("%d failure lines for one failure streak, want 1:\n%s", n, log.text())
	}
	if ep := dev.Stats().Peers[1].Endpoint.String(); ep != "[fd00::13]:51821" {
		t.Errorf("endpoint after failed lookups %s, want it kept", ep)
	}
	dns.set("gw-c.example", "198.18.0.23")
	clock.add(reresolveStale)
	r.step(ctx, dev)
	if ep := dev.Stats().Peers[1].Endpoint.String(); ep != "198.18.0.23:51821" || !strings.Contains(log.text(), "resolves again") {
		t.Errorf("after recovery: endpoint %s, log:\n%s", ep, log.text())
	}
}

// TestResolverSyncAndStop: a reload keeps resolved addresses for
// unchanged names, a new name is resolved by the goroutine at once, and a
// hanging lookup neither blocks the reload nor stop.
func TestResolverSyncAndStop(t *testing.T) {
	dns := newFakeDNS()
	dns.set("gw-b.example", "198.18.0.2")
	dns.set("gw-c.example", "198.18.0.3")
	dns.set("gw-new.example", "fd00::77")
	cfg := resolveConfig(t, 51820)
	r := newTestResolver(dns, &recLog{}, &testClock{t: time.Unix(1, 0)})
	r.now = time.Now
	if err := r.resolveAtStart(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	dev := &fakeDevice{}
	for _, p := range cfg.Peers {
		dev.peers = append(dev.peers, tunnel.PeerStats{Name: p.Name, PublicKey: p.PublicKey.String(), Endpoint: p.Endpoint})
	}
	r.start(dev)
	next := resolveConfig(t, 51820)
	next.Peers[1].EndpointName = "gw-new.example"
	r.sync(next)
	if got := next.Peers[0].Endpoint.String(); got != "198.18.0.2:51820" {
		t.Errorf("reloaded unchanged name: endpoint %s, want the resolved one", got)
	}
	if next.Peers[1].Endpoint.IsValid() {
		t.Errorf("a new name got an endpoint during the reload: %v", next.Peers[1].Endpoint)
	}
	deadline := time.Now().Add(10 * time.Second)
	for dev.Stats().Peers[1].Endpoint.String() != "[fd00::77]:51821" {
		if time.Now().After(deadline) {
			t.Fatalf("the new name was not resolved and applied: %v, lookups %v", dev.Stats().Peers[1].Endpoint, dns.calls)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A name changed by a reload is applied at once even to a peer with
	// a live session (as a changed IP literal would be).
	dev.update("site-b", func(p *tunnel.PeerStats) { p.LastHandshake = time.Now() })
	dns.set("gw-b2.example", "198.18.0.42")
	next3 := resolveConfig(t, 51820)
	next3.Peers[0].EndpointName = "gw-b2.example"
	next3.Peers[1].EndpointName = "gw-new.example"
	r.sync(next3)
	for dev.Stats().Peers[0].Endpoint.String() != "198.18.0.42:51820" {
		if time.Now().After(deadline) {
			t.Fatalf("a renamed endpoint of a live peer was not applied: %v", dev.Stats().Peers[0].Endpoint)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A lookup that never returns: stop still returns promptly.
	dns.mu.Lock()
	dns.block = make(chan struct{})
	dns.mu.Unlock()
	next2 := resolveConfig(t, 51820)
	next2.Peers[0].EndpointName = "gw-hang.example"
	r.sync(next2)
	time.Sleep(20 * time.Millisecond)
	done := make(chan struct{})
	go func() { r.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("stop blocked on a hanging lookup")
	}
}

// TestResolveConfigEndpoint: check and showconf print what was configured.
func TestResolveConfigEndpoint(t *testing.T) {
	cfg := resolveConfig(t, 0)
	for i, want := range []string{"gw-b.example:51820", "gw-c.example:51821", "198.18.0.4:51822"} {
		if got := configEndpoint(&cfg.Peers[i]); got != want {
			t.Errorf("configEndpoint(%s) = %q, want %q", cfg.Peers[i].Name, got, want)
		}
	}
	if got := configEndpoint(&config.Peer{}); got != "" {
		t.Errorf("no endpoint: %q", got)
	}
}
