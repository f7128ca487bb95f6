package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/control"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/sdnotify"
	"github.com/gmtun/gmtun/tunnel"
	"github.com/gmtun/gmtun/tunnel/iface"
	"github.com/gmtun/gmtun/tunnel/netio"
	"golang.zx2c4.com/wireguard/tun"
)

// The daemon's start and shutdown, their one-sentence errors, and the device and route settings start applies.

// start brings the interface up. On error the caller runs shutdown, which
// undoes whatever was done. Every error is one sentence for the operator.
func (d *daemon) start() error {
	ifc := &d.cfg.Interface
	name := ifc.Name

	// Known answers through the kernels this CPU selected, before any
	// packet is trusted to them.
	if err := ciphers.SelfTest(); err != nil {
		return fmt.Errorf("up: refusing to start: %w", err)
	}

	// The control socket comes first: it is the lock that keeps a second
	// daemon for the same interface from attaching to its TUN device as
	// another queue. Until start finishes it answers "starting".
	var err error
	d.ctl, err = control.Serve(control.SocketPath(d.socketDir, name),
		control.Handlers{Status: d.status, Reload: d.controlReload, Stop: d.controlStop}, d.log.Errorf)
	if err != nil {
		return fmt.Errorf("up: cannot create the control socket: %w", err)
	}
	if _, err := net.InterfaceByName(name); err == nil {
		return fmt.Errorf("up: cannot create TUN interface %s: an interface with that name already exists", name)
	}

	if err := d.preUp(); err != nil { // up_hooks.go: pre_up, mtu = "auto"
		return err
	}
	queues := runtime.NumCPU()
	tdev, err := d.plat.openTUN(netio.TUNConfig{Name: name, MTU: ifc.MTU, Queues: queues})
	if err != nil && queues > 1 && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) {
		d.log.Debugf("multi-queue TUN failed (%v); retrying with one queue", err)
		tdev, err = d.plat.openTUN(netio.TUNConfig{Name: name, MTU: ifc.MTU, Queues: 1})
	}
	if err != nil {
		return tunError(name, err)
	}
	d.tun = tdev
	go d.drainEvents(tdev)

	// Fail closed before the interface has an address or a route: the
	// unreachable routes stay behind its routes while it runs. (After
	// opening the TUN device, so that a missing privilege is reported as
	// such.) With fail_closed = false, drop those a crashed run left.
	fc := iface.NewFailClosed(nil, name, routeTable(ifc.Table))
	d.fullTunnelSetup(fc) // up_routing.go: full tunnel's mark and table
	if ifc.FailClosed && !ifc.Table.Off {
		d.failClosed = fc
		left, _ := fc.Present()
		d.inheritedFailClosed = len(left) > 0
		if err := fc.Set(wantRoutes(d.cfg)); err != nil {
			return fmt.Errorf("up: cannot install the fail-closed routes (fail_closed = true): %w", err)
		}
	} else if err := fc.Remove(); err != nil {
		d.log.Warnf("removing fail-closed routes left by an earlier run: %v", err)
	}

	if err := d.fullTunnelRules(); err != nil { // up_routing.go
		return err
	}
	d.bind = netio.NewStdBind()
	if err := d.resolveEndpoints(); err != nil { // up_resolve.go
		return err
	}
	dev, err := tunnel.NewDevice(tunnelConfig(d.cfg, d.log), tdev.Queues(), d.bind)
	if err != nil {
		return fmt.Errorf("up: cannot create the tunnel device: %w", err)
	}
	d.dev = dev
	if err := dev.Up(); err != nil {
		return bindError(ifc.ListenPort, err)
	}
	d.startResolver() // up_resolve.go
	if ifc.FwMark != 0 {
		if err := d.bind.SetMark(ifc.FwMark); err != nil {
			return fmt.Errorf("up: cannot set fwmark %d on the UDP sockets: %w", ifc.FwMark, err)
		}
	}

	d.link, err = iface.Configure(nil, name, iface.Config{MTU: ifc.MTU, Addresses: ifc.Addresses})
	if err != nil {
		return fmt.Errorf("up: cannot configure interface %s: %w", name, err)
	}
	d.mu.Lock()
	err = d.addRoutes(wantRoutes(d.cfg), routeTable(ifc.Table))
	d.mu.Unlock()
	if err != nil {
		return err
	}
	// A link flap (or an operator) removes addresses and routes: put them
	// back within 1 s of the link being up again, and check every 10 s.
	d.watchDone = make(chan struct{})
	if err := iface.Watch(name, d.watchDone, 50*time.Millisecond, 10*time.Second, d.restoreLink); err != nil {
		return fmt.Errorf("up: cannot watch interface %s: %w", name, err)
	}

	for _, t := range ciphers.Tiers() {
		d.kernels = append(d.kernels, control.Kernel{Primitive: t.Primitive, Selected: t.Selected, Available: t.Available})
	}
	sel, avail := netio.ChecksumTier()
	d.kernels = append(d.kernels, control.Kernel{Primitive: "csum", Selected: sel, Available: avail})
	if err := d.postUp(); err != nil { // up_hooks.go
		return err
	}
	d.started = time.Now()
	d.ready.Store(true)

	st := dev.Stats()
	d.log.Infof("gmtun %s up: public key %s; port %d; mtu %d; %d peer(s); suites %s; kernels %s; offload tun %v, udp %v",
		versionString(), ifc.PrivateKey.Public(), st.ListenPort, st.MTU, len(d.cfg.Peers), joinSuites(ifc.Suites),
		kernelsString(d.kernels), tdev.Offload(), d.bind.Offload())
	logSuiteTiers(d.log, ifc.Suites)
	if handshake.ShortTimers {
		d.log.Warnf("WARNING: test build (gmtun_shorttimers): keys rekey after %v and expire after %v; never deploy this binary", handshake.RekeyAfterTime, handshake.RejectAfterTime)
	}
	for _, k := range d.kernels {
		if k.Selected == ciphers.GenericTier && len(k.Available) > 1 {
			d.log.Warnf("%s runs the slow generic code although %s is available (disabled by GODEBUG?)", k.Primitive, k.Available[0])
		}
	}
	if err := d.startMetrics(); err != nil { // up_metrics.go
		return err
	}
	d.notify(sdnotify.Ready, sdnotify.Status(d.statusLine()))
	return nil
}

