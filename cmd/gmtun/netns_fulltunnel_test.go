//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gmtun/gmtun/control"
	"github.com/gmtun/gmtun/tunnel/iface"
)

// TestNetnsFullTunnel: site a sends everything (0.0.0.0/0, ::/0) to b,
// out of the box (table = "auto"): a ping to an address beyond b goes
// through the tunnel, while the tunnel's own UDP packets to b's endpoint —
// which a reaches only through its default route, the very route the full
// tunnel replaces — still take the underlay (the fwmark). mtu = "auto"
// follows the underlay's MTU; the hooks run in order with %i. A link flap
// fails closed (nothing for the remote side leaves in clear), the routes
// come back, and a clean stop leaves no rule, route or table behind.
func TestNetnsFullTunnel(t *testing.T) {
	requireNetns(t)
	bin := testBinary(t)
	l := newLab(t, bin)
	a, b := l.addSite("a"), l.addSite("b")
	l.link(a, b, 1, false)
	a.peers, b.peers = []*site{b}, []*site{a}

	beyond4, beyond6 := netip.MustParseAddr("198.19.99.1"), netip.MustParseAddr("fd00:99::1")
	b.exec("ip", "addr", "add", beyond4.String()+"/32", "dev", "lo")
	b.exec("ip", "addr", "add", beyond6.String()+"/128", "dev", "lo")
	// b's endpoint for a: an address a reaches only by its default route.
	b.exec("ip", "addr", "add", "198.18.200.2/32", "dev", "lo")
	b.under = netip.MustParseAddr("198.18.200.2")
	a.exec("ip", "route", "add", "default", "via", "198.18.1.2", "dev", "vab")
	a.exec("ip", "-6", "route", "add", "default", "via", "fd00:18:1::2", "dev", "vab")
	a.exec("ip", "link", "set", "vab", "mtu", "1400")
	b.exec("ip", "link", "set", "vba", "mtu", "1400")
	b.start()

	// a's configuration: b takes everything; hooks record their runs.
	a.writeConfig()
	text, err := os.ReadFile(filepath.Join(a.dir, "gm.toml"))
	if err != nil {
		t.Fatal(err)
	}
	hookLog := filepath.Join(a.dir, "hooks.log")
	var hooks strings.Builder
	for _, k := range []string{"pre_up", "post_up", "pre_down", "post_down"} {
		fmt.Fprintf(&hooks, "%s = [[\"/bin/sh\", \"-c\", \"echo %s %%i >> '%s'\"]]\n", k, k, hookLog)
	}
	wantAllowed := fmt.Sprintf("allowed_ips = [\"%s/32\", \"%s/128\"]\n", b.inner4, b.inner6)
	if !bytes.Contains(text, []byte(wantAllowed)) {
		t.Fatalf("a's configuration has no line %q:\n%s", wantAllowed, text)
	}
	text = bytes.Replace(text, []byte(wantAllowed), []byte("allowed_ips = [\"0.0.0.0/0\", \"::/0\"]\nroaming = false\n"), 1)
	text = bytes.Replace(text, []byte("[interface]\n"), []byte("[interface]\nmtu = \"auto\"\n"+hooks.String()), 1)
	cfgPath := filepath.Join(a.dir, "full.toml")
	if err := os.WriteFile(cfgPath, text, 0o600); err != nil {
		t.Fatal(err)
	}
	log := new(syncBuffer)
	cmd := exec.Command("ip", "netns", "exec", a.ns, bin, "up", "--config", cfgPath, "--socket-dir", a.sockDir)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	done := make(chan struct{})
	if err := startPinned(cmd, func(error) { close(done) }); err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(readyWait):
				cmd.Process.Kill()
				<-done
			}
		}
		if t.Failed() {
			t.Logf("log of a (full tunnel):\n%s", log)
			out, _ := a.try("ip", "rule", "show")
			t.Logf("ip rule show:\n%s", out)
		}
	})
	hooksRun := func() string {
		b, _ := os.ReadFile(hookLog)
		return string(b)
	}
	// post_up runs just before READY=1: its line is the readiness signal.
	for deadline := time.Now().Add(readyWait); !strings.Contains(hooksRun(), "post_up"); time.Sleep(50 * time.Millisecond) {
		select {
		case <-done:
			t.Fatalf("a exited during start:\n%s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("a not up within %v (hooks: %q)\n%s", readyWait, hooksRun(), log)
		}
	}
	if got, want := hooksRun(), "pre_up gmtna\npost_up gmtna\n"; got != want {
		t.Errorf("hooks after start: %q, want %q", got, want)
	}

	table := iface.FullTunnelTable(a.ifname)
	tbl := fmt.Sprint(table)
	for _, fam := range []string{"-4", "-6"} {
		rules := a.exec("ip", fam, "rule", "show")
		if !strings.Contains(rules, "lookup main suppress_prefixlength 0") ||
			!strings.Contains(rules, fmt.Sprintf("not from all fwmark %#x lookup %d", table, table)) {
			t.Errorf("ip %s rule show lacks the full-tunnel rules of table %d:\n%s", fam, table, rules)
		}
		if out := a.exec("ip", fam, "route", "show", "table", tbl); !strings.Contains(out, "default dev "+a.ifname) ||
			!strings.Contains(out, "unreachable default") {
			t.Errorf("ip %s route show table %d: want the default route and its fail-closed twin:\n%s", fam, table, out)
		}
	}
	// mtu = "auto": the route to b's endpoint leaves by vab (MTU 1400):
	// 1400 - 20 (IPv4) - 40.
	if out := a.exec("ip", "link", "show", a.ifname); !strings.Contains(out, " mtu 1340 ") {
		t.Errorf("mtu auto: want 1340 on %s:\n%s", a.ifname, out)
	}

	// Through the tunnel, to addresses beyond b.
	a.ping(beyond4, 3)
	a.ping(beyond6, 3)
	a.ping(b.inner4, 1)
	if out := a.exec("ip", "route", "get", beyond4.String()); !strings.Contains(out, "dev "+a.ifname) {
		t.Errorf("ip route get %s does not go through the tunnel: %q", beyond4, out)
	}
	// The underlay: the marked route to b's endpoint is the default route
	// via vab, and the directly connected underlay still answers.
	if out := a.exec("ip", "route", "get", b.under.String(), "mark", tbl); !strings.Contains(out, "via 198.18.1.2 dev vab") {
		t.Errorf("ip route get %s mark %d: %q, want via the underlay", b.under, table, out)
	}
	a.ping(netip.MustParseAddr("198.18.1.2"), 1)
	a.ping(netip.MustParseAddr("fd00:18:1::2"), 1)
	if st := peerEndpoint(t, bin, a); st != netip.AddrPortFrom(b.under, nsPort).String() {
		t.Errorf("a's endpoint for b is %q, want the pinned %v", st, netip.AddrPortFrom(b.under, nsPort))
	}

	// Link flap: while the tunnel's routes are gone, nothing for beyond b
	// leaves in clear; they come back within a second of the link.
	a.exec("ip", "link", "set", a.ifname, "down")
	if out := a.exec("ip", "route", "show", "table", tbl); strings.Contains(out, "default dev "+a.ifname) {
		t.Fatalf("link down but the default route into it is still in table %d: %q", table, out)
	}
	if out, _ := a.try("ip", "route", "get", beyond4.String()); !strings.Contains(out, "unreachable") && !strings.Contains(out, "No route to host") {
		t.Errorf("link down: ip route get %s = %q, want unreachable (fail closed)", beyond4, out)
	}
	stop := startCapture(t, b.ns, "vba")
	marker := fmt.Appendf(nil, "GMTUN-FULL-TUNNEL-LEAK-%016x", rand.Uint64())
	for range 20 {
		sendFrom(a.ns, beyond4, marker)
		sendFrom(a.ns, beyond6, marker)
		time.Sleep(20 * time.Millisecond)
	}
	n := 0
	for _, f := range stop() {
		if bytes.Contains(f, marker) || carriesDst(f, beyond4) || carriesDst(f, beyond6) {
			n++
		}
	}
	if n != 0 {
		t.Errorf("link down: %d packets for addresses beyond b left a in clear", n)
	}
	a.exec("ip", "link", "set", a.ifname, "up")
	for since := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		out4 := a.exec("ip", "-4", "route", "show", "table", tbl)
		out6 := a.exec("ip", "-6", "route", "show", "table", tbl)
		if strings.Contains(out4, "default dev "+a.ifname) && strings.Contains(out6, "default dev "+a.ifname) {
			t.Logf("full-tunnel routes restored in %v", time.Since(since).Round(time.Millisecond))
			break
		}
		if time.Since(since) > 2*time.Second {
			t.Fatalf("full-tunnel routes not restored within 2 s:\n%s\n%s", out4, out6)
		}
	}
	a.ping(beyond4, 2)
	a.ping(beyond6, 2)

	// A clean stop: the down hooks run, and no rule, route or unreachable
	// route of the full tunnel is left.
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		stopped = true
	case <-time.After(readyWait):
		t.Fatalf("a did not stop within %v", readyWait)
	}
	if got, want := hooksRun(), "pre_up gmtna\npost_up gmtna\npre_down gmtna\npost_down gmtna\n"; got != want {
		t.Errorf("hooks after stop: %q, want %q", got, want)
	}
	for _, fam := range []string{"-4", "-6"} {
		if rules := a.exec("ip", fam, "rule", "show"); strings.Contains(rules, "suppress_prefixlength") || strings.Contains(rules, "lookup "+tbl) {
			t.Errorf("after a clean stop ip %s rule show still has full-tunnel rules:\n%s", fam, rules)
		}
		if out := strings.TrimSpace(a.exec("ip", fam, "route", "show", "table", tbl)); out != "" {
			t.Errorf("after a clean stop table %d still holds %q", table, out)
		}
	}
}

// peerEndpoint returns the endpoint a's daemon shows for its first peer.
func peerEndpoint(t *testing.T, bin string, s *site) string {
	t.Helper()
	for deadline := time.Now().Add(readyWait); ; time.Sleep(100 * time.Millisecond) {
		out, err := s.lab.try(bin, "show", s.ifname, "--json", "--socket-dir", s.sockDir)
		var st control.Status
		if err == nil && json.Unmarshal([]byte(out), &st) == nil && len(st.Peers) > 0 && st.Peers[0].Endpoint != "" {
			return st.Peers[0].Endpoint
		}
		if time.Now().After(deadline) {
			t.Fatalf("gmtun show %s: %v\n%s", s.ifname, err, out)
		}
	}
}
