//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Tunnel is a tunnel implementation under test: the pair of hooks the bed
// calls to bring one endpoint up in each namespace and to take both down.
// Start is called once per measurement session, with the bed's namespaces
// and veth up and no tunnel running; the returned Session's Stop must
// leave no tunnel interface or process behind.
type Tunnel interface {
	// Name labels the tunnel's rows in the report ("wireguard-go",
	// "gmtun sm4-gcm").
	Name() string
	// Prepare runs once before the first session: it checks that the
	// tunnel can run at all (binaries, commands) and creates keys. An
	// error here skips every session of this tunnel with that message.
	Prepare(ctx context.Context, bed *Bed, dir string) error
	// Start brings up an endpoint in each namespace, with inner addresses
	// innerA and innerB, and returns once both interfaces exist and are
	// up. It does not wait for the handshake; the bed pings for that.
	Start(ctx context.Context, bed *Bed) (*Session, error)
}

// Session is a running tunnel: its processes, whose CPU time is measured,
// and how to stop them.
type Session struct {
	// Daemons are the tunnel processes (one per side for userspace
	// tunnels).
	Daemons []*Daemon
	// Notes are facts worth reporting, such as the offloads in use.
	Notes []string
	// stop, if set, runs before the daemons are terminated.
	stop func() error
	// batches, if set, reads A's and B's crypto batch counters (gmtun).
	batches func(ctx context.Context) ([2]batchCounts, error)
}

// PIDs returns the process IDs of the tunnel's daemons.
func (s *Session) PIDs() []int {
	pids := make([]int, 0, len(s.Daemons))
	for _, d := range s.Daemons {
		pids = append(pids, d.PID())
	}
	return pids
}

// Exited returns an error naming the first daemon that is no longer
// running, with the tail of its log, or nil if all are running.
func (s *Session) Exited() error {
	for _, d := range s.Daemons {
		if err := d.Exited(); err != nil {
			return err
		}
	}
	return nil
}

// Stop terminates the session: the tunnel's own stop hook, then SIGTERM to
// every daemon (SIGKILL after a grace period). It is safe to call twice.
func (s *Session) Stop() error {
	var errs []error
	if s.stop != nil {
		errs = append(errs, s.stop())
		s.stop = nil
	}
	for _, d := range s.Daemons {
		errs = append(errs, d.Stop(5*time.Second))
	}
	return errors.Join(errs...)
}

// Daemon is a long-running process started inside a namespace, with its
// output kept in a bounded buffer for error messages.
type Daemon struct {
	name string
	cmd  *exec.Cmd
	log  *tailBuffer
	done chan struct{}
	err  error // set before done is closed
}

// StartDaemon starts argv in namespace ns with extra environment env (and
// the bed's GOMAXPROCS for daemons, if set). The process is not tied to a
// context: it runs until Stop (or until this program dies, through
// PR_SET_PDEATHSIG).
func StartDaemon(bed *Bed, name, ns string, env []string, argv ...string) (*Daemon, error) {
	cmd := bed.DaemonCommand(ns, argv...)
	cmd.Env = append(append(os.Environ(), env...), bed.Daemons.env()...)
	log := &tailBuffer{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("tunnelbed: start %s: %w", name, err)
	}
	d := &Daemon{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

// PID returns the daemon's process ID.
func (d *Daemon) PID() int { return d.cmd.Process.Pid }

// Exited returns nil while the daemon runs, and otherwise an error with
// its exit status and the last lines of its output.
func (d *Daemon) Exited() error {
	select {
	case <-d.done:
		return fmt.Errorf("tunnelbed: %s exited (%v): %s", d.name, d.err, d.log.Tail(6))
	default:
		return nil
	}
}

// Stop sends SIGTERM, waits up to grace, then kills the daemon. An exit
// caused by the signal is not an error.
func (d *Daemon) Stop(grace time.Duration) error {
	select {
	case <-d.done:
		return nil
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		return nil
	case <-time.After(grace):
	}
	_ = d.cmd.Process.Kill()
	<-d.done
	return fmt.Errorf("tunnelbed: %s did not stop within %v of SIGTERM; killed", d.name, grace)
}

// Log returns the last lines of the daemon's output.
func (d *Daemon) Log(lines int) string { return d.log.Tail(lines) }

// tailBuffer keeps the last max bytes written to it. It is safe for
// concurrent use (exec copies stdout and stderr from two goroutines).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// Write appends p, dropping the oldest bytes beyond the limit.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// Tail returns the last n non-empty lines, joined with " | ".
func (t *tailBuffer) Tail(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lines []string
	for _, l := range bytes.Split(t.buf, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			lines = append(lines, s)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return "(no output)"
	}
	return strings.Join(lines, " | ")
}

// waitInterface polls until iface exists in ns with its link up, a daemon
// of s exits, or timeout passes.
func waitInterface(ctx context.Context, bed *Bed, s *Session, ns, iface string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		out, err := bed.Output(ctx, ns, "ip", "-o", "link", "show", "dev", iface)
		if err == nil && bytes.Contains(out, []byte(",UP")) {
			return nil
		}
		if err := s.Exited(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tunnelbed: interface %s did not come up in %s within %v", iface, ns, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// offloadNotes reports the offloads of TUN interface iface in ns: whether
// it was opened with a virtio-net header (IFF_VNET_HDR, the prerequisite
// for TSO/GRO batching) and, when ethtool is installed, the segmentation
// and receive offloads the kernel enabled for it.
func offloadNotes(ctx context.Context, bed *Bed, ns, iface string) (vnetHdr bool, notes []string) {
	out, err := bed.Output(ctx, ns, "ip", "-d", "link", "show", "dev", iface)
	if err != nil {
		return false, []string{iface + ": offloads unknown (" + err.Error() + ")"}
	}
	vnetHdr = strings.Contains(string(out), "vnet_hdr on")
	feats := []string{"vnet_hdr " + onOff(vnetHdr)}
	if _, err := exec.LookPath("ethtool"); err == nil {
		if out, err := bed.Output(ctx, ns, "ethtool", "-k", iface); err == nil {
			feats = append(feats, ethtoolFeatures(string(out))...)
		}
	}
	return vnetHdr, []string{iface + ": " + strings.Join(feats, ", ")}
}

// reportedFeatures are the `ethtool -k` features worth reporting for a
// tunnel interface.
var reportedFeatures = []string{"tx-checksumming", "tcp-segmentation-offload", "tx-udp-segmentation", "generic-receive-offload"}

// ethtoolFeatures extracts reportedFeatures ("name on|off") from the
// output of `ethtool -k`, in the order of reportedFeatures.
func ethtoolFeatures(out string) []string {
	state := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if f := strings.Fields(v); ok && len(f) > 0 {
			state[k] = f[0]
		}
	}
	var feats []string
	for _, k := range reportedFeatures {
		if v, ok := state[k]; ok {
			feats = append(feats, k+" "+v)
		}
	}
	return feats
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
