//go:build linux

package main

// End-to-end tests of `gmtun up` and `gmtun show` between network
// namespaces. They need root, /dev/net/tun, iproute2's `ip`, ping and iperf3:
// without them they skip with the reason, and under CI=true they fail
// (internal/testenv), so a green CI run means the daemon really ran. Everything they create lives in namespaces
// named gmtn-<random>-<site>, with underlay addresses from 198.18.0.0/15
// and fd00::/8 and tunnel addresses from 198.19.0.0/24 and fd00:19::/64;
// processes are killed and namespaces deleted in t.Cleanup, also on
// failure. Every wait is bounded.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gmtun/gmtun/internal/testenv"

	"github.com/gmtun/gmtun/control"
)

const (
	nsPort      = 51820
	nsTimeout   = 90 * time.Second // one subtest, start to finish
	readyWait   = 15 * time.Second
	trafficWait = 20 * time.Second
)

// requireNetns skips unless the test can create namespaces and TUN devices.
func requireNetns(t *testing.T) {
	t.Helper()
	testenv.RequireNetns(t, "ping", "iperf3", "go")
}

// syncBuffer collects a daemon's log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lab is one test's set of namespaces and daemons.
type lab struct {
	t     *testing.T
	ctx   context.Context
	bin   string
	dir   string
	id    string
	sites map[string]*site
}

// site is one gateway: a namespace running `gmtun up`.
type site struct {
	lab      *lab
	name     string // "a", "b", "c"
	ns       string
	ifname   string
	dir      string
	pub      string
	inner4   netip.Addr
	inner6   netip.Addr
	under    netip.Addr // underlay address peers use to reach this site
	suites   []string
	peers    []*site
	sockDir  string
	notify   *net.UnixConn
	notified chan string
	proc     *exec.Cmd
	log      *syncBuffer
	done     chan struct{} // closed when proc has exited
	exitErr  error         // proc's exit status, set before done closes
	extra    string        // appended to [interface] by writeConfig
}

func newLab(t *testing.T, bin string) *lab {
	ctx, cancel := context.WithTimeout(context.Background(), nsTimeout)
	t.Cleanup(cancel)
	return &lab{t: t, ctx: ctx, bin: bin, dir: t.TempDir(), id: fmt.Sprintf("%06x", rand.Uint32()>>8), sites: map[string]*site{}}
}

// run runs a command and fails the test if it fails.
func (l *lab) run(args ...string) string {
	l.t.Helper()
	out, err := l.try(args...)
	if err != nil {
		l.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (l *lab) try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(l.ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	return string(out), err
}

// addSite creates namespace gmtn-<id>-<name> with loopback up.
func (l *lab) addSite(name string) *site {
	l.t.Helper()
	n := len(l.sites) + 1
	s := &site{
		lab: l, name: name, ns: "gmtn-" + l.id + "-" + name, ifname: "gmtn" + name,
		dir:     filepath.Join(l.dir, name),
		inner4:  netip.AddrFrom4([4]byte{198, 19, 0, byte(n)}),
		inner6:  netip.MustParseAddr(fmt.Sprintf("fd00:19::%d", n)),
		suites:  []string{"sm4-gcm", "zuc-256", "zuc-128"},
		sockDir: filepath.Join(l.dir, name, "run"),
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		l.t.Fatal(err)
	}
	l.run("ip", "netns", "add", s.ns)
	l.t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", s.ns).CombinedOutput(); err != nil {
			l.t.Errorf("ip netns del %s: %v %s", s.ns, err, out)
		}
	})
	s.exec("ip", "link", "set", "lo", "up")
	key := l.run(l.bin, "genkey")
	if err := os.WriteFile(filepath.Join(s.dir, "key"), []byte(key), 0o600); err != nil {
		l.t.Fatal(err)
	}
	cmd := exec.CommandContext(l.ctx, l.bin, "pubkey")
	cmd.Stdin = strings.NewReader(key)
	pub, err := cmd.Output()
	if err != nil {
		l.t.Fatalf("pubkey: %v", err)
	}
	s.pub = strings.TrimSpace(string(pub))
	l.sites[name] = s
	return s
}

