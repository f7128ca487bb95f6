package main

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/internal/testenv"
)

func TestHookRunsInOrderWithName(t *testing.T) {
	testenv.RequireTools(t, "sh")
	out := filepath.Join(t.TempDir(), "out")
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	err := runHooks(logf, "post_up", "gm7", [][]string{
		{"/bin/sh", "-c", `echo "one %i $GMTUN_INTERFACE" >> "$0"`, out},
		{"/bin/sh", "-c", `echo two >> "$0"; echo said-two`, out},
	}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if string(b) != "one gm7 gm7\ntwo\n" {
		t.Errorf("hooks wrote %q, want both in order with %%i and GMTUN_INTERFACE replaced", b)
	}
	if len(logged) != 2 || !strings.HasPrefix(logged[1], "post_up: ran /bin/sh -c") || !strings.HasSuffix(logged[1], ": said-two") {
		t.Errorf("logged %q", logged)
	}
}

func TestHookFailureStops(t *testing.T) {
	testenv.RequireTools(t, "sh")
	out := filepath.Join(t.TempDir(), "out")
	err := runHooks(func(string, ...any) {}, "pre_up", "gm0", [][]string{
		{"/bin/sh", "-c", "echo 'nft: no such table' >&2; exit 3"},
		{"/bin/sh", "-c", `echo ran >> "$0"`, out},
	}, 5*time.Second)
	want := "pre_up command 1 (/bin/sh) failed: exit status 3: nft: no such table"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the command after a failed one ran")
	}
	err = runHooks(func(string, ...any) {}, "pre_up", "gm0", [][]string{{"/nonexistent/prog"}}, time.Second)
	if err == nil || !strings.HasPrefix(err.Error(), "pre_up command 1 (/nonexistent/prog) failed: ") {
		t.Errorf("missing program: %v", err)
	}
}

func TestHookTimeoutKillsGroup(t *testing.T) {
	testenv.RequireTools(t, "sh", "sleep")
	start := time.Now()
	// The shell's child sleep must die too, or Run would wait for its
	// output pipe.
	err := runHooks(func(string, ...any) {}, "pre_down", "gm0", [][]string{{"/bin/sh", "-c", "sleep 30; true"}}, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not finish within 300ms and was killed") {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %v", d)
	}
}

// TestHookPreUpFailureAbortsStart: gmtun up with a failing pre_up stops
// with one sentence, exit code 1, before creating anything (no root
// needed: pre_up runs before the TUN device is opened).
func TestHookPreUpFailureAbortsStart(t *testing.T) {
	testenv.RequireTools(t, "sh")
	dir := t.TempDir()
	key := gmtun("genkey").stdout
	peer := invocation{stdin: invocation{rand: &seedReader{next: 50}}.run("genkey").stdout}.run("pubkey").stdout
	if err := os.WriteFile(filepath.Join(dir, "k"), []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "post_up-ran")
	cfg := fmt.Sprintf(`[interface]
name = "gmtnhook"
private_key_file = "k"
listen_port = 51999
pre_up = [["/bin/sh", "-c", "echo firewall not ready >&2; exit 7"]]
post_up = [["/bin/sh", "-c", "touch %s"]]

[[peer]]
name = "b"
public_key = %q
endpoint = "198.18.0.2:51999"
allowed_ips = ["198.19.0.2/32"]
`, marker, strings.TrimSpace(peer))
	path := filepath.Join(dir, "gmtnhook.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "run")
	if err := os.Mkdir(sock, 0o700); err != nil {
		t.Fatal(err)
	}
	r := gmtun("up", "--config", path, "--socket-dir", sock)
	if r.code != exitFailure {
		t.Errorf("exit code %d, want %d", r.code, exitFailure)
	}
	var errLines []string
	for l := range strings.Lines(r.stderr) {
		if strings.HasPrefix(l, "gmtun: ") {
			errLines = append(errLines, strings.TrimSpace(l))
		}
	}
	want := "gmtun: up: pre_up command 1 (/bin/sh) failed: exit status 7: firewall not ready; not starting"
	if len(errLines) != 1 || errLines[0] != want {
		t.Errorf("stderr lines %q, want one: %q\nstderr:\n%s", errLines, want, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("post_up ran after pre_up failed")
	}
}

func TestMtuAuto(t *testing.T) {
	ep := func(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
	cfg := &config.Config{Peers: []config.Peer{
		{Name: "v4", Endpoint: ep("198.18.0.2:51900")},
		{Name: "v6", Endpoint: ep("[fd00::2]:51900")},
		{Name: "none"},
	}}
	paths := map[netip.Addr]int{
		netip.MustParseAddr("198.18.0.2"): 1500, // → 1440
		netip.MustParseAddr("fd00::2"):    1480, // → 1400, the smallest
		{}:                                9000,
	}
	var asked []netip.Addr
	lookup := func(a netip.Addr) (int, error) {
		asked = append(asked, a)
		if m, ok := paths[a]; ok {
			return m, nil
		}
		return 0, fmt.Errorf("no route to %v", a)
	}
	if mtu, how := autoMTU(cfg, lookup); mtu != 1400 || !strings.Contains(how, "peer v6") {
		t.Errorf("autoMTU = %d (%s), want 1400 from peer v6", mtu, how)
	}
	if len(asked) != 2 {
		t.Errorf("looked up %v; the peer without an endpoint needs no lookup", asked)
	}
	// An IPv4-mapped endpoint counts as IPv4.
	cfg.Peers = []config.Peer{{Name: "m", Endpoint: ep("[::ffff:198.18.0.2]:1")}}
	if mtu, _ := autoMTU(cfg, lookup); mtu != 1440 {
		t.Errorf("mapped IPv4 endpoint: %d, want 1440", mtu)
	}
	// No endpoint route: the default route's device, with the IPv6 header.
	cfg.Peers = []config.Peer{{Name: "x", Endpoint: ep("198.18.9.9:1")}}
	if mtu, how := autoMTU(cfg, lookup); mtu != 9000-80 || !strings.Contains(how, "default route") {
		t.Errorf("fallback: %d (%s), want %d", mtu, how, 9000-80)
	}
	// Nothing at all: the default MTU.
	delete(paths, netip.Addr{})
	if mtu, _ := autoMTU(cfg, lookup); mtu != config.DefaultMTU {
		t.Errorf("no routes: %d, want %d", mtu, config.DefaultMTU)
	}
}
