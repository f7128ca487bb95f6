package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/config"
)

func init() {
	register(&command{
		name:     "showconf",
		synopsis: "NAME | --config FILE",
		summary:  "print the effective configuration, keys redacted",
		order:    45,
		help: `Validates /etc/gmtun/NAME.toml (or FILE) as 'gmtun check' does and prints
it as gmtun applies it: every key of [interface] and of each [[peer]], with
the defaults of absent keys filled in, relative key file paths resolved. The
output is a valid configuration file with the same meaning.

No key is printed: the private key and the pre-shared keys appear only as
the paths of their files (with "(redacted)" comments); this side's public
key is printed as a comment, since it is public. Exits with 3 on an invalid
file, like 'check'.
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			path := fs.String("config", "", "the configuration `FILE`, instead of NAME")
			return func(args []string) int {
				cfgPath, ok := configArg(e, "showconf", args, *path)
				if !ok {
					return exitUsage
				}
				cfg, code := loadChecked(e, cfgPath)
				if code != exitOK {
					return code
				}
				writeEffectiveConfig(e.stdout, cfg)
				return exitOK
			}
		},
	})
}

// writeEffectiveConfig prints cfg as TOML, every key explicit, no key material.
func writeEffectiveConfig(w io.Writer, cfg *config.Config) {
	ifc := &cfg.Interface
	fmt.Fprintf(w, "# effective configuration of %s (gmtun showconf)\n", cfg.Path)
	fmt.Fprintf(w, "[interface]\n")
	fmt.Fprintf(w, "name = %s\n", strconv.Quote(ifc.Name))
	fmt.Fprintf(w, "# public key: %s\n", ifc.PrivateKey.Public())
	fmt.Fprintf(w, "private_key_file = %s # (redacted: the key itself is not shown)\n", strconv.Quote(ifc.PrivateKeyFile))
	if ifc.ListenPort != 0 {
		fmt.Fprintf(w, "listen_port = %d\n", ifc.ListenPort)
	} else {
		fmt.Fprintf(w, "# listen_port absent: an ephemeral port\n")
	}
	fmt.Fprintf(w, "address = %s\n", tomlPrefixes(ifc.Addresses))
	if ifc.MTUAuto {
		fmt.Fprintf(w, "mtu = \"auto\"\n")
	} else {
		fmt.Fprintf(w, "mtu = %d\n", ifc.MTU)
	}
	for _, h := range []struct {
		key  string
		cmds [][]string
	}{{"pre_up", ifc.Hooks.PreUp}, {"post_up", ifc.Hooks.PostUp}, {"pre_down", ifc.Hooks.PreDown}, {"post_down", ifc.Hooks.PostDown}} {
		fmt.Fprintf(w, "%s = %s\n", h.key, tomlCommands(h.cmds))
	}
	fmt.Fprintf(w, "suites = %s\n", tomlSuites(ifc.Suites))
	fmt.Fprintf(w, "id = %s\n", strconv.Quote(ifc.ID))
	fmt.Fprintf(w, "log_level = %s\n", strconv.Quote(levelName(ifc.LogLevel)))
	fmt.Fprintf(w, "log_format = %s\n", strconv.Quote(ifc.LogFormat))
	switch {
	case ifc.Table.Off:
		fmt.Fprintf(w, "table = \"off\"\n")
	case ifc.Table.ID == 0:
		fmt.Fprintf(w, "table = \"auto\"\n")
	default:
		fmt.Fprintf(w, "table = %d\n", ifc.Table.ID)
	}
	fmt.Fprintf(w, "fwmark = %d\n", ifc.FwMark)
	fmt.Fprintf(w, "fail_closed = %t\n", ifc.FailClosed)
	if ifc.RunToCompletionAuto {
		fmt.Fprintf(w, "run_to_completion = \"auto\"\n")
	} else {
		fmt.Fprintf(w, "run_to_completion = %t\n", ifc.RunToCompletion)
	}
	if ifc.MetricsListen.Enabled() {
		fmt.Fprintf(w, "metrics_listen = %s\n", strconv.Quote(ifc.MetricsListen.String()))
	}
	for i := range cfg.Peers {
		p := &cfg.Peers[i]
		fmt.Fprintf(w, "\n[[peer]]\n")
		fmt.Fprintf(w, "name = %s\n", strconv.Quote(p.Name))
		fmt.Fprintf(w, "public_key = %s\n", strconv.Quote(p.PublicKey.String()))
		if ep := configEndpoint(p); ep != "" { // up_resolve.go: IP literal or NAME:port
			fmt.Fprintf(w, "endpoint = %s\n", strconv.Quote(ep))
		} else {
			fmt.Fprintf(w, "# endpoint absent: this side only responds\n")
		}
		fmt.Fprintf(w, "allowed_ips = %s\n", tomlPrefixes(p.AllowedIPs))
		fmt.Fprintf(w, "persistent_keepalive = %d\n", int(p.PersistentKeepalive/time.Second))
		if p.PresharedKeyFile != "" {
			fmt.Fprintf(w, "preshared_key_file = %s # (redacted: the key itself is not shown)\n", strconv.Quote(p.PresharedKeyFile))
		}
		fmt.Fprintf(w, "id = %s\n", strconv.Quote(p.ID))
		fmt.Fprintf(w, "roaming = %t\n", p.Roaming)
		fmt.Fprintf(w, "suites = %s\n", tomlSuites(p.Suites))
	}
}

func levelName(l slog.Level) string {
	switch {
	case l <= slog.LevelDebug:
		return "debug"
	case l <= slog.LevelInfo:
		return "info"
	case l <= slog.LevelWarn:
		return "warn"
	}
	return "error"
}

func tomlPrefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Quote(p.String())
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func tomlSuites(ids []ciphers.SuiteID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Quote(id.String())
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// tomlCommands formats hook commands as an array of string arrays.
func tomlCommands(cmds [][]string) string {
	out := make([]string, len(cmds))
	for i, c := range cmds {
		q := make([]string, len(c))
		for j, a := range c {
			q[j] = strconv.Quote(a)
		}
		out[i] = "[" + strings.Join(q, ", ") + "]"
	}
	return "[" + strings.Join(out, ", ") + "]"
}