// exec runs a command inside the site's namespace.
func (s *site) exec(args ...string) string {
	s.lab.t.Helper()
	return s.lab.run(append([]string{"ip", "netns", "exec", s.ns}, args...)...)
}

func (s *site) try(args ...string) (string, error) {
	return s.lab.try(append([]string{"ip", "netns", "exec", s.ns}, args...)...)
}

// link connects a and b with a veth pair (a's end is named va<b>, b's end
// vb<a>) on 198.18.<subnet>.0/24 and fd00:18:<subnet>::/64.
func (l *lab) link(a, b *site, subnet int, useV6 bool) (aEnd, bEnd string) {
	l.t.Helper()
	aEnd, bEnd = "v"+a.name+b.name, "v"+b.name+a.name
	l.run("ip", "-n", a.ns, "link", "add", aEnd, "type", "veth", "peer", "name", bEnd, "netns", b.ns)
	for i, end := range []struct {
		s   *site
		dev string
	}{{a, aEnd}, {b, bEnd}} {
		host := i + 1
		l.run("ip", "-n", end.s.ns, "addr", "add", fmt.Sprintf("198.18.%d.%d/24", subnet, host), "dev", end.dev)
		l.run("ip", "-n", end.s.ns, "addr", "add", fmt.Sprintf("fd00:18:%d::%d/64", subnet, host), "dev", end.dev, "nodad")
		l.run("ip", "-n", end.s.ns, "link", "set", end.dev, "up")
	}
	if useV6 {
		a.under = netip.MustParseAddr(fmt.Sprintf("fd00:18:%d::1", subnet))
		b.under = netip.MustParseAddr(fmt.Sprintf("fd00:18:%d::2", subnet))
	} else {
		a.under = netip.AddrFrom4([4]byte{198, 18, byte(subnet), 1})
		b.under = netip.AddrFrom4([4]byte{198, 18, byte(subnet), 2})
	}
	return aEnd, bEnd
}

// writeConfig writes the site's configuration for its current peers.
func (s *site) writeConfig() {
	s.lab.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "[interface]\nname = %q\nprivate_key_file = \"key\"\nlisten_port = %d\n", s.ifname, nsPort)
	fmt.Fprintf(&b, "address = [\"%s/24\", \"%s/64\"]\nlog_level = \"debug\"\n", s.inner4, s.inner6)
	fmt.Fprintf(&b, "suites = [\"%s\"]\n", strings.Join(s.suites, `", "`))
	b.WriteString(s.extra)
	for _, p := range s.peers {
		fmt.Fprintf(&b, "\n[[peer]]\nname = %q\npublic_key = %q\n", p.name, p.pub)
		fmt.Fprintf(&b, "endpoint = %q\n", netip.AddrPortFrom(p.under, nsPort))
		fmt.Fprintf(&b, "allowed_ips = [\"%s/32\", \"%s/128\"]\n", p.inner4, p.inner6)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "gm.toml"), []byte(b.String()), 0o600); err != nil {
		s.lab.t.Fatal(err)
	}
}

// start runs `gmtun up` in the namespace and waits for READY=1.
func (s *site) start() {
	t := s.lab.t
	t.Helper()
	s.writeConfig()
	if s.notify == nil {
		path := filepath.Join(s.dir, "notify")
		c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		s.notify = c
		s.notified = make(chan string, 64)
		go func() {
			buf := make([]byte, 4096)
			for {
				n, err := c.Read(buf)
				if err != nil {
					close(s.notified)
					return
				}
				s.notified <- string(buf[:n])
			}
		}()
		t.Cleanup(func() { c.Close() })
	}
	s.log = new(syncBuffer)
	cmd := exec.Command("ip", "netns", "exec", s.ns, s.lab.bin, "up",
		"--config", filepath.Join(s.dir, "gm.toml"), "--socket-dir", s.sockDir)
	// GOTRACEBACK=all: the SIGQUIT of a failed test's cleanup dumps every
	// goroutine into the log.
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+filepath.Join(s.dir, "notify"), "GOTRACEBACK=all")
	cmd.Stdout, cmd.Stderr = s.log, s.log
	// ip netns exec execs gmtun, which inherits this: if the test
	// process dies, so does the daemon.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	done := make(chan struct{})
	if err := startPinned(cmd, func(err error) { s.exitErr = err; close(done) }); err != nil {
		t.Fatal(err)
	}
	s.proc = cmd
	s.done = done
	log := s.log
	t.Cleanup(func() {
		if t.Failed() {
			s.dumpState(done)
		}
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("log of site %s:\n%s", s.name, log)
		}
	})
	s.waitNotify("READY=1")
}

