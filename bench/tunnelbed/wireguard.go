//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// wireguardGoModule and wireguardGoVersion pin the wireguard-go build that
// is measured: the version required by this repository's go.mod (checked
// by a test), built from the Go module proxy.
const (
	wireguardGoModule  = "golang.zx2c4.com/wireguard"
	wireguardGoVersion = "v0.0.0-20260522210424-ecfc5a8d5446"
)

// wireguardPort is the UDP port of both wireguard-go endpoints.
const wireguardPort = 51820

// wireguardGo is the reference peer: wireguard-go in foreground mode,
// configured with wg(8) and ip(8). It uses its TUN offloads (IFF_VNET_HDR
// with TSO, and USO on Linux ≥ 6.2) by default; Start verifies that the
// interface really carries a virtio-net header.
type wireguardGo struct {
	// bin is the wireguard-go binary (named "wireguard" by go install).
	bin string
	// keys[i] and pubs[i] are side i's private key file and public key.
	keys [2]string
	pubs [2]string
}

// Name implements Tunnel.
func (w *wireguardGo) Name() string { return "wireguard-go" }

// buildWireguardGo installs the pinned wireguard-go into dir with
// `go install` and returns the binary's path.
func buildWireguardGo(ctx context.Context, goBin, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "install", wireguardGoModule+"@"+wireguardGoVersion)
	cmd.Dir = dir // outside any module: the version comes from the proxy, not from a go.mod
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("tunnelbed: go install %s@%s: %w: %s", wireguardGoModule, wireguardGoVersion, err, strings.TrimSpace(string(out)))
	}
	return filepath.Join(dir, "wireguard"), nil
}

// Prepare implements Tunnel: it checks the binary and wg(8) and creates a
// key pair per side with `wg genkey` / `wg pubkey`.
func (w *wireguardGo) Prepare(ctx context.Context, bed *Bed, dir string) error {
	if _, err := os.Stat(w.bin); err != nil {
		return fmt.Errorf("tunnelbed: wireguard-go binary: %w", err)
	}
	if _, err := exec.LookPath("wg"); err != nil {
		return errors.New("tunnelbed: wg (wireguard-tools) is not installed")
	}
	for i, side := range []string{"a", "b"} {
		priv, pub, err := genKeyPair(ctx, []string{"wg", "genkey"}, []string{"wg", "pubkey"})
		if err != nil {
			return err
		}
		w.keys[i] = filepath.Join(dir, "wg-"+side+".key")
		if err := os.WriteFile(w.keys[i], priv, 0o600); err != nil {
			return fmt.Errorf("tunnelbed: %w", err)
		}
		w.pubs[i] = pub
	}
	return nil
}

// Start implements Tunnel: wireguard-go -f in each namespace, then
// `wg set` (key, port, peer) and `ip` (address, MTU, up).
func (w *wireguardGo) Start(ctx context.Context, bed *Bed) (_ *Session, err error) {
	s := &Session{}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Stop())
		}
	}()
	sides := []struct {
		ns, iface       string
		addr            string
		peerUnder, peer string
	}{
		{bed.NSA, bed.IfaceName("a"), innerA.String(), underlayB.Addr().String(), innerB.Addr().String() + "/32"},
		{bed.NSB, bed.IfaceName("b"), innerB.String(), underlayA.Addr().String(), innerA.Addr().String() + "/32"},
	}
	for _, sd := range sides {
		d, err := StartDaemon(bed, "wireguard-go "+sd.iface, sd.ns,
			[]string{"WG_PROCESS_FOREGROUND=1", "LOG_LEVEL=error"}, w.bin, "-f", sd.iface)
		if err != nil {
			return nil, err
		}
		s.Daemons = append(s.Daemons, d)
	}
	for i, sd := range sides {
		// The UAPI socket appears once the device is created.
		if err := waitFile(ctx, s, "/var/run/wireguard/"+sd.iface+".sock", 10*time.Second); err != nil {
			return nil, err
		}
		if _, err := bed.Output(ctx, sd.ns, "wg", "set", sd.iface,
			"private-key", w.keys[i], "listen-port", strconv.Itoa(wireguardPort),
			"peer", w.pubs[1-i], "endpoint", sd.peerUnder+":"+strconv.Itoa(wireguardPort),
			"allowed-ips", sd.peer); err != nil {
			return nil, err
		}
		for _, argv := range [][]string{
			{"ip", "addr", "add", sd.addr, "dev", sd.iface},
			{"ip", "link", "set", "dev", sd.iface, "mtu", strconv.Itoa(innerMTU), "up"},
		} {
			if _, err := bed.Output(ctx, sd.ns, argv...); err != nil {
				return nil, err
			}
		}
		if err := waitInterface(ctx, bed, s, sd.ns, sd.iface, 10*time.Second); err != nil {
			return nil, err
		}
		vnet, notes := offloadNotes(ctx, bed, sd.ns, sd.iface)
		if !vnet {
			return nil, fmt.Errorf("tunnelbed: wireguard-go on %s runs without TUN offloads (no vnet_hdr): numbers would not be representative", sd.iface)
		}
		s.Notes = append(s.Notes, notes...)
	}
	return s, nil
}

// waitFile polls until path exists, a daemon of s exits, or timeout passes.
func waitFile(ctx context.Context, s *Session, path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if err := s.Exited(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tunnelbed: %s did not appear within %v", path, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// genKeyPair runs genArgv for a private key and feeds it to pubArgv,
// returning the private key (with its newline) and the public key.
func genKeyPair(ctx context.Context, genArgv, pubArgv []string) (priv []byte, pub string, err error) {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	priv, err = exec.CommandContext(ctx, genArgv[0], genArgv[1:]...).Output()
	if err != nil {
		return nil, "", fmt.Errorf("tunnelbed: %s: %w%s", strings.Join(genArgv, " "), err, stderrOf(err))
	}
	cmd := exec.CommandContext(ctx, pubArgv[0], pubArgv[1:]...)
	cmd.Stdin = strings.NewReader(string(priv))
	out, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("tunnelbed: %s: %w%s", strings.Join(pubArgv, " "), err, stderrOf(err))
	}
	pub = strings.TrimSpace(string(out))
	if pub == "" || strings.ContainsAny(pub, " \n") {
		return nil, "", fmt.Errorf("tunnelbed: %s printed %q, not one public key", strings.Join(pubArgv, " "), pub)
	}
	return priv, pub, nil
}

// stderrOf returns ": STDERR" for an *exec.ExitError that captured
// standard error, and "" otherwise.
func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