// shutdown undoes start in reverse order; it copes with a partial start.
// The control socket goes last: it keeps another daemon for the same
// interface out until the TUN device is gone.
func (d *daemon) shutdown() {
	d.preDown() // up_hooks.go
	d.ready.Store(false)
	d.stopMetrics() // up_metrics.go
	d.stopResolver()
	// A reload in flight finishes first; later ones are refused. (Not
	// held: ctl.Close below waits for a reload handler blocked on it.)
	d.reloadMu.Lock()
	d.noReloads = true
	d.reloadMu.Unlock()

	if d.watchDone != nil {
		close(d.watchDone)
	}
	d.mu.Lock()
	d.stopping = true // a restoreLink still in flight does nothing
	for p, r := range d.routes {
		if err := r.Teardown(); err != nil {
			d.log.Warnf("%v", err)
		}
		delete(d.routes, p)
	}
	d.mu.Unlock()
	if d.link != nil {
		if err := d.link.Teardown(); err != nil {
			d.log.Warnf("%v", err)
		}
	}
	if d.dev != nil {
		if err := d.dev.Close(); err != nil {
			d.log.Debugf("closing the device: %v", err)
		}
	}
	if d.tun != nil {
		if err := d.tun.Close(); err != nil {
			d.log.Debugf("closing the TUN device: %v", err)
		}
	}
	// The fail-closed routes go last, once nothing of the tunnel is left:
	// a clean stop hands the prefixes back to the routing table. (A crash
	// or kill -9 leaves them in place: fail closed.)
	if d.failClosed != nil && d.keepFailClosed {
		d.log.Warnf("traffic for the peers' allowed_ips stays refused (fail_closed = true) until gmtun %s runs; to release it: ip route flush proto %d type unreachable (and ip -6)", d.name, iface.RouteProtocol)
	} else if d.failClosed != nil {
		if err := d.failClosed.Remove(); err != nil {
			d.log.Warnf("%v", err)
		}
	}
	d.fullTunnelCleanup() // up_routing.go
	d.postDown()          // up_hooks.go
	if d.ctl != nil {
		if err := d.ctl.Close(); err != nil {
			d.log.Warnf("%v", err)
		}
	}
}