// startPinned starts cmd from an OS thread that stays reserved for it
// until it exits, then calls exited with cmd.Wait's result. The kernel
// sends the parent-death signal (Pdeathsig) when the *thread* that forked
// the child exits, not the process (go.dev/issue/27505), and the runtime
// ends a thread whenever a goroutine exits while locked to it, as inNS's
// goroutines do: a daemon forked from such a thread was SIGKILLed in the
// middle of a test, silently (no log line, the marker lost both ways, the
// other side's handshake initiation unanswered).
func startPinned(cmd *exec.Cmd, exited func(error)) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited(cmd.Wait())
	}()
	return <-started
}

// state says whether the daemon runs, and how it ended if not.
func (s *site) state() string {
	select {
	case <-s.done:
		return fmt.Sprintf("gmtun has exited: %v", s.exitErr)
	default:
		return "running"
	}
}

// showJSON returns `gmtun show --json` of the running daemon, or the
// error, without failing the test (for diagnostics).
func (s *site) showJSON() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, s.lab.bin, "show", s.ifname, "--json", "--socket-dir", s.sockDir).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(show failed: %v) %s", err, out)
	}
	return string(out)
}

// dumpState logs a failed test's evidence from a still running daemon:
// its status (buffer pool, queues, drops) and, through SIGQUIT, every
// goroutine's stack, which lands in the site's log printed next.
func (s *site) dumpState(done <-chan struct{}) {
	t := s.lab.t
	select {
	case <-done:
		t.Logf("site %s: %s", s.name, s.state())
		return
	default:
	}
	t.Logf("site %s status at cleanup: %s", s.name, s.showJSON())
	s.proc.Process.Signal(syscall.SIGQUIT)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Logf("site %s: no exit 5 s after SIGQUIT", s.name)
	}
}

// waitNotify waits for a notification containing want.
func (s *site) waitNotify(want string) string {
	t := s.lab.t
	t.Helper()
	timer := time.NewTimer(readyWait)
	defer timer.Stop()
	for {
		select {
		case msg, ok := <-s.notified:
			if !ok {
				t.Fatalf("site %s: notify socket closed", s.name)
			}
			if strings.Contains(msg, want) {
				return msg
			}
		case <-s.done:
			// Notifications sent before the exit may still be on
			// their way to the reader.
			grace := time.After(time.Second)
			for {
				select {
				case msg, ok := <-s.notified:
					if ok && strings.Contains(msg, want) {
						return msg
					}
					if ok {
						continue
					}
				case <-grace:
				}
				t.Fatalf("site %s: gmtun exited (%v) before %s:\n%s", s.name, s.exitErr, want, s.log)
			}
		case <-timer.C:
			t.Fatalf("site %s: no %s after %v:\n%s", s.name, want, readyWait, s.log)
		}
	}
}

// stop sends sig and waits for the exit.
func (s *site) stop(sig syscall.Signal) error {
	s.lab.t.Helper()
	s.proc.Process.Signal(sig)
	select {
	case <-s.done:
		return s.exitErr
	case <-time.After(readyWait):
		s.lab.t.Fatalf("site %s: still running %v after %v", s.name, sig, readyWait)
		return nil
	}
}

// reload rewrites the configuration and sends SIGHUP, waiting until the
// daemon reports it is done.
func (s *site) reload() {
	s.lab.t.Helper()
	s.writeConfig()
	s.proc.Process.Signal(syscall.SIGHUP)
	msg := s.waitNotify("RELOADING=1")
	if !strings.Contains(msg, "MONOTONIC_USEC=") {
		s.lab.t.Errorf("RELOADING=1 without MONOTONIC_USEC: %q", msg)
	}
	s.waitNotify("READY=1")
}

