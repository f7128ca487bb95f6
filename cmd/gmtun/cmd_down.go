package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/control"
)

func init() {
	register(&command{
		name:     "down",
		synopsis: "NAME | --config FILE [--socket-dir DIR] [--timeout D]",
		summary:  "stop a running daemon and wait until it is gone",
		order:    34,
		help: `Asks the running daemon of NAME (the configuration /etc/gmtun/NAME.toml,
or FILE; an interface name works too) through its control socket to shut
down, as SIGTERM would: it removes its routes and addresses, closes the
interface and removes the control socket. Waits until the socket is gone,
at most --timeout. Exits with 0 once the daemon is down, 1 if it is not
running or does not stop in time.

Under systemd prefer 'systemctl stop gmtun@NAME'; a daemon stopped with
'gmtun down' exits with 0 and systemd does not restart it.
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			path := fs.String("config", "", "the configuration `FILE`, instead of NAME")
			dir := fs.String("socket-dir", "", "the base `DIR`ectory of the control sockets (default /run/gmtun)")
			timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for the daemon to stop")
			return func(args []string) int {
				names, cfgPath := args, *path
				if *path != "" {
					// The interface name from the file, if it still loads.
					names = []string{instanceName(*path)}
					if cfg, err := config.LoadForCheck(*path); err == nil {
						names = append(names, cfg.Interface.Name)
					}
					if len(args) > 0 {
						return usageErrorf(e, "down: give NAME or --config FILE, not both")
					}
				} else if p, ok := configArg(e, "down", args, ""); !ok {
					return exitUsage
				} else {
					cfgPath = p
				}
				return runDown(e, socketBase(e, *dir), names, cfgPath, *timeout)
			}
		},
	})
}

func runDown(e *env, dir string, names []string, cfgPath string, timeout time.Duration) int {
	name := names[0]
	sock, err := findSocket(dir, names...)
	if err != nil {
		// The file may no longer load (or name another interface now):
		// the daemon that runs it says so in its status.
		if s := socketRunning(dir, cfgPath); s != "" {
			sock, err = s, nil
		}
	}
	if err != nil {
		return failf(e, exitFailure, "down: %s", notRunning(name, err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	if err := control.Stop(ctx, sock); err != nil {
		if ctx.Err() != nil {
			return failf(e, exitFailure, "down: %s did not stop within %v (still shutting down?)", name, timeout)
		}
		return failf(e, exitFailure, "down: %s", queryError(name, sock, err))
	}
	fmt.Fprintf(e.stdout, "%s: stopped (%v)\n", name, time.Since(start).Round(time.Millisecond))
	return exitOK
}

// socketRunning returns the socket under dir of the daemon that runs the
// configuration file cfgPath, or "".
func socketRunning(dir, cfgPath string) string {
	socks, _ := control.Sockets(dir)
	for _, s := range socks {
		ctx, cancel := context.WithTimeout(context.Background(), showTimeout)
		st, err := control.Query(ctx, s)
		cancel()
		if err == nil && st.ConfigFile != "" && samePath(st.ConfigFile, cfgPath) {
			return s
		}
	}
	return ""
}