// restoreLink puts back the addresses and routes that a link flap or an
// operator removed. It runs on the link watcher's goroutine and on reload.
func (d *daemon) restoreLink() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.link == nil || d.stopping {
		return
	}
	n, err := d.link.Restore()
	for _, r := range d.routes {
		m, rerr := r.Restore()
		n += m
		err = errors.Join(err, rerr)
	}
	if d.failClosed != nil {
		err = errors.Join(err, d.failClosed.Set(wantRoutes(d.cfg)))
	}
	if n > 0 {
		d.log.Infof("restored %d address(es) and route(s) of %s that were removed (link flap?)", n, d.name)
	}
	if err != nil {
		d.log.Warnf("restoring interface %s: %v", d.name, err)
	}
}

// drainEvents reads the TUN link events, which the TUN implementation
// blocks on if nobody does, until the device closes.
func (d *daemon) drainEvents(dev *netio.TUNDevice) {
	for ev := range dev.Events() {
		switch {
		case ev&tun.EventDown != 0:
			d.log.Debugf("link is down")
		case ev&tun.EventUp != 0:
			d.log.Debugf("link is up")
		}
	}
}

// tunError turns a TUN creation failure into one sentence.
func tunError(name string, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENODEV):
		return fmt.Errorf("up: cannot create TUN interface %s: /dev/net/tun does not exist (load the tun kernel module)", name)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("up: cannot create TUN interface %s: permission denied (run as root or with CAP_NET_ADMIN)", name)
	case errors.Is(err, syscall.EBUSY):
		return fmt.Errorf("up: cannot create TUN interface %s: the name is taken by another device", name)
	}
	return fmt.Errorf("up: cannot create TUN interface %s: %w", name, err)
}

// bindError turns a UDP bind failure into one sentence.
func bindError(port uint16, err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("up: cannot listen on UDP port %d: the port is in use", port)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("up: cannot listen on UDP port %d: permission denied (ports below 1024 need CAP_NET_BIND_SERVICE)", port)
	}
	return fmt.Errorf("up: cannot listen on UDP port %d: %w", port, err)
}

// tunnelConfig translates the configuration for the device.
func tunnelConfig(cfg *config.Config, log *logger) tunnel.Config {
	tl := log.tunnelLogger()
	ifc := &cfg.Interface
	return tunnel.Config{
		PrivateKey: ifc.PrivateKey,
		ID:         ifc.ID,
		Suites:     ifc.Suites,
		ListenPort: ifc.ListenPort,
		MTU:        ifc.MTU,
		Peers:      peerConfigs(cfg.Peers),
		Logger:     tl,
		// NumCPU follows the affinity mask (taskset, CPUAffinity=).
		RunToCompletion: ifc.AutoRunToCompletion(runtime.NumCPU()),
	}
}

func peerConfigs(peers []config.Peer) []tunnel.PeerConfig {
	out := make([]tunnel.PeerConfig, len(peers))
	for i := range peers {
		p := &peers[i]
		out[i] = tunnel.PeerConfig{
			Name:                p.Name,
			PublicKey:           p.PublicKey,
			ID:                  p.ID,
			PSK:                 p.PresharedKey,
			Endpoint:            p.Endpoint,
			AllowedIPs:          p.AllowedIPs,
			PersistentKeepalive: p.PersistentKeepalive,
			Roaming:             p.Roaming,
			Suites:              p.Suites,
		}
	}
	return out
}

// routeTable is the iface table number for t; 0 is the main table.
func routeTable(t config.RouteTable) int { return int(t.ID) }

// wantRoutes lists the routes cfg asks for: every peer's allowed_ips,
// none with table = "off".
func wantRoutes(cfg *config.Config) []netip.Prefix {
	if cfg.Interface.Table.Off {
		return nil
	}
	var out []netip.Prefix
	for i := range cfg.Peers {
		out = append(out, cfg.Peers[i].AllowedIPs...)
	}
	return out
}

// addRoutes installs each prefix as its own record, so that a reload can
// remove single routes. d.mu held.
func (d *daemon) addRoutes(prefixes []netip.Prefix, table int) error {
	name := d.cfg.Interface.Name
	for _, p := range prefixes {
		a, err := iface.Configure(nil, name, iface.Config{Routes: []netip.Prefix{p}, Table: d.routeTableFor(p, table)})
		if err != nil {
			return fmt.Errorf("up: cannot add route %v via %s: %w", p, name, err)
		}
		d.routes[p] = a
	}
	return nil
}
