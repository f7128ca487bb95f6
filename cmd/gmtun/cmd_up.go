package main

import (
	"errors"
	"flag"
	"net/netip"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/control"
	"github.com/gmtun/gmtun/sdnotify"
	"github.com/gmtun/gmtun/tunnel"
	"github.com/gmtun/gmtun/tunnel/iface"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// `gmtun up` lives in files of one job each: this one registers the
// command and holds the daemon's state and main loop; up_lifecycle.go
// starts and stops the daemon (TUN device, UDP bind, addresses, routes);
// up_reload.go applies a changed configuration; up_status.go reports to
// systemd, the control socket and the log; up_hooks.go, up_mtu.go,
// up_resolve.go, up_routing.go and up_metrics.go hold the optional steps
// that start, reload and shutdown call.

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

// controlStop is `gmtun down`: the main loop shuts down, and the client
// waits for the socket to disappear.
func (d *daemon) controlStop() error {
	select {
	case d.stopReq <- struct{}{}:
	default: // already requested
	}
	return nil
}