// ping pings dst from the site until count replies arrive or the wait ends.
func (s *site) ping(dst netip.Addr, count int) {
	s.lab.t.Helper()
	out, err := s.try("ping", "-n", "-q", "-c", fmt.Sprint(count), "-i", "0.2", "-w", fmt.Sprint(int(trafficWait/time.Second)), dst.String())
	if err != nil {
		s.lab.t.Fatalf("site %s: ping %s: %v\n%s", s.name, dst, err, out)
	}
}

// show runs `gmtun show IFACE --json` for the site.
func (s *site) show() *control.Status {
	s.lab.t.Helper()
	out := s.lab.run(s.lab.bin, "show", s.ifname, "--json", "--socket-dir", s.sockDir)
	var st control.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		s.lab.t.Fatalf("show --json: %v\n%s", err, out)
	}
	return &st
}

// findPeer returns the named peer of st or nil.
func findPeer(st *control.Status, name string) *control.Peer {
	for i := range st.Peers {
		if st.Peers[i].Name == name {
			return &st.Peers[i]
		}
	}
	return nil
}

// pair builds sites a and b connected over the underlay, each with the
// other as its peer, and starts both.
func pair(t *testing.T, bin string, suites []string, v6Underlay bool) (*lab, *site, *site) {
	l := newLab(t, bin)
	a, b := l.addSite("a"), l.addSite("b")
	l.link(a, b, 1, v6Underlay)
	a.peers, b.peers = []*site{b}, []*site{a}
	if suites != nil {
		a.suites, b.suites = suites, suites
	}
	a.start()
	b.start()
	return l, a, b
}

