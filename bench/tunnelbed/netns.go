//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// namePrefix starts the name of every namespace (and tunnel interface)
// the bed creates, so that leftovers can be found and removed.
const namePrefix = "gmtb-"

// Addressing of the bed (RFC 2544 benchmarking range 198.18.0.0/15).
var (
	underlayA = netip.MustParsePrefix("198.18.0.1/24")
	underlayB = netip.MustParsePrefix("198.18.0.2/24")
	innerA    = netip.MustParsePrefix("198.19.0.1/24")
	innerB    = netip.MustParsePrefix("198.19.0.2/24")
)

// Link MTUs of the bed: a 1500-byte underlay and the usual 1420-byte
// tunnel MTU (1500 minus 80 bytes of IPv6, UDP and tunnel overhead).
const (
	underlayMTU = 1500
	innerMTU    = 1420
)

// cmdTimeout bounds every short administrative command (ip, wg, ethtool).
const cmdTimeout = 15 * time.Second

// Bed is two network namespaces, A and B, joined by a veth pair. Nothing
// of it lives in the root namespace: the veth is created inside A with its
// peer end moved straight into B.
//
//	[ns A] vethA 198.18.0.1/24 ──veth── 198.18.0.2/24 vethB [ns B]
//	       tunnel 198.19.0.1/24         198.19.0.2/24 tunnel
//
// A Bed is not safe for concurrent Up/Down; commands may run concurrently.
type Bed struct {
	// ID is the unique part of every name: the owning process's PID.
	ID string
	// NSA and NSB are the namespace names (gmtb-ID-a, gmtb-ID-b).
	NSA, NSB string
	// VethA and VethB are the underlay interfaces in A and B.
	VethA, VethB string
	// Nice, when non-zero, is the niceness given to processes started in
	// the namespaces (through nice(1)).
	Nice int
	// Daemons restricts the tunnel daemons (DaemonCommand, StartDaemon)
	// to CPUs and a GOMAXPROCS; iperf3, ping and tools are not affected.
	Daemons placement

	created []string // namespaces created so far, for Down
}

// NewBed returns a Bed whose names are unique to this process.
func NewBed() *Bed {
	id := strconv.Itoa(os.Getpid())
	return &Bed{
		ID:    id,
		NSA:   namePrefix + id + "-a",
		NSB:   namePrefix + id + "-b",
		VethA: "gmtbu0",
		VethB: "gmtbu1",
	}
}

// IfaceName is the name of the tunnel interface on side ("a" or "b"). It
// is unique on the machine, not only in its namespace, because userspace
// tunnels put control sockets named after it in the shared /run
// (wireguard-go: /var/run/wireguard/NAME.sock).
func (b *Bed) IfaceName(side string) string {
	return "gmtb" + b.ID + side // at most 4+7+1 = 12 bytes, under IFNAMSIZ
}

