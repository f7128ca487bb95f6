package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/control"
)

// reloadTimeout bounds the wait for the daemon's answer: adding routes for
// many peers takes a while, a daemon that does not answer in this time is
// stuck.
const reloadTimeout = 60 * time.Second

func init() {
	register(&command{
		name:     "reload",
		synopsis: "NAME | --config FILE [--socket-dir DIR]",
		summary:  "validate the configuration, then have the running daemon apply it",
		order:    32,
		help: `Validates /etc/gmtun/NAME.toml (or FILE) as 'gmtun check' does; if it is
invalid, prints the one line naming the file, line and key and exits with
3 without touching the running daemon. Otherwise asks the daemon of NAME,
through its control socket, to re-read the file, and waits for its answer:
peers are added, removed and updated without dropping the sessions of
unchanged peers, routes follow their allowed_ips, log_level and suites
apply. Settings only a restart applies (listen_port, mtu, address, table,
fwmark, fail_closed) are kept and listed as a warning; 'gmtun show' lists
them until the restart. A changed name, private key or id is refused.

Exits with 0 when the daemon applied the file, 3 when the file is invalid,
1 when the daemon is not running or could not apply it. The systemd unit
runs it as ExecReload=, so 'systemctl reload gmtun@NAME' fails visibly.
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			path := fs.String("config", "", "the configuration `FILE`, instead of NAME")
			dir := fs.String("socket-dir", "", "the base `DIR`ectory of the control sockets (default /run/gmtun)")
			return func(args []string) int {
				cfgPath, ok := configArg(e, "reload", args, *path)
				if !ok {
					return exitUsage
				}
				return runReload(e, cfgPath, socketBase(e, *dir), reloadTimeout)
			}
		},
	})
}

// loadChecked validates path as `gmtun check` does, printing its
// warnings; on error it prints the one line and returns exitConfig.
func loadChecked(e *env, path string) (*config.Config, int) {
	cfg, err := config.LoadForCheck(path)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, failf(e, exitConfig, "%v", err)
		}
		return nil, failf(e, exitConfig, "%s: %v", path, err)
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(e.stderr, "gmtun: warning: %s\n", w)
	}
	return cfg, exitOK
}

func runReload(e *env, cfgPath, dir string, timeout time.Duration) int {
	cfg, code := loadChecked(e, cfgPath)
	if code != exitOK {
		return code
	}
	name := instanceName(cfgPath)
	sock, err := findSocket(dir, name, cfg.Interface.Name)
	if err != nil {
		return failf(e, exitFailure, "reload: %s", notRunning(name, err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// The daemon re-reads its own file: if that is another one than
	// cfgPath, validate it too, so that exit 3 still means "the daemon
	// was not touched".
	if st, err := control.Query(ctx, sock); err == nil && st.ConfigFile != "" && !samePath(st.ConfigFile, cfgPath) {
		fmt.Fprintf(e.stderr, "gmtun: warning: the daemon of %s runs %s, not %s; validating and reloading that file\n", name, st.ConfigFile, cfgPath)
		if _, code := loadChecked(e, st.ConfigFile); code != exitOK {
			return code
		}
	}
	r, err := control.Reload(ctx, sock)
	if err != nil {
		return failf(e, exitFailure, "reload: %s", queryError(name, sock, err))
	}
	if r.Error != "" {
		if r.ConfigError {
			// The file changed between the check and the daemon's read.
			return failf(e, exitConfig, "%s", r.Error)
		}
		return failf(e, exitFailure, "reload: %s: %s", name, r.Error)
	}
	if len(r.RestartNeeded) > 0 {
		fmt.Fprintf(e.stderr, "gmtun: warning: %s changed; the running value is kept until gmtun %s restarts (systemctl restart gmtun@%s)\n",
			strings.Join(r.RestartNeeded, ", "), name, name)
	}
	fmt.Fprintf(e.stdout, "%s: reloaded: %d peer(s) added, %d removed, %d updated\n", name, len(r.Added), len(r.Removed), len(r.Updated))
	return exitOK
}

// samePath reports whether a and b name the same file.
func samePath(a, b string) bool {
	if fa, err := os.Stat(a); err == nil {
		if fb, err := os.Stat(b); err == nil {
			return os.SameFile(fa, fb)
		}
	}
	aa, _ := filepath.Abs(a)
	bb, _ := filepath.Abs(b)
	return aa == bb
}

// notRunning is the sentence for a daemon without a control socket.
func notRunning(name string, err error) string {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Sprintf("%s: permission denied on the control socket directory (run as root)", name)
	}
	return fmt.Sprintf("%s is not running (%v)", name, err)
}

// queryError is the sentence for a failed exchange with a daemon.
func queryError(name, sock string, err error) string {
	return strings.TrimPrefix(showError(name, sock, err).Error(), "show: ")
}