// testBinary returns the gmtun binary the namespace tests run:
// $GMTUN_TEST_BIN if set (a prebuilt daemon, for stress loops or to show
// that a test fails on an older build), else one built from this tree.
func testBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("GMTUN_TEST_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "gmtun")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestNetns(t *testing.T) {
	requireNetns(t)
	bin := testBinary(t)

	for _, suite := range []string{"sm4-gcm", "zuc-256", "zuc-128", "ublock-gcm"} {
		t.Run("suite="+suite, func(t *testing.T) {
			_, a, b := pair(t, bin, []string{suite}, false)
			for _, dst := range []netip.Addr{b.inner4, b.inner6} {
				a.ping(dst, 3)
			}
			for _, dst := range []netip.Addr{a.inner4, a.inner6} {
				b.ping(dst, 3)
			}
			checkShow(t, a, b, suite)
			iperf(t, a, b, b.inner4, 2)
			iperf(t, a, b, b.inner6, 1)
			checkNoPlaintext(t, a, b, "vba")
		})
	}

	t.Run("ipv6-underlay", func(t *testing.T) {
		_, a, b := pair(t, bin, nil, true)
		a.ping(b.inner4, 3)
		b.ping(a.inner6, 3)
		if ep := findPeer(a.show(), "b").Endpoint; ep != netip.AddrPortFrom(b.under, nsPort).String() {
			t.Errorf("endpoint of b is %q, want [%s]:%d", ep, b.under, nsPort)
		}
	})

	t.Run("restart", func(t *testing.T) {
		_, a, b := pair(t, bin, nil, false)
		a.ping(b.inner4, 2)
		before := findPeer(a.show(), "b").LastHandshake
		// kill -9 leaves the control socket behind; the new daemon
		// must find it stale and replace it.
		b.proc.Process.Kill()
		<-b.done
		if _, err := os.Lstat(control.SocketPath(b.sockDir, b.ifname)); err != nil {
			t.Fatalf("kill -9 removed the socket (%v); the stale case is not tested", err)
		}
		b.start()
		b.ping(a.inner4, 3)
		a.ping(b.inner6, 3)
		after := findPeer(a.show(), "b").LastHandshake
		if before == nil || after == nil || !after.After(*before) {
			t.Errorf("no new handshake after the restart: before %v, after %v", before, after)
		}
	})

	t.Run("roaming", func(t *testing.T) {
		_, a, b := pair(t, bin, nil, false)
		a.ping(b.inner4, 2)
		// b moves to a new underlay address; a learns it from b's
		// authenticated packets.
		// (Deleting the old primary address first: deleting it after
		// adding the new one would take the secondary with it.)
		b.exec("ip", "addr", "del", "198.18.1.2/24", "dev", "vba")
		b.exec("ip", "addr", "add", "198.18.1.22/24", "dev", "vba")
		b.ping(a.inner4, 3)
		want := netip.AddrPortFrom(netip.MustParseAddr("198.18.1.22"), nsPort).String()
		if ep := findPeer(a.show(), "b").Endpoint; ep != want {
			t.Errorf("after roaming a reports b at %q, want %q", ep, want)
		}
		a.ping(b.inner6, 3)
	})

	t.Run("sighup", func(t *testing.T) {
		l, a, b := pair(t, bin, nil, false)
		c := l.addSite("c")
		l.link(a, c, 2, false) // a is 198.18.2.1 for c from now on
		a.ping(b.inner4, 2)
		hsB := findPeer(a.show(), "b").LastHandshake

		// Add c to a, start c.
		a.peers = []*site{b, c}
		c.peers = []*site{a}
		a.reload()
		c.start()
		c.ping(a.inner4, 3)
		a.ping(c.inner6, 3)
		st := a.show()
		if findPeer(st, "c") == nil || len(st.Peers) != 2 {
			t.Fatalf("after adding c, a shows %d peers: %+v", len(st.Peers), st.Peers)
		}
		if st.LastReload == nil || st.LastReloadError != "" {
			t.Errorf("last reload %v, error %q", st.LastReload, st.LastReloadError)
		}
		if r := a.exec("ip", "route", "show", c.inner4.String()+"/32"); !strings.Contains(r, "proto 79") {
			t.Errorf("no route to c's allowed IPs: %q", r)
		}

		// Remove c again.
		a.peers = []*site{b}
		a.reload()
		st = a.show()
		if findPeer(st, "c") != nil || len(st.Peers) != 1 {
			t.Errorf("after removing c, a shows %+v", st.Peers)
		}
		if r := a.exec("ip", "route", "show", c.inner4.String()+"/32"); strings.Contains(r, "proto 79") {
			t.Errorf("route to c left behind: %q", r)
		}
		// b's session survived both reloads.
		a.ping(b.inner4, 2)
		if hs := findPeer(a.show(), "b").LastHandshake; hsB == nil || hs == nil || !hs.Equal(*hsB) {
			t.Errorf("b's session was replaced by the reload: handshake %v, before %v", hs, hsB)
		}

		// An invalid file is logged and the running state kept.
		os.WriteFile(filepath.Join(a.dir, "gm.toml"), []byte("[interface]\nmtu = \"big\"\n"), 0o600)
		a.proc.Process.Signal(syscall.SIGHUP)
		a.waitNotify("READY=1")
		st = a.show()
		if st.LastReloadError == "" || len(st.Peers) != 1 {
			t.Errorf("invalid reload: error %q, peers %+v", st.LastReloadError, st.Peers)
		}
		a.ping(b.inner4, 2)
	})

	t.Run("startup-errors", func(t *testing.T) {
		l, a, _ := pair(t, bin, nil, false)
		up := func(cfg string) (string, error) {
			ctx, cancel := context.WithTimeout(l.ctx, readyWait)
			defer cancel()
			out, err := exec.CommandContext(ctx, "ip", "netns", "exec", a.ns, bin, "up", "--config", cfg,
				"--socket-dir", a.sockDir).CombinedOutput()
			return string(out), err
		}
		// The sentence must be the last line; anything before it is
		// debug output (the test runs at log_level debug).
		sentence := func(out string) string {
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			for _, l := range lines[:len(lines)-1] {
				if !strings.Contains(l, " level=DEBUG ") {
					return out
				}
			}
			return lines[len(lines)-1] + "\n"
		}
		exitCode := func(err error) int {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return ee.ExitCode()
			}
			return -1
		}
		// The same interface again: the control socket is taken.
		cfgPath := filepath.Join(a.dir, "gm.toml")
		out, err := up(cfgPath)
		want := "gmtun: up: cannot create the control socket: control: " + control.SocketPath(a.sockDir, a.ifname) +
			" is in use: another gmtun is running for this interface\n"
		if exitCode(err) != exitFailure || sentence(out) != want {
			t.Errorf("second daemon for %s: %v\n%q\nwant %q", a.ifname, err, out, want)
		}
		// Another interface on the same UDP port.
		b, _ := os.ReadFile(cfgPath)
		other := filepath.Join(a.dir, "other.toml")
		os.WriteFile(other, bytes.Replace(b, []byte(`name = "`+a.ifname+`"`), []byte(`name = "gmtnx"`), 1), 0o600)
		out, err = up(other)
		want = fmt.Sprintf("gmtun: up: cannot listen on UDP port %d: the port is in use\n", nsPort)
		if exitCode(err) != exitFailure || sentence(out) != want {
			t.Errorf("second daemon on port %d: %v\n%q\nwant %q", nsPort, err, out, want)
		}
		if _, err := a.try("ip", "link", "show", "gmtnx"); err == nil {
			t.Error("the failed daemon left its interface behind")
		}
		// An interface that exists but is not gmtun's.
		a.exec("ip", "link", "add", "gmtnx", "type", "veth", "peer", "name", "gmtny")
		os.WriteFile(other, bytes.Replace(b, []byte(`name = "`+a.ifname+`"`), []byte(`name = "gmtnx"`), 1), 0o600)
		out, err = up(other)
		want = "gmtun: up: cannot create TUN interface gmtnx: an interface with that name already exists\n"
		if exitCode(err) != exitFailure || sentence(out) != want {
			t.Errorf("existing interface: %v\n%q\nwant %q", err, out, want)
		}
		// The running daemon is unharmed.
		a.ping(a.peers[0].inner4, 1)
	})

	t.Run("shutdown", func(t *testing.T) {
		_, a, b := pair(t, bin, nil, false)
		a.ping(b.inner4, 1)
		if !strings.Contains(a.log.String(), "; suites sm4-gcm, zuc-256, zuc-128; kernels ") {
			t.Errorf("no startup line with suites and kernels:\n%s", a.log)
		}
		if err := a.stop(syscall.SIGTERM); err != nil {
			t.Errorf("SIGTERM: exit %v, want 0", err)
		}
		a.waitNotify("STOPPING=1")
		if _, err := os.Lstat(control.SocketPath(a.sockDir, a.ifname)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("control socket left behind: %v", err)
		}
		if out, err := a.try("ip", "link", "show", a.ifname); err == nil {
			t.Errorf("interface still exists after shutdown:\n%s", out)
		}
		out, err := a.lab.try(a.lab.bin, "show", a.ifname, "--socket-dir", a.sockDir)
		if err == nil || !strings.Contains(out, "is not running") {
			t.Errorf("show after shutdown: %v %s", err, out)
		}
	})
}