// Up creates the namespaces and the veth pair and assigns the underlay
// addresses. On failure everything created so far is removed again.
func (b *Bed) Up(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, b.Down())
		}
	}()
	for _, ns := range []string{b.NSA, b.NSB} {
		if err := runCmd(ctx, "ip", "netns", "add", ns); err != nil {
			return err
		}
		b.created = append(b.created, ns)
		if err := runCmd(ctx, "ip", "-n", ns, "link", "set", "lo", "up"); err != nil {
			return err
		}
	}
	steps := [][]string{
		{"ip", "-n", b.NSA, "link", "add", b.VethA, "mtu", strconv.Itoa(underlayMTU), "type", "veth",
			"peer", "name", b.VethB, "mtu", strconv.Itoa(underlayMTU), "netns", b.NSB},
		{"ip", "-n", b.NSA, "addr", "add", underlayA.String(), "dev", b.VethA},
		{"ip", "-n", b.NSB, "addr", "add", underlayB.String(), "dev", b.VethB},
		{"ip", "-n", b.NSA, "link", "set", b.VethA, "up"},
		{"ip", "-n", b.NSB, "link", "set", b.VethB, "up"},
	}
	for _, s := range steps {
		if err := runCmd(ctx, s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// CheckUnderlay pings B's underlay address from A until it answers or
// timeout passes.
func (b *Bed) CheckUnderlay(ctx context.Context, timeout time.Duration) error {
	return b.waitPing(ctx, b.NSA, underlayB.Addr(), timeout)
}

// waitPing sends single pings from ns to dst until one is answered.
func (b *Bed) waitPing(ctx context.Context, ns string, dst netip.Addr, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		_, err := b.Output(ctx, ns, "ping", "-n", "-q", "-c", "1", "-W", "1", dst.String())
		if err == nil {
			return nil
		}
		last = err
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("tunnelbed: no answer from %v in %s within %v: %w", dst, ns, timeout, last)
}

// Down removes the namespaces created by Up, first ending every process
// still running inside them. It is safe to call more than once.
func (b *Bed) Down() error {
	var errs []error
	for _, ns := range b.created {
		if err := removeNamespace(ns); err != nil {
			errs = append(errs, err)
		}
	}
	b.created = nil
	return errors.Join(errs...)
}

// Command returns a command that runs argv inside namespace ns (with
// `ip netns exec`, which execs argv under the same PID, so the PID of the
// returned command is that of argv). When ctx ends the process gets
// SIGTERM, then SIGKILL 5 s later. The process is also killed if the bed's
// owner dies (PR_SET_PDEATHSIG), so no load outlives the bed. Linux
// delivers that signal when the OS thread that started the process exits,
// not the process, so do not Start it from a goroutine that locks its OS
// thread and exits without unlocking it (the runtime then ends the thread
// and the child is killed at once; see startPinned in cmd/gmtun/netns_test.go).
func (b *Bed) Command(ctx context.Context, ns string, argv ...string) *exec.Cmd {
	name, args := b.nsArgv(ns, argv)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// DaemonCommand is Command for a long-running process that is not tied to
// a context: it runs until it is signalled (or the bed's owner dies). As
// with Command, Linux sends the parent-death signal when the *starting
// thread* exits, so do not Start it from a goroutine that locks its OS
// thread and exits without unlocking it (see startPinned in
// cmd/gmtun/netns_test.go).
//
// With b.Daemons.CPUs set the program runs under taskset -c, which, like
// nice and ip netns exec, executes it in the same process: the PID is the
// daemon's.
func (b *Bed) DaemonCommand(ns string, argv ...string) *exec.Cmd {
	name, args := b.nsArgv(ns, b.Daemons.wrap(argv))
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// nsArgv returns the program and arguments that run argv in ns, under
// nice(1) when b.Nice is set.
func (b *Bed) nsArgv(ns string, argv []string) (string, []string) {
	args := append([]string{"netns", "exec", ns}, argv...)
	if b.Nice == 0 {
		return "ip", args
	}
	return "nice", append([]string{"-n", strconv.Itoa(b.Nice), "ip"}, args...)
}

// Output runs argv in namespace ns with the administrative timeout and
// returns its standard output; the error includes standard error.
func (b *Bed) Output(ctx context.Context, ns string, argv ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	cmd := b.Command(ctx, ns, argv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("tunnelbed: %s in %s: %w: %s", strings.Join(argv, " "), ns, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// runCmd runs a short administrative command in the current namespace
// with the administrative timeout; the error includes its output.
func runCmd(ctx context.Context, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("tunnelbed: %s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// removeNamespace ends the processes inside ns (SIGTERM, then SIGKILL
// after 3 s) and deletes it.
func removeNamespace(ns string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*cmdTimeout)
	defer cancel()
	pids := namespacePIDs(ctx, ns)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	for deadline := time.Now().Add(3 * time.Second); len(pids) > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		pids = namespacePIDs(ctx, ns)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err := runCmd(ctx, "ip", "netns", "del", ns); err != nil {
		if _, statErr := os.Stat(filepath.Join("/run/netns", ns)); errors.Is(statErr, os.ErrNotExist) {
			return nil // already gone
		}
		return err
	}
	return nil
}

// namespacePIDs lists the processes whose network namespace is ns.
func namespacePIDs(ctx context.Context, ns string) []int {
	out, err := exec.CommandContext(ctx, "ip", "netns", "pids", ns).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// listNamespaces returns the names of the named network namespaces
// (the entries of /run/netns, which is where `ip netns add` puts them).
func listNamespaces() ([]string, error) {
	ents, err := os.ReadDir("/run/netns")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tunnelbed: %w", err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names, nil
}

// ownerPID returns the PID embedded in a bed namespace name
// ("gmtb-1234-a" → 1234), or 0 if name is not one of ours.
func ownerPID(name string) int {
	rest, ok := strings.CutPrefix(name, namePrefix)
	if !ok {
		return 0
	}
	id, side, ok := strings.Cut(rest, "-")
	if !ok || (side != "a" && side != "b") {
		return 0
	}
	pid, err := strconv.Atoi(id)
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// ownerAlive reports whether pid is a running test bed: a process whose
// command name starts with "tunnelbed" (the program, or its test binary
// tunnelbed.test). A reused PID of an unrelated process does not count.
func ownerAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return err == nil && strings.HasPrefix(string(b), "tunnelbed")
}

// cleanupLeftovers removes the namespaces (and wireguard-go control
// sockets) left by beds whose owner is no longer running. Beds of running
// owners, including this process, are left alone. It returns what it
// removed.
func cleanupLeftovers() ([]string, error) {
	names, err := listNamespaces()
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, ns := range names {
		pid := ownerPID(ns)
		if pid == 0 || pid == os.Getpid() || ownerAlive(pid) {
			continue
		}
		if err := removeNamespace(ns); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, ns)
	}
	socks, _ := filepath.Glob("/var/run/wireguard/gmtb*.sock")
	for _, s := range socks {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(s), "gmtb"), ".sock")
		pid, err := strconv.Atoi(strings.TrimRight(id, "ab"))
		if err != nil || pid == os.Getpid() || ownerAlive(pid) {
			continue
		}
		if os.Remove(s) == nil {
			removed = append(removed, s)
		}
	}
	return removed, errors.Join(errs...)
}
