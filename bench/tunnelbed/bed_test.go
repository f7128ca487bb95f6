//go:build linux

package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/internal/testenv"
)

// fakeGmtunEnv makes the test binary act as a stand-in gmtun (see
// fakeGmtun), so that the gmtun hooks can be exercised before the real
// `gmtun up` exists.
const fakeGmtunEnv = "TUNNELBED_FAKE_GMTUN"

func TestMain(m *testing.M) {
	if os.Getenv(fakeGmtunEnv) == "1" {
		os.Exit(fakeGmtun(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeGmtun implements the parts of gmtun's command line the bed uses:
// genkey, pubkey and check as gmtun does them, and an `up` that validates
// the configuration, creates the TUN interface with its address and MTU,
// sends READY=1 and removes the interface on SIGTERM. It moves no packets.
func fakeGmtun(args []string) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(os.Stderr, "gmtun:", err)
		return code
	}
	cfgArg := func() string {
		for i, a := range args {
			if (a == "--config" || a == "-config") && i+1 < len(args) {
				return args[i+1]
			}
		}
		return ""
	}
	switch {
	case len(args) == 0:
		return 2
	case args[0] == "genkey":
		k, err := handshake.GeneratePrivateKey(rand.Reader)
		if err != nil {
			return fail(1, err)
		}
		fmt.Println(k.Encode())
		return 0
	case args[0] == "pubkey":
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		k, err := handshake.ParsePrivateKey(strings.TrimSpace(line))
		if err != nil {
			return fail(1, err)
		}
		fmt.Println(k.Public().String())
		return 0
	case args[0] == "check":
		if _, err := config.Load(cfgArg()); err != nil {
			return fail(3, err)
		}
		return 0
	case args[0] == "up" && slices.Contains(args, "--help"):
		return 0
	case args[0] == "up":
		cfg, err := config.Load(cfgArg())
		if err != nil {
			return fail(3, err)
		}
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM, os.Interrupt)
		in := cfg.Interface
		steps := [][]string{
			{"ip", "tuntap", "add", "dev", in.Name, "mode", "tun"},
			{"ip", "addr", "add", in.Addresses[0].String(), "dev", in.Name},
			{"ip", "link", "set", "dev", in.Name, "mtu", fmt.Sprint(in.MTU), "up"},
		}
		for _, s := range steps {
			if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
				return fail(1, fmt.Errorf("%v: %v: %s", s, err, out))
			}
		}
		defer exec.Command("ip", "link", "del", "dev", in.Name).Run()
		c, err := net.Dial("unixgram", os.Getenv("NOTIFY_SOCKET"))
		if err != nil {
			return fail(1, err)
		}
		fmt.Fprint(c, "STATUS=up\nREADY=1\n")
		c.Close()
		<-term
		return 0
	}
	return fail(2, fmt.Errorf("unknown command %q", args[0]))
}

// requireRoot skips the test unless it runs as root with the tools the
// bed needs.
func requireRoot(t *testing.T, tools ...string) {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireTools(t, append([]string{"ip"}, tools...)...)
}

// ourNamespaces lists the namespaces named after this process.
func ourNamespaces(t *testing.T) []string {
	t.Helper()
	names, err := listNamespaces()
	if err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, n := range names {
		if ownerPID(n) == os.Getpid() {
			ours = append(ours, n)
		}
	}
	return ours
}

// upBed brings a bed up and registers its teardown.
func upBed(t *testing.T) *Bed {
	t.Helper()
	if left := ourNamespaces(t); len(left) > 0 {
		t.Fatalf("namespaces of this process exist before the test: %q", left)
	}
	bed := NewBed()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := bed.Up(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bed.Down() })
	return bed
}