// checkShow verifies a's `show --json` after traffic with b.
func checkShow(t *testing.T, a, b *site, suite string) {
	t.Helper()
	st := a.show()
	if st.Interface != a.ifname || st.PublicKey != a.pub || st.ListenPort != nsPort {
		t.Errorf("show: interface %q key %q port %d", st.Interface, st.PublicKey, st.ListenPort)
	}
	if len(st.Suites) != 1 || st.Suites[0] != suite {
		t.Errorf("show: suites %q, want [%s]", st.Suites, suite)
	}
	if _, ok := st.Drops["auth_failed"]; !ok {
		t.Errorf("show: drops lack auth_failed: %v", st.Drops)
	}
	for _, k := range st.Kernels {
		if k.Selected == "" || len(k.Available) == 0 {
			t.Errorf("show: kernel %+v", k)
		}
	}
	p := findPeer(st, "b")
	if p == nil {
		t.Fatalf("show: no peer b in %+v", st.Peers)
	}
	if p.PublicKey != b.pub || p.Suite != suite || p.RxBytes == 0 || p.TxBytes == 0 || p.LastHandshake == nil {
		t.Errorf("show: peer %+v", *p)
	}
	if p.LastHandshake != nil && time.Since(*p.LastHandshake) > time.Minute {
		t.Errorf("show: last handshake %v is not recent", p.LastHandshake)
	}
	if want := netip.AddrPortFrom(b.under, nsPort).String(); p.Endpoint != want {
		t.Errorf("show: endpoint %q, want %q", p.Endpoint, want)
	}
	want := []string{b.inner4.String() + "/32", b.inner6.String() + "/128"}
	if strings.Join(p.AllowedIPs, " ") != strings.Join(want, " ") {
		t.Errorf("show: allowed ips %q, want %q", p.AllowedIPs, want)
	}
	text := a.lab.run(a.lab.bin, "show", "--socket-dir", a.sockDir)
	for _, w := range []string{"interface: " + a.ifname, "peer: b", "suite: " + suite, "latest handshake: "} {
		if !strings.Contains(text, w) {
			t.Errorf("show text lacks %q:\n%s", w, text)
		}
	}
}

