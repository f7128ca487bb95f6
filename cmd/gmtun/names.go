package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gmtun/gmtun/control"
)

// Configuration names: `gmtun up NAME` runs /etc/gmtun/NAME.toml, as
// `wg-quick up NAME` runs /etc/wireguard/NAME.conf, and the systemd unit
// gmtun@NAME.service runs `gmtun up NAME`.
const (
	// defaultConfigDir is where a NAME argument is looked up.
	defaultConfigDir = "/etc/gmtun"
	// envConfigDir overrides defaultConfigDir (for tests and staging).
	envConfigDir = "GMTUN_CONFIG_DIR"
	// configExt ends every configuration file named by NAME.
	configExt = ".toml"
	// envSocketDir overrides control.DefaultDir, the base directory of
	// the control sockets (for tests).
	envSocketDir = control.DirEnv
)

// socketBase returns the base directory of the control sockets: the
// --socket-dir flag if given, else $GMTUN_SOCKET_DIR, else /run/gmtun.
func socketBase(e *env, flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if e.getenv != nil {
		if d := e.getenv(envSocketDir); d != "" {
			return d
		}
	}
	return control.DefaultDir
}

// configDir returns the directory NAME arguments are looked up in.
func configDir(e *env) string {
	if e.getenv != nil {
		if d := e.getenv(envConfigDir); d != "" {
			return d
		}
	}
	return defaultConfigDir
}

// checkConfigName reports why s cannot be a configuration NAME: NAME is a
// file name without its ".toml" (a path or a file name goes to --config).
func checkConfigName(s string) error {
	switch {
	case s == "" || s == "." || s == "..":
		return errors.New("is not a configuration name")
	case strings.ContainsAny(s, "/\x00"):
		return errors.New("is a path; give a file with --config FILE, or NAME for " + defaultConfigDir + "/NAME" + configExt)
	case strings.HasSuffix(s, configExt):
		return fmt.Errorf("ends in %s; give NAME for %s/NAME%s, or the file with --config FILE", configExt, defaultConfigDir, configExt)
	case strings.HasPrefix(s, "-"):
		return errors.New("looks like a flag; flags go before NAME")
	case len(s) > 64 || strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@-", r))
	}) >= 0:
		return errors.New("is not a configuration name (at most 64 letters, digits, '.', '_', '@', '-')")
	}
	return nil
}

// configArg resolves the configuration a command acts on: NAME (the only
// argument) or --config FILE, exactly one of them. It returns the path,
// or ok false after printing a usage error (the exit code is exitUsage).
func configArg(e *env, verb string, args []string, configFlag string) (path string, ok bool) {
	switch {
	case len(args) > 1:
		usageErrorf(e, "%s: unexpected argument %q; give one NAME or --config FILE", verb, args[1])
		return "", false
	case len(args) == 1 && configFlag != "":
		usageErrorf(e, "%s: give NAME or --config FILE, not both", verb)
		return "", false
	case len(args) == 1:
		if err := checkConfigName(args[0]); err != nil {
			usageErrorf(e, "%s: %q %v", verb, args[0], err)
			return "", false
		}
		return filepath.Join(configDir(e), args[0]+configExt), true
	case configFlag == "":
		usageErrorf(e, "%s: give NAME (for %s/NAME%s) or --config FILE", verb, configDir(e), configExt)
		return "", false
	}
	return configFlag, true
}

// instanceName is the configuration name of path: its base name without
// ".toml" (gm0 for /etc/gmtun/gm0.toml).
func instanceName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), configExt)
}

// defaultSocketDir is where `gmtun up` puts its control socket when no
// --socket-dir is given: /run/gmtun/NAME (socketBase), systemd's RuntimeDirectory=gmtun/%i
// for the unit gmtun@NAME, so that stopping one instance (which removes
// its runtime directory) leaves the others' sockets alone.
func defaultSocketDir(e *env, configPath string) string {
	return filepath.Join(socketBase(e, ""), instanceName(configPath))
}

// findSocket locates the control socket of a running daemon under base
// (default /run/gmtun) for the first of names that has one. Each name may
// be a configuration name or an interface name; the layouts tried are
// base/NAME/*.sock (the socket of configuration NAME, one only),
// base/NAME.sock (--socket-dir base) and base/*/NAME.sock (interface NAME
// of another configuration). Not found is an error wrapping
// fs.ErrNotExist that names where it looked.
func findSocket(base string, names ...string) (string, error) {
	for _, name := range names {
		if name == "" {
			continue
		}
		socks, err := control.Sockets(filepath.Join(base, name))
		if errors.Is(err, fs.ErrPermission) {
			return "", err
		}
		if err == nil {
			var own []string
			for _, s := range socks {
				if filepath.Dir(s) == filepath.Join(base, name) {
					own = append(own, s)
				}
			}
			if len(own) == 1 {
				return own[0], nil
			}
		}
		if p := control.SocketPath(base, name); isSocket(p) {
			return p, nil
		}
		if matches, _ := filepath.Glob(filepath.Join(base, "*", name+".sock")); len(matches) > 0 {
			for _, m := range matches {
				if isSocket(m) {
					return m, nil
				}
			}
		}
	}
	first := ""
	if len(names) > 0 {
		first = names[0]
	}
	return "", notFound("no control socket " + control.SocketPath(base, first) + " or " + filepath.Join(base, first, "*.sock"))
}

// notFound is a not-running error: errors.Is(err, fs.ErrNotExist) holds.
type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == fs.ErrNotExist }

// isSocket reports whether path is a unix socket (possibly a stale one).
func isSocket(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().Type() == fs.ModeSocket
}
