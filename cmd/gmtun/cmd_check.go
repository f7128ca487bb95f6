package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/config"
)

func init() {
	register(&command{
		name:     "check",
		synopsis: "NAME | --config FILE [--quiet]",
		summary:  "validate a configuration file without running it",
		order:    20,
		help: `Reads and validates /etc/gmtun/NAME.toml (or FILE) exactly as 'gmtun up'
would: TOML syntax, unknown or miscased keys, value types and ranges, key
files (present, one valid key, mode 0600 or stricter, owned by this user),
duplicate peers and overlapping allowed_ips. Needs no privileges beyond reading the files and changes
nothing. On success it prints a summary including this side's public key;
on failure one line naming the file, line and key, and exits with 3.
Warnings (such as a config file writable by others) go to stderr.

'gmtun reload NAME' runs the same check before it asks the daemon to reload.
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			path := fs.String("config", "", "the configuration `FILE` to check, instead of NAME")
			quiet := fs.Bool("quiet", false, "print nothing on success, only warnings and errors")
			return func(args []string) int {
				cfgPath, ok := configArg(e, "check", args, *path) // NAME or --config FILE (names.go)
				if !ok {
					return exitUsage
				}
				path := &cfgPath
				cfg, err := config.LoadForCheck(*path)
				if err != nil {
					var ce *config.Error
					if errors.As(err, &ce) {
						return failf(e, exitConfig, "%v", err)
					}
					return failf(e, exitConfig, "%s: %v", *path, err)
				}
				for _, w := range cfg.Warnings {
					fmt.Fprintf(e.stderr, "gmtun: warning: %s\n", w)
				}
				if !*quiet {
					writeSummary(e.stdout, cfg)
				}
				return exitOK
			}
		},
	})
}

// writeSummary prints what a validated configuration will set up.
func writeSummary(w io.Writer, cfg *config.Config) {
	ifc := &cfg.Interface
	fmt.Fprintf(w, "%s: ok\n", cfg.Path)
	fmt.Fprintf(w, "interface %s\n", ifc.Name)
	fmt.Fprintf(w, "  public key:  %s\n", ifc.PrivateKey.Public())
	port := "ephemeral"
	if ifc.ListenPort != 0 {
		port = fmt.Sprint(ifc.ListenPort)
	}
	fmt.Fprintf(w, "  listen port: %s\n", port)
	fmt.Fprintf(w, "  address:     %s\n", joinPrefixes(ifc.Addresses))
	fmt.Fprintf(w, "  mtu:         %d\n", ifc.MTU)
	fmt.Fprintf(w, "  suites:      %s\n", joinSuites(ifc.Suites))
	for i := range cfg.Peers {
		p := &cfg.Peers[i]
		fmt.Fprintf(w, "peer %s\n", p.Name)
		ep := "(none: responder only)"
		if s := configEndpoint(p); s != "" { // up_resolve.go: IP literal or NAME:port
			ep = s
		}
		fmt.Fprintf(w, "  endpoint:    %s\n", ep)
		fmt.Fprintf(w, "  allowed ips: %s\n", joinPrefixes(p.AllowedIPs))
		fmt.Fprintf(w, "  suites:      %s\n", joinSuites(p.Suites))
		if p.PresharedKey != nil {
			fmt.Fprintf(w, "  preshared key: yes\n")
		}
		if p.PersistentKeepalive != 0 {
			fmt.Fprintf(w, "  keepalive:   %s\n", p.PersistentKeepalive)
		}
	}
}

func joinPrefixes(ps []netip.Prefix) string {
	if len(ps) == 0 {
		return "(none)"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

func joinSuites(ids []ciphers.SuiteID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return strings.Join(s, ", ")
}