// TestBedUnderlay brings the bed up, pings across the veth, tears it down
// and checks that no namespace remains.
func TestBedUnderlay(t *testing.T) {
	requireRoot(t, "ping")
	bed := upBed(t)
	if got := ourNamespaces(t); !slices.Equal(got, []string{bed.NSA, bed.NSB}) {
		t.Errorf("namespaces after Up = %q, want %q and %q", got, bed.NSA, bed.NSB)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := bed.CheckUnderlay(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	out, err := bed.Output(ctx, bed.NSB, "ip", "-o", "addr", "show", "dev", bed.VethB)
	if err != nil || !strings.Contains(string(out), underlayB.String()) {
		t.Errorf("B's veth lacks %v: %s %v", underlayB, out, err)
	}
	// Nothing of the bed may appear in the root namespace.
	if root, err := exec.Command("ip", "-o", "link", "show").Output(); err != nil || strings.Contains(string(root), bed.VethA) {
		t.Errorf("veth visible in the root namespace (or ip failed: %v)", err)
	}
	// A live owner's bed survives a cleanup of leftovers.
	if _, err := cleanupLeftovers(); err != nil {
		t.Error(err)
	}
	if got := ourNamespaces(t); len(got) != 2 {
		t.Errorf("cleanup removed a live bed: left %q", got)
	}
	if err := bed.Down(); err != nil {
		t.Fatal(err)
	}
	if got := ourNamespaces(t); len(got) != 0 {
		t.Errorf("namespaces left after Down: %q", got)
	}
	if err := bed.Down(); err != nil {
		t.Errorf("second Down: %v", err)
	}
}

// TestCleanupRemovesDeadOwners plants a namespace named after a process
// that has exited and expects cleanupLeftovers to remove it.
func TestCleanupRemovesDeadOwners(t *testing.T) {
	requireRoot(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("%s%d-a", namePrefix, dead.Process.Pid)
	if err := exec.Command("ip", "netns", "add", ns).Run(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = removeNamespace(ns) })
	removed, err := cleanupLeftovers()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(removed, ns) {
		t.Errorf("cleanup removed %q, not the dead owner's %s", removed, ns)
	}
	if _, err := os.Stat("/run/netns/" + ns); !os.IsNotExist(err) {
		t.Errorf("%s still exists (%v)", ns, err)
	}
}

// TestGmtunHooks runs the gmtun hooks (keys, configs, `check`, `up` with
// READY=1, stop) against the stand-in gmtun and checks that the tunnel
// interfaces appear configured and disappear again.
func TestGmtunHooks(t *testing.T) {
	requireRoot(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeGmtunEnv, "1")
	bed := upBed(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	g := &gmtunTunnel{bin: self, suite: "sm4-gcm"}
	if g.Name() != "gmtun sm4-gcm" {
		t.Errorf("Name = %q", g.Name())
	}
	if err := g.Prepare(ctx, bed, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	sess, err := g.Start(ctx, bed)
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.PIDs()) != 2 || sess.Exited() != nil {
		t.Errorf("session pids %v, exited %v", sess.PIDs(), sess.Exited())
	}
	for i, side := range []string{"a", "b"} {
		ns := []string{bed.NSA, bed.NSB}[i]
		want := []string{innerA.String(), innerB.String()}[i]
		out, err := bed.Output(ctx, ns, "ip", "-o", "addr", "show", "dev", bed.IfaceName(side))
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("%s: %s lacks %s: %s %v", ns, bed.IfaceName(side), want, out, err)
		}
		// CPU accounting must find the daemons.
		if _, err := procCPUTicks(sess.PIDs()[i]); err != nil {
			t.Error(err)
		}
	}
	if err := sess.Stop(); err != nil {
		t.Fatal(err)
	}
	for i, side := range []string{"a", "b"} {
		ns := []string{bed.NSA, bed.NSB}[i]
		if _, err := bed.Output(ctx, ns, "ip", "link", "show", "dev", bed.IfaceName(side)); err == nil {
			t.Errorf("%s still exists after Stop", bed.IfaceName(side))
		}
	}
}
