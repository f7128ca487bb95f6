package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

func init() {
	register(&command{
		name:     "up",
		synopsis: "NAME | --config FILE [--socket-dir DIR]",
		summary:  "run the tunnel in the foreground until SIGTERM",
		order:    30,
		help: `Runs the tunnel of /etc/gmtun/NAME.toml (or FILE) in the foreground:
creates the TUN interface, opens the UDP port, sets the MTU and addresses,
brings the link up, adds a route for every peer's allowed_ips (in
interface.table), and serves 'gmtun show', 'gmtun reload' and 'gmtun down'
on the control socket /run/gmtun/NAME/IFACE.sock (DIR/IFACE.sock with
--socket-dir). Under systemd (Type=notify) it reports READY=1 once all of
that is done; the unit gmtun@NAME runs 'gmtun up NAME'.

Signals:
  SIGTERM, SIGINT  remove the routes and addresses, close the interface and
                   exit with 0.
  SIGHUP           re-read FILE (as 'gmtun reload NAME' does, which also
                   waits for the outcome). Peers are added, removed and updated
                   without dropping the sessions of unchanged peers, and
                   routes follow their allowed_ips; log_level and suites
                   apply too. Changes to name, private key or id are refused
                   (nothing is applied), and changes to listen_port, mtu,
                   address, table or fwmark need a restart; both are logged.
                   An invalid file is logged and the running state is kept.

Logs go to standard error at interface.log_level, as key=value lines or,
with log_format = "json", one JSON object per line. Startup failures print
one line naming what failed and exit with 1 (3 for an invalid FILE, which
the unit does not restart).
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			path := fs.String("config", "", "the configuration `FILE` to run, instead of NAME")
			dir := fs.String("socket-dir", "", "the `DIR`ectory of the control socket (default /run/gmtun/NAME)")
			return func(args []string) int {
				cfgPath, ok := configArg(e, "up", args, *path)
				if !ok {
					return exitUsage
				}
				sockDir := *dir
				if sockDir == "" {
					sockDir = defaultSocketDir(e, cfgPath)
				}
				return runUp(e, upOptions{configPath: cfgPath, socketDir: sockDir}, defaultPlatform())
			}
		},
	})
}

// upOptions are the command-line settings of `gmtun up`.
type upOptions struct {
	configPath string
	socketDir  string
}

// platform is what `up` needs from the operating system beyond the
// configuration, injected so that tests can make each step fail.
type platform struct {
	openTUN func(netio.TUNConfig) (*netio.TUNDevice, error)
	// signals registers c for SIGTERM, SIGINT and SIGHUP and returns the
	// function that unregisters it.
	signals func(c chan<- os.Signal) (stop func())
}

func defaultPlatform() platform {
	return platform{
		openTUN: netio.OpenTUN,
		signals: func(c chan<- os.Signal) func() {
			signal.Notify(c, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
			return func() { signal.Stop(c) }
		},
	}
}

// runUp is `gmtun up`: it returns only when the daemon stops.
func runUp(e *env, opts upOptions, plat platform) int {
	cfg, err := config.Load(opts.configPath)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return failf(e, exitConfig, "%v", err)
		}
		return failf(e, exitConfig, "%s: %v", opts.configPath, err)
	}
	// Signals are caught from here on, so that a SIGHUP arriving during
	// start-up does not kill the process (the default action) but is
	// handled once the daemon runs.
	sigs := make(chan os.Signal, 4)
	stopSignals := plat.signals(sigs)
	defer stopSignals()

	d := &daemon{
		plat:         plat,
		log:          newLogger(e.stderr, cfg.Interface.LogLevel, cfg.Interface.LogFormat, cfg.Interface.Name, e.getenv("JOURNAL_STREAM") != ""),
		cfg:          cfg,
		name:         cfg.Interface.Name,
		socketDir:    opts.socketDir,
		notifySocket: e.getenv(sdnotify.EnvSocket),
		routes:       make(map[netip.Prefix]*iface.Applied),
		stopReq:      make(chan struct{}, 1),
	}
	for _, w := range cfg.Warnings {
		d.log.Warnf("%s", w)
	}
	if err := d.start(); err != nil {
		d.keepFailClosed = d.inheritedFailClosed // see inheritedFailClosed
		d.shutdown()
		return failf(e, exitFailure, "%v", err)
	}
	for {
		select {
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				d.reload()
				continue
			}
			d.log.Infof("received %v, shutting down", sig)
		case <-d.stopReq:
			d.log.Infof("stop requested on the control socket (gmtun down), shutting down")
		}
		d.notify(sdnotify.Stopping)
		d.shutdown()
		d.log.Infof("stopped")
		return exitOK
	}
}

// daemon is the state of a running `gmtun up`.
type daemon struct {
	plat         platform
	log          *logger
	name         string // the interface name; never changes
	socketDir    string
	notifySocket string
	notifyFailed atomic.Bool
	ready        atomic.Bool // start finished: the fields below are set

	tun  *netio.TUNDevice
	bind *netio.StdBind
	dev  *tunnel.Device
	link *iface.Applied // MTU, addresses, link up
	// failClosed holds the unreachable routes for the allowed_ips
	// (fail_closed = true); nil otherwise.
	failClosed *iface.FailClosed
	// inheritedFailClosed: start found fail-closed routes of a run that
	// did not stop cleanly. If this start fails too (systemd retries it),
	// they stay: keepFailClosed tells shutdown to leave them. A start that
	// fails on a clean slate removes its own, like every other step.
	inheritedFailClosed bool
	keepFailClosed      bool
	watchDone           chan struct{} // closed by shutdown: ends the link watcher
	ctl                 *control.Server
	metrics             metricsServer // metrics_listen (up_metrics.go); nil when off
	resolver            *endpointResolver
	kernels             []control.Kernel
	started             time.Time
	// stopReq receives one value when `gmtun down` asks the daemon to
	// stop over the control socket.
	stopReq chan struct{}
	// reloadMu orders reloads (SIGHUP and the control socket's) and
	// keeps them out of shutdown.
	reloadMu  sync.Mutex
	noReloads bool // shutdown has begun (reloadMu)

	mu            sync.Mutex // guards the fields below
	cfg           *config.Config
	routes        map[netip.Prefix]*iface.Applied // one record per installed route
	lastReload    time.Time
	lastReloadErr string
	// pendingRestart: the settings the file changes that only a restart
	// applies, as of the latest reload that read the file.
	pendingRestart []string
	stopping       bool // shutdown has begun: restoreLink must not re-add
}

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
		if k.Selected == "generic" && len(k.Available) > 1 {
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

// diffRoutes returns the prefixes of want missing from have, and those of
// have not in want, each sorted.
func diffRoutes(have map[netip.Prefix]*iface.Applied, want []netip.Prefix) (add, del []netip.Prefix) {
	wantSet := make(map[netip.Prefix]bool, len(want))
	for _, p := range want {
		wantSet[p] = true
		if _, ok := have[p]; !ok {
			add = append(add, p)
		}
	}
	for p := range have {
		if !wantSet[p] {
			del = append(del, p)
		}
	}
	slices.SortFunc(add, comparePrefix)
	slices.SortFunc(del, comparePrefix)
	return add, del
}

func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
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

// restartKeys lists the interface settings that differ between running
// and next and that a reload cannot apply. identity reports whether one of
// them changes who this side is (then nothing is applied).
func restartKeys(running, next *config.Config) (keys []string, identity bool) {
	a, b := &running.Interface, &next.Interface
	check := func(key string, changed, ident bool) {
		if changed {
			keys = append(keys, "interface."+key)
			identity = identity || ident
		}
	}
	check("name", a.Name != b.Name, true)
	check("private_key_file", !a.PrivateKey.Equal(b.PrivateKey), true)
	check("id", a.ID != b.ID, true)
	check("listen_port", a.ListenPort != b.ListenPort, false)
	check("mtu", a.MTU != b.MTU, false)
	check("address", !slices.Equal(a.Addresses, b.Addresses), false)
	check("table", a.Table != b.Table, false)
	check("fwmark", a.FwMark != b.FwMark, false)
	check("fail_closed", a.FailClosed != b.FailClosed, false)
	check("metrics_listen", a.MetricsListen != b.MetricsListen, false)
	return keys, identity
}

// peerChanges compares peer lists by public key and returns the names of
// added, removed and changed peers.
func peerChanges(old, next []config.Peer) (added, removed, changed []string) {
	byKey := make(map[string]*config.Peer, len(old))
	for i := range old {
		byKey[old[i].PublicKey.String()] = &old[i]
	}
	for i := range next {
		n := &next[i]
		o, ok := byKey[n.PublicKey.String()]
		if !ok {
			added = append(added, n.Name)
			continue
		}
		delete(byKey, n.PublicKey.String())
		if !samePeer(o, n) {
			changed = append(changed, n.Name)
		}
	}
	for i := range old {
		if _, ok := byKey[old[i].PublicKey.String()]; ok {
			removed = append(removed, old[i].Name)
		}
	}
	return added, removed, changed
}

func samePeer(a, b *config.Peer) bool {
	pskEqual := (a.PresharedKey == nil) == (b.PresharedKey == nil) &&
		(a.PresharedKey == nil || *a.PresharedKey == *b.PresharedKey)
	return a.Name == b.Name && a.ID == b.ID && pskEqual && a.Endpoint == b.Endpoint &&
		slices.Equal(a.AllowedIPs, b.AllowedIPs) && a.PersistentKeepalive == b.PersistentKeepalive &&
		a.Roaming == b.Roaming && slices.Equal(a.Suites, b.Suites)
}

// reload handles SIGHUP; it logs the outcome.
func (d *daemon) reload() {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if !d.ready.Load() || d.noReloads {
		return
	}
	d.reloadLocked()
}

// controlReload is `gmtun reload`: the same reload, answered with its
// outcome once it is applied.
func (d *daemon) controlReload() (control.ReloadResult, error) {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if !d.ready.Load() || d.noReloads {
		return control.ReloadResult{}, fmt.Errorf("%s is starting or stopping", d.name)
	}
	return d.reloadLocked(), nil
}

// controlStop is `gmtun down`: the main loop shuts down, and the client
// waits for the socket to disappear.
func (d *daemon) controlStop() error {
	select {
	case d.stopReq <- struct{}{}:
	default: // already requested
	}
	return nil
}

// reloadLocked re-reads and applies the configuration. d.reloadMu held.
func (d *daemon) reloadLocked() control.ReloadResult {
	if mono, err := sdnotify.MonotonicUsec(); err == nil {
		d.notify(sdnotify.Reloading, mono)
	} else {
		d.notify(sdnotify.Reloading)
	}
	res, err := d.applyReload()
	d.restoreLink() // a reload also repairs what was removed behind gmtun's back
	d.mu.Lock()
	d.lastReload = time.Now()
	d.lastReloadErr = ""
	if err != nil {
		d.lastReloadErr = err.Error()
	}
	if res.Error == "" || !res.ConfigError {
		d.pendingRestart = res.RestartNeeded
	}
	d.mu.Unlock()
	status := d.statusLine()
	if err != nil {
		res.Error = err.Error()
		d.log.Errorf("reload: %v", err)
		status += "; last reload failed"
	}
	d.notify(sdnotify.Ready, sdnotify.Status(status))
	return res
}

// applyReload re-reads the configuration and applies what it can. The
// result lists what changed; an error says why (part of) it was not
// applied, and the result's ConfigError says whether the file was invalid.
func (d *daemon) applyReload() (control.ReloadResult, error) {
	var res control.ReloadResult
	d.mu.Lock()
	defer d.mu.Unlock()
	path := d.cfg.Path
	next, err := config.Load(path)
	if err != nil {
		res.ConfigError = true
		var ce *config.Error
		if !errors.As(err, &ce) {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return res, fmt.Errorf("%w; keeping the running configuration", err)
	}
	d.log.Infof("reloading %s", path)
	for _, w := range next.Warnings {
		d.log.Warnf("%s", w)
	}
	res.Warnings = next.Warnings
	d.inheritDerived(next) // up_routing.go
	keys, identity := restartKeys(d.cfg, next)
	res.RestartNeeded = keys
	if identity {
		return res, fmt.Errorf("%s changed; restart gmtun to apply it; nothing was changed", strings.Join(keys, ", "))
	}
	if len(keys) > 0 {
		d.log.Warnf("reload: %s changed; restart gmtun to apply it (the running value is kept)", strings.Join(keys, ", "))
	}
	d.syncResolver(next) // up_resolve.go: the resolved endpoint names
	if err := d.dev.SetPeers(peerConfigs(next.Peers)); err != nil {
		return res, fmt.Errorf("applying the peers: %w; keeping the running peers", err)
	}
	added, removed, changed := peerChanges(d.cfg.Peers, next.Peers)
	res.Added, res.Removed, res.Updated = added, removed, changed
	sl := d.log.Slog()
	for _, n := range removed {
		sl.Info("peer removed", "peer", n)
	}
	for _, n := range added {
		sl.Info("peer added", "peer", n)
	}
	for _, n := range changed {
		sl.Info("peer updated", "peer", n)
	}
	if next.Interface.LogLevel != d.cfg.Interface.LogLevel {
		d.log.SetLevel(next.Interface.LogLevel)
		d.log.Infof("log level is now %s", strings.ToLower(next.Interface.LogLevel.String()))
	}

	// The running interface keeps its restart-only settings (table
	// included: routes stay in the table they were created in).
	running := *d.cfg
	running.Peers = next.Peers
	running.Warnings = next.Warnings
	running.Interface.LogLevel = next.Interface.LogLevel
	running.Interface.Suites = next.Interface.Suites
	d.cfg = &running

	var errs []error
	if d.failClosed != nil { // before the routes: a new prefix is never open
		if err := d.failClosed.Set(wantRoutes(d.cfg)); err != nil {
			errs = append(errs, err)
		}
	}
	add, del := diffRoutes(d.routes, wantRoutes(d.cfg))
	for _, p := range del {
		if err := d.routes[p].Teardown(); err != nil {
			errs = append(errs, err)
		}
		delete(d.routes, p)
	}
	if err := d.addRoutes(add, routeTable(d.cfg.Interface.Table)); err != nil {
		errs = append(errs, err)
	}
	if len(add)+len(del) > 0 {
		d.log.Debugf("routes: %d added, %d removed", len(add), len(del))
	}
	d.log.Infof("reloaded: %d peer(s): %d added, %d removed, %d updated",
		len(next.Peers), len(added), len(removed), len(changed))
	return res, errors.Join(errs...)
}

// notify sends assignments to systemd, logging only the first failure.
func (d *daemon) notify(assignments ...string) {
	if _, err := sdnotify.Notify(d.notifySocket, assignments...); err != nil && !d.notifyFailed.Swap(true) {
		d.log.Warnf("%v", err)
	}
}

// statusLine is the STATUS= text for systemctl status.
func (d *daemon) statusLine() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fmt.Sprintf("%s up, %d peer(s)", d.cfg.Interface.Name, len(d.cfg.Peers))
}

// status is the control socket's view of the daemon.
func (d *daemon) status() (control.Status, error) {
	if !d.ready.Load() {
		return control.Status{}, fmt.Errorf("%s is starting or stopping", d.name)
	}
	st := d.dev.Stats()
	d.mu.Lock()
	ifc := d.cfg.Interface
	path := d.cfg.Path
	var lastReload *time.Time
	if !d.lastReload.IsZero() {
		t := d.lastReload
		lastReload = &t
	}
	reloadErr := d.lastReloadErr
	pending := slices.Clone(d.pendingRestart)
	d.mu.Unlock()

	to, uo := d.tun.Offload(), d.bind.Offload()
	s := control.Status{
		Interface:  ifc.Name,
		PublicKey:  ifc.PrivateKey.Public().String(),
		ListenPort: st.ListenPort,
		MTU:        st.MTU,
		FwMark:     ifc.FwMark,
		Kernels:    d.kernels,
		Offload: control.Offload{
			TUNVNetHdr: to.VNetHdr, TUNTSO: to.VNetHdr, TUNUSO: to.USO, TUNQueues: to.Queues,
			UDPGSO4: uo.GSO4, UDPGSO6: uo.GSO6, UDPGRO4: uo.GRO4, UDPGRO6: uo.GRO6,
		},
		ConfigFile:       path,
		Started:          d.started,
		LastReload:       lastReload,
		LastReloadError:  reloadErr,
		PendingRestart:   pending,
		Peers:            make([]control.Peer, 0, len(st.Peers)),
		Drops:            st.Drops,
		HandshakeInvalid: st.HandshakeInvalid,
		Seal:             batches(st.Seal),
		Open:             batches(st.Open),
		Buffers:          bufferStatus(st.Buffers),
		ReceiveErrors:    st.ReceiveErrors,
		Goroutines:       runtime.NumGoroutine(),
	}
	for _, id := range ifc.Suites {
		s.Suites = append(s.Suites, id.String())
	}
	for _, p := range st.Peers {
		cp := control.Peer{
			Name:                p.Name,
			PublicKey:           p.PublicKey,
			AllowedIPs:          make([]string, 0, len(p.AllowedIPs)),
			RxBytes:             p.RxBytes,
			TxBytes:             p.TxBytes,
			RxPackets:           p.RxPackets,
			TxPackets:           p.TxPackets,
			PersistentKeepalive: int(p.PersistentKeepalive / time.Second),
			Roaming:             p.Roaming,
			InboundQueue:        p.InboundQueue,
			OutboundQueue:       p.OutboundQueue,
			Staged:              p.Staged,
			Handshakes:          p.Handshakes,
		}
		if p.Endpoint.IsValid() {
			cp.Endpoint = p.Endpoint.String()
		}
		for _, a := range p.AllowedIPs {
			cp.AllowedIPs = append(cp.AllowedIPs, a.String())
		}
		if p.Suite != 0 {
			cp.Suite = p.Suite.String()
		}
		if !p.LastHandshake.IsZero() {
			t := p.LastHandshake
			cp.LastHandshake = &t
		}
		s.Peers = append(s.Peers, cp)
	}
	return s, nil
}

// batches converts the device's batch counters for the control socket.
func batches(b tunnel.BatchStats) control.Batches {
	return control.Batches{Calls: b.Calls, Packets: b.Packets, PacketsPerCall: b.PacketsPerCall(), LanesPerKernelCall: b.LanesPerGroup()}
}

// logSuiteTiers logs which implementation carries each configured suite,
// and warns loudly for every suite left on the portable generic code: it is
// constant-time but several times slower, so a gateway on it is likely
// CPU-bound (docs/SECURITY.md, docs/BENCHMARKS.md).
func logSuiteTiers(log *logger, suites []ciphers.SuiteID) {
	for _, s := range suites {
		tier := s.Tier()
		if tier != "generic" {
			log.Infof("suite %s runs on the %s kernels", s, tier)
			continue
		}
		log.Warnf("WARNING: suite %s runs on the portable generic code (no SIMD kernel for this %s CPU, or a purego build): "+
			"constant-time, but several times slower than the kernel tiers; expect much lower throughput (docs/BENCHMARKS.md)",
			s, runtime.GOARCH)
	}
}

// kernelsString formats the kernel tiers for the startup line.
func kernelsString(ks []control.Kernel) string {
	if len(ks) == 0 {
		return "(none registered)"
	}
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k.Primitive + "=" + k.Selected
	}
	return strings.Join(parts, " ")
}

// versionString is the version for log lines.
func versionString() string {
	if version != "" {
		return version
	}
	return "(devel)"
}
