//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// gmtunPort is the UDP port of both gmtun endpoints.
const gmtunPort = 51900

// gmtunReadyTimeout bounds the wait for a gmtun daemon to report READY=1.
const gmtunReadyTimeout = 20 * time.Second

// gmtunTunnel runs `gmtun up --config FILE` in each namespace with both
// sides restricted to one data suite, so that the suite under test is the
// one negotiated. Keys come from `gmtun genkey` / `gmtun pubkey`; the
// configuration format is the one of configs/site-a.toml
// (docs/OPERATIONS.md).
type gmtunTunnel struct {
	bin   string
	suite string
	// runToCompletion is the run_to_completion setting written to both
	// configurations: "true" or "false"; "" leaves gmtun's default.
	runToCompletion string
	// configs[i] is side i's configuration file, written by Prepare.
	configs [2]string
}

// Name implements Tunnel.
func (g *gmtunTunnel) Name() string { return "gmtun " + g.suite }

// Prepare implements Tunnel: it checks that the binary has an `up`
// command, creates a key pair per side and writes and checks both
// configuration files.
func (g *gmtunTunnel) Prepare(ctx context.Context, bed *Bed, dir string) error {
	if err := gmtunHasUp(ctx, g.bin); err != nil {
		return err
	}
	var privFiles, pubs [2]string
	for i, side := range []string{"a", "b"} {
		priv, pub, err := genKeyPair(ctx, []string{g.bin, "genkey"}, []string{g.bin, "pubkey"})
		if err != nil {
			return err
		}
		privFiles[i] = filepath.Join(dir, "gmtun-"+g.suite+"-"+side+".key")
		if err := os.WriteFile(privFiles[i], priv, 0o600); err != nil {
			return fmt.Errorf("tunnelbed: %w", err)
		}
		pubs[i] = pub
	}
	for i, side := range []string{"a", "b"} {
		c := gmtunConfig{
			Iface:      bed.IfaceName(side),
			PrivateKey: privFiles[i],
			Port:       gmtunPort,
			Address:    []string{innerA.String(), innerB.String()}[i],
			MTU:        innerMTU,
			Suite:      g.suite,
			PeerName:   "site-" + []string{"b", "a"}[i],
			PeerPub:    pubs[1-i],
			Endpoint:   []string{underlayB.Addr().String(), underlayA.Addr().String()}[i] + ":" + strconv.Itoa(gmtunPort),
			AllowedIP:  []string{innerB.Addr().String(), innerA.Addr().String()}[i] + "/32",

			RunToCompletion: g.runToCompletion,
		}
		text, err := c.TOML()
		if err != nil {
			return err
		}
		g.configs[i] = filepath.Join(dir, "gmtun-"+g.suite+"-"+side+".toml")
		if err := os.WriteFile(g.configs[i], []byte(text), 0o600); err != nil {
			return fmt.Errorf("tunnelbed: %w", err)
		}
		cctx, cancel := context.WithTimeout(ctx, cmdTimeout)
		out, err := exec.CommandContext(cctx, g.bin, "check", "--quiet", "--config", g.configs[i]).CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("tunnelbed: gmtun check rejected the generated %s: %w: %s", g.configs[i], err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// gmtunHasUp fails with a clear message when bin has no `up` command (it
// is still being written): `gmtun up --help` must exit 0.
func gmtunHasUp(ctx context.Context, bin string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("tunnelbed: gmtun binary: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "up", "--help").CombinedOutput()
	if err != nil {
		return fmt.Errorf("tunnelbed: %s has no usable 'up' command yet (`%s up --help`: %v: %s)",
			bin, bin, err, firstLine(string(out)))
	}
	return nil
}

// Start implements Tunnel: `gmtun up` in each namespace, each with its own
// NOTIFY_SOCKET; it returns when both sent READY=1 and their interfaces
// are up.
func (g *gmtunTunnel) Start(ctx context.Context, bed *Bed) (_ *Session, err error) {
	s := &Session{}
	var socks []*net.UnixConn
	defer func() {
		for _, c := range socks {
			c.Close()
			os.Remove(c.LocalAddr().String())
		}
		if err != nil {
			err = errors.Join(err, s.Stop())
		}
	}()
	nss := []string{bed.NSA, bed.NSB}
	for i, side := range []string{"a", "b"} {
		path := filepath.Join(filepath.Dir(g.configs[i]), "notify-"+side+".sock")
		os.Remove(path)
		c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			return nil, fmt.Errorf("tunnelbed: notify socket: %w", err)
		}
		socks = append(socks, c)
		d, err := StartDaemon(bed, "gmtun up "+bed.IfaceName(side), nss[i],
			[]string{"NOTIFY_SOCKET=" + path}, g.bin, "up", "--config", g.configs[i])
		if err != nil {
			return nil, err
		}
		s.Daemons = append(s.Daemons, d)
	}
	for i, side := range []string{"a", "b"} {
		if err := waitReady(ctx, socks[i], s.Daemons[i], gmtunReadyTimeout); err != nil {
			return nil, err
		}
		iface := bed.IfaceName(side)
		if err := waitInterface(ctx, bed, s, nss[i], iface, 5*time.Second); err != nil {
			return nil, err
		}
		_, notes := offloadNotes(ctx, bed, nss[i], iface)
		s.Notes = append(s.Notes, notes...)
	}
	ifaces := [2]string{bed.IfaceName("a"), bed.IfaceName("b")}
	s.batches = func(ctx context.Context) ([2]batchCounts, error) {
		return queryBatches(ctx, controlDirs(), ifaces)
	}
	return s, nil
}

// waitReady reads sd_notify(3) datagrams from c until one contains the
// line READY=1, the daemon exits, or timeout passes.
func waitReady(ctx context.Context, c *net.UnixConn, d *Daemon, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	buf := make([]byte, 4096)
	for {
		if err := d.Exited(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tunnelbed: %s sent no READY=1 within %v; log: %s", d.name, timeout, d.Log(6))
		}
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := c.Read(buf)
		if err != nil {
			continue // deadline: poll the daemon and the context again
		}
		for _, l := range strings.Split(string(buf[:n]), "\n") {
			if l == "READY=1" {
				return nil
			}
		}
	}
}

// gmtunConfig is what the bed puts into one side's configuration.
type gmtunConfig struct {
	Iface, PrivateKey string
	Port              int
	Address           string
	MTU               int
	Suite             string
	PeerName, PeerPub string
	Endpoint          string
	AllowedIP         string
	// RunToCompletion, if not empty, is written as run_to_completion
	// ("true" or "false").
	RunToCompletion string
}

// TOML renders the configuration in the format of configs/site-a.toml.
func (c gmtunConfig) TOML() (string, error) {
	q := func(s string) string { return tomlString(s) }
	for _, s := range []string{c.Iface, c.PrivateKey, c.Address, c.Suite, c.PeerName, c.PeerPub, c.Endpoint, c.AllowedIP} {
		if !printableASCII(s) {
			return "", fmt.Errorf("tunnelbed: config value %q is not printable ASCII", s)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by bench/tunnelbed for one measurement session.\n\n")
	fmt.Fprintf(&b, "[interface]\n")
	fmt.Fprintf(&b, "name = %s\n", q(c.Iface))
	fmt.Fprintf(&b, "private_key_file = %s\n", q(c.PrivateKey))
	fmt.Fprintf(&b, "listen_port = %d\n", c.Port)
	fmt.Fprintf(&b, "address = [%s]\n", q(c.Address))
	fmt.Fprintf(&b, "mtu = %d\n", c.MTU)
	fmt.Fprintf(&b, "suites = [%s]\n", q(c.Suite))
	fmt.Fprintf(&b, "table = \"auto\"\n")
	if c.RunToCompletion != "" {
		fmt.Fprintf(&b, "run_to_completion = %s\n", c.RunToCompletion)
	}
	fmt.Fprintf(&b, "\n")
	fmt.Fprintf(&b, "[[peer]]\n")
	fmt.Fprintf(&b, "name = %s\n", q(c.PeerName))
	fmt.Fprintf(&b, "public_key = %s\n", q(c.PeerPub))
	fmt.Fprintf(&b, "endpoint = %s\n", q(c.Endpoint))
	fmt.Fprintf(&b, "allowed_ips = [%s]\n", q(c.AllowedIP))
	return b.String(), nil
}

// tomlString quotes printable ASCII s as a TOML basic string.
func tomlString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// firstLine returns the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return "(no output)"
}