// iperf runs a bounded iperf3 test from a to dst (served in b).
func iperf(t *testing.T, a, b *site, dst netip.Addr, secs int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(a.lab.ctx, time.Duration(secs+20)*time.Second)
	defer cancel()
	srv := exec.CommandContext(ctx, "ip", "netns", "exec", b.ns, "iperf3", "-s", "-1", "-B", dst.String())
	var srvOut syncBuffer
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	var res struct {
		Error string `json:"error"`
		End   struct {
			SumReceived struct {
				Bytes         float64 `json:"bytes"`
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	var out []byte
	var err error
	for try := 0; ; try++ {
		// iperf3 -J reports errors in JSON, with exit status 0 on some
		// versions.
		out, err = exec.CommandContext(ctx, "ip", "netns", "exec", a.ns, "iperf3", "-c", dst.String(),
			"-t", fmt.Sprint(secs), "-J").Output()
		res.Error = ""
		if jerr := json.Unmarshal(out, &res); jerr != nil && err == nil {
			err = jerr
		}
		if res.Error != "" && err == nil {
			err = errors.New(res.Error)
		}
		if err == nil || try == 50 || !strings.Contains(res.Error, "refused") {
			break
		}
		time.Sleep(100 * time.Millisecond) // the server is not listening yet
	}
	if err != nil {
		t.Fatalf("iperf3 to %s: %v\n%s\nserver: %s", dst, err, out, &srvOut)
	}
	if res.End.SumReceived.Bytes == 0 {
		t.Errorf("iperf3 to %s moved no data:\n%s", dst, out)
	}
	t.Logf("iperf3 %s → %s: %.0f Mbit/s", a.name, dst, res.End.SumReceived.BitsPerSecond/1e6)
}

// inNS runs f on a locked OS thread inside the named namespace; sockets f
// creates stay in that namespace. The thread is never unlocked, so the
// runtime discards it afterwards.
func inNS(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// startCapture records every frame on interface dev of namespace ns (an
// AF_PACKET socket: no tcpdump needed) until the returned function is
// called; that function returns the frames.
func startCapture(t *testing.T, ns, dev string) (stop func() [][]byte) {
	t.Helper()
	var capFD int
	err := inNS(ns, func() error {
		ifi, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		capFD, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		tv := unix.Timeval{Usec: 50000}
		if err := unix.SetsockoptTimeval(capFD, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return err
		}
		return unix.Bind(capFD, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index})
	})
	if err != nil {
		t.Fatalf("capture socket on %s: %v", dev, err)
	}
	var frames [][]byte
	quit := make(chan struct{})
	captured := make(chan struct{})
	go func() {
		defer close(captured)
		defer unix.Close(capFD)
		buf := make([]byte, 65536)
		for {
			select {
			case <-quit:
				return
			default:
			}
			n, _, err := unix.Recvfrom(capFD, buf, 0)
			if err == nil && n > 0 && len(frames) < 100000 {
				frames = append(frames, bytes.Clone(buf[:n]))
			}
		}
	}()
	return func() [][]byte {
		time.Sleep(200 * time.Millisecond) // let the capture drain
		close(quit)
		<-captured
		return frames
	}
}

// checkNoPlaintext sends a UDP datagram with a unique marker from a to b
// (and one back) through the tunnel while capturing every frame on b's
// underlay interface dev: the marker must reach the listener, and never
// appear on the wire.
func checkNoPlaintext(t *testing.T, a, b *site, dev string) {
	t.Helper()
	marker := fmt.Appendf(nil, "GMTUN-PLAINTEXT-MARKER-%016x", rand.Uint64())

	stopCapture := startCapture(t, b.ns, dev)

	var lnB, lnA *net.UDPConn
	if err := inNS(b.ns, func() (err error) {
		lnB, err = net.ListenUDP("udp", &net.UDPAddr{IP: b.inner4.AsSlice(), Port: 9999})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer lnB.Close()
	if err := inNS(a.ns, func() (err error) {
		lnA, err = net.ListenUDP("udp", &net.UDPAddr{IP: a.inner4.AsSlice(), Port: 9999})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer lnA.Close()

	// Positive control: the same kind of datagram sent in the clear on
	// the underlay must show up in the capture.
	clear := fmt.Appendf(nil, "GMTUN-CLEAR-CONTROL-%016x", rand.Uint64())
	if err := inNS(a.ns, func() error {
		c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: b.under.AsSlice(), Port: 9})
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write(clear)
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// a → b and b → a, each carrying the marker.
	if _, err := lnA.WriteToUDP(marker, &net.UDPAddr{IP: b.inner4.AsSlice(), Port: 9999}); err != nil {
		t.Fatal(err)
	}
	if _, err := lnB.WriteToUDP(marker, &net.UDPAddr{IP: a.inner4.AsSlice(), Port: 9999}); err != nil {
		t.Fatal(err)
	}
	for _, ln := range []*net.UDPConn{lnB, lnA} {
		ln.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 2048)
		n, _, err := ln.ReadFromUDP(buf)
		if err != nil || !bytes.Equal(buf[:n], marker) {
			t.Errorf("marker not delivered through the tunnel to %v: %v %q", ln.LocalAddr(), err, buf[:n])
			for _, s := range []*site{a, b} {
				t.Logf("site %s (%s) status after the loss: %s", s.name, s.state(), s.showJSON())
			}
		}
	}
	frames := stopCapture()

	tunnelFrames, clearSeen := 0, false
	for _, f := range frames {
		clearSeen = clearSeen || bytes.Contains(f, clear)
		if bytes.Contains(f, marker) {
			t.Errorf("the plaintext marker appeared on %s in a %d-byte frame", dev, len(f))
		}
		// Ethernet + IPv4 + UDP to or from the gmtun port.
		if len(f) >= 14+20+8 && binary.BigEndian.Uint16(f[12:]) == 0x0800 && f[14+9] == unix.IPPROTO_UDP {
			udp := f[14+int(f[14]&0xf)*4:]
			if binary.BigEndian.Uint16(udp[0:]) == nsPort || binary.BigEndian.Uint16(udp[2:]) == nsPort {
				if len(udp)-8 >= len(marker) {
					tunnelFrames++
				}
			}
		}
	}
	if !clearSeen {
		t.Errorf("the capture on %s missed a datagram sent in the clear (%d frames); it cannot prove anything", dev, len(frames))
	}
	if tunnelFrames < 2 {
		t.Errorf("captured %d tunnel datagrams large enough to carry the marker on %s (of %d frames); the capture saw nothing", tunnelFrames, dev, len(frames))
	}
}

// TestStartPinnedSurvivesDiscardedThreads: a child started with
// Pdeathsig by startPinned outlives threads the test process discards
// (goroutines that exit while locked to their thread, like inNS's). A
// plain cmd.Start from an arbitrary goroutine gets SIGKILLed when its
// forking thread is the one discarded: the cause of daemons dying
// silently in the middle of TestNetns.
func TestStartPinnedSurvivesDiscardedThreads(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("needs sleep(1)")
	}
	cmd := exec.Command(sleep, "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	done := make(chan struct{})
	var exitErr error
	if err := startPinned(cmd, func(err error) { exitErr = err; close(done) }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	for range 200 {
		discarded := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			close(discarded)
		}()
		<-discarded
		runtime.Gosched()
	}
	select {
	case <-done:
		t.Fatalf("the child died while the test discarded threads: %v", exitErr)
	case <-time.After(200 * time.Millisecond):
	}
}
