//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// iperfPort is the iperf3 control and data port inside namespace B.
const iperfPort = 5201

// iperfSlack is added to an iperf3 test's duration for its outer timeout
// (connection setup, the end-of-test exchange, a slow loaded machine).
const iperfSlack = 30 * time.Second

// iperfSpec describes one iperf3 test from A to B through the tunnel.
type iperfSpec struct {
	Streams  int           // parallel streams (-P)
	UDP      bool          // UDP instead of TCP
	Len      int           // UDP payload bytes (-l); 0 for the default
	Rate     string        // UDP target bit rate (-b); "0" is unlimited
	Duration time.Duration // -t
}

// args returns the iperf3 client arguments for spec towards dst.
func (s iperfSpec) args(dst string) []string {
	a := []string{"iperf3", "-c", dst, "-p", strconv.Itoa(iperfPort), "-J",
		"-t", strconv.Itoa(int(math.Ceil(s.Duration.Seconds()))), "--connect-timeout", "5000"}
	if s.Streams > 1 {
		a = append(a, "-P", strconv.Itoa(s.Streams))
	}
	if s.UDP {
		a = append(a, "-u", "-b", s.Rate)
		if s.Len > 0 {
			a = append(a, "-l", strconv.Itoa(s.Len))
		}
	}
	return a
}

// iperfResult is the receiver's view of one iperf3 test (end.sum_received
// of the client's JSON, which iperf3 fills from the server's counters).
type iperfResult struct {
	Seconds     float64 `json:"seconds"`
	Bytes       float64 `json:"bytes"`
	BitsPerSec  float64 `json:"bits_per_second"`
	Packets     float64 `json:"packets,omitempty"`      // UDP: highest sequence number the receiver saw
	LostPackets float64 `json:"lost_packets,omitempty"` // UDP: gaps below that sequence number
	// SentPackets is the number of datagrams the sender sent
	// (end.sum_sent.packets); it includes a tail the receiver never saw,
	// which iperf3's own lost_packets misses.
	SentPackets float64 `json:"sent_packets,omitempty"`
}

// ReceivedPackets is the number of UDP datagrams that arrived.
func (r iperfResult) ReceivedPackets() float64 { return r.Packets - r.LostPackets }

// parseIperf decodes an `iperf3 -J` client report. iperf3 reports its
// own failures in an "error" member, with exit status 1.
func parseIperf(b []byte) (iperfResult, error) {
	var doc struct {
		Error string `json:"error"`
		End   struct {
			SumReceived *iperfResult `json:"sum_received"`
			SumSent     *struct {
				Packets float64 `json:"packets"`
			} `json:"sum_sent"`
		} `json:"end"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return iperfResult{}, fmt.Errorf("tunnelbed: iperf3 JSON: %w", err)
	}
	if doc.Error != "" {
		return iperfResult{}, fmt.Errorf("tunnelbed: iperf3: %s", doc.Error)
	}
	r := doc.End.SumReceived
	if r == nil || r.Seconds <= 0 {
		return iperfResult{}, errors.New("tunnelbed: iperf3 JSON has no end.sum_received")
	}
	if doc.End.SumSent != nil {
		r.SentPackets = doc.End.SumSent.Packets
	}
	return *r, nil
}

// testResult is one measured test of one session.
type testResult struct {
	Iperf *iperfResult `json:"iperf,omitempty"`
	Ping  *pingResult  `json:"ping,omitempty"`
	// TunnelCPUSeconds is the CPU time (user+system) used by all tunnel
	// daemons during the test.
	TunnelCPUSeconds float64 `json:"tunnel_cpu_seconds"`
	// LoadCPUSeconds is the CPU time of the iperf3 client and server.
	LoadCPUSeconds float64 `json:"load_cpu_seconds"`
	// MachineBusy is the busy fraction of all CPUs during the test, from
	// /proc/stat: everything, including other users of the machine and
	// kernel softirq work.
	MachineBusy float64 `json:"machine_busy"`
	// MachineCPUSeconds is the busy CPU time of the whole machine during
	// the test (all CPUs, from /proc/stat). What exceeds TunnelCPUSeconds
	// + LoadCPUSeconds is kernel softirq work for the test's traffic and
	// other users of the machine.
	MachineCPUSeconds float64 `json:"machine_cpu_seconds"`
	// WallSeconds is the wall-clock time of the test.
	WallSeconds float64 `json:"wall_seconds"`
	// UDP test only (udpdrops.go): datagrams dropped at iperf3's server
	// socket, after they crossed the tunnel, and at the tunnel's own
	// sockets in B (its underlay).
	AppSocketDrops    float64 `json:"app_socket_drops,omitempty"`
	TunnelSocketDrops float64 `json:"tunnel_socket_drops,omitempty"`
	// Batches is how full gmtun's crypto batches were (iperf3 tests of
	// gmtun only; nil when the daemons could not be asked).
	Batches *batchFill `json:"batches,omitempty"`
}

// DeliveredPackets is what the tunnel delivered to iperf3's server socket
// in the UDP test: what the server received plus what overflowed its
// socket (a lower bound: drops in the last poll interval are missed).
func (t testResult) DeliveredPackets() float64 {
	if t.Iperf == nil {
		return 0
	}
	return t.Iperf.ReceivedPackets() + t.AppSocketDrops
}

// runIperf runs one iperf3 test from A to B through the tunnel and
// measures the CPU time of the tunnel daemons pids meanwhile.
func runIperf(ctx context.Context, bed *Bed, spec iperfSpec, pids []int, hz int64) (testResult, error) {
	ctx, cancel := context.WithTimeout(ctx, spec.Duration+iperfSlack)
	defer cancel()
	srv := bed.Command(ctx, bed.NSB, "iperf3", "-s", "-1", "-p", strconv.Itoa(iperfPort))
	srvLog := &tailBuffer{max: 4096}
	srv.Stdout, srv.Stderr = srvLog, srvLog
	if err := srv.Start(); err != nil {
		return testResult{}, fmt.Errorf("tunnelbed: iperf3 server: %w", err)
	}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Wait() }()
	defer func() {
		select {
		case <-srvDone:
		default:
			_ = srv.Process.Kill()
			<-srvDone
		}
	}()
	if err := waitListen(ctx, srv.Process.Pid, iperfPort, srvDone, 10*time.Second); err != nil {
		return testResult{}, fmt.Errorf("%w (server output: %s)", err, srvLog.Tail(3))
	}

	cpu0, err := snapshotCPU(pids)
	if err != nil {
		return testResult{}, err
	}
	sys0, err := readSystemTimes()
	if err != nil {
		return testResult{}, err
	}
	var drops *udpDropWatch
	if spec.UDP {
		drops = watchUDPDrops(ctx, bed, 250*time.Millisecond)
	}
	start := time.Now()
	cli := bed.Command(ctx, bed.NSA, spec.args(innerB.Addr().String())...)
	var cliErr strings.Builder
	cli.Stderr = &cliErr
	out, runErr := cli.Output()
	wall := time.Since(start)
	var appDrops, tunDrops float64
	var dropErr error
	if drops != nil {
		appDrops, tunDrops, dropErr = drops.Stop()
	}
	// The server exits after its one test; give it a moment to do so
	// and collect its CPU time.
	var srvState *os.ProcessState
	select {
	case <-srvDone:
		srvState = srv.ProcessState
		srvDone <- nil // for the deferred drain
	case <-time.After(5 * time.Second):
	}
	tunnelCPU, cpuErr := cpuSecondsSince(cpu0, hz)
	sys1, sysErr := readSystemTimes()

	res, perr := parseIperf(out)
	if perr != nil {
		if runErr != nil {
			return testResult{}, fmt.Errorf("%w (iperf3 client: %v: %s)", perr, runErr, strings.TrimSpace(cliErr.String()))
		}
		return testResult{}, perr
	}
	if err := errors.Join(cpuErr, sysErr, dropErr); err != nil {
		return testResult{}, err
	}
	tr := testResult{
		Iperf:             &res,
		TunnelCPUSeconds:  tunnelCPU,
		MachineBusy:       busyFraction(sys0, sys1),
		MachineCPUSeconds: float64(sys1.busy-sys0.busy) / float64(hz),
		WallSeconds:       wall.Seconds(),
		AppSocketDrops:    appDrops,
		TunnelSocketDrops: tunDrops,
	}
	if cli.ProcessState != nil {
		tr.LoadCPUSeconds += (cli.ProcessState.UserTime() + cli.ProcessState.SystemTime()).Seconds()
	}
	if srvState != nil {
		tr.LoadCPUSeconds += (srvState.UserTime() + srvState.SystemTime()).Seconds()
	}
	return tr, nil
}

// otherShare is the fraction of the machine's busy CPU time during the
// test that neither the tunnel nor iperf3 used (softirq and other users),
// or NaN when unknown.
func (t testResult) otherShare() float64 {
	if t.MachineCPUSeconds <= 0 {
		return math.NaN()
	}
	return max(0, 1-(t.TunnelCPUSeconds+t.LoadCPUSeconds)/t.MachineCPUSeconds)
}

// waitListen polls pid's view of its namespace's TCP sockets until port
// is in LISTEN state, the process ends, or timeout passes.
func waitListen(ctx context.Context, pid, port int, done <-chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		for _, f := range []string{"tcp", "tcp6"} {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
			if err == nil && tcpListening(b, port) {
				return nil
			}
		}
		select {
		case err := <-done:
			return fmt.Errorf("tunnelbed: iperf3 server exited before listening: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tunnelbed: iperf3 server not listening on port %d within %v", port, timeout)
		}
	}
}

// tcpListening reports whether a /proc/net/tcp{,6} table has a socket in
// LISTEN state (0A) on local port port.
func tcpListening(table []byte, port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, l := range strings.Split(string(table), "\n") {
		f := strings.Fields(l)
		if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == "0A" {
			return true
		}
	}
	return false
}

// pingResult is the summary of one ping(8) run.
type pingResult struct {
	Sent     int     `json:"sent"`
	Received int     `json:"received"`
	MinMs    float64 `json:"min_ms"`
	AvgMs    float64 `json:"avg_ms"`
	MaxMs    float64 `json:"max_ms"`
	MdevMs   float64 `json:"mdev_ms"`
}

var (
	pingCountsRE = regexp.MustCompile(`(\d+) packets transmitted, (\d+) (?:packets )?received`)
	pingRTTRE    = regexp.MustCompile(`(?:rtt|round-trip) min/avg/max/(?:mdev|stddev) = ([0-9.]+)/([0-9.]+)/([0-9.]+)/([0-9.]+) ms`)
)

// parsePing reads the summary lines of iputils ping -q output.
func parsePing(out string) (pingResult, error) {
	var r pingResult
	m := pingCountsRE.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("tunnelbed: no ping summary in %q", firstLine(out))
	}
	r.Sent, _ = strconv.Atoi(m[1])
	r.Received, _ = strconv.Atoi(m[2])
	if r.Received == 0 {
		return r, fmt.Errorf("tunnelbed: ping: 0 of %d answered", r.Sent)
	}
	m = pingRTTRE.FindStringSubmatch(out)
	if m == nil {
		return r, errors.New("tunnelbed: no rtt line in ping output")
	}
	vals := make([]float64, 4)
	for i := range vals {
		v, err := strconv.ParseFloat(m[1+i], 64)
		if err != nil {
			return r, fmt.Errorf("tunnelbed: ping rtt: %w", err)
		}
		vals[i] = v
	}
	r.MinMs, r.AvgMs, r.MaxMs, r.MdevMs = vals[0], vals[1], vals[2], vals[3]
	return r, nil
}

// runPing pings B's inner address from A count times, 50 ms apart, on an
// otherwise idle tunnel.
func runPing(ctx context.Context, bed *Bed, count int) (testResult, error) {
	deadline := int(math.Ceil(float64(count)*0.05)) + 5
	ctx, cancel := context.WithTimeout(ctx, time.Duration(deadline+10)*time.Second)
	defer cancel()
	cmd := bed.Command(ctx, bed.NSA, "ping", "-n", "-q", "-c", strconv.Itoa(count), "-i", "0.05",
		"-W", "1", "-w", strconv.Itoa(deadline), innerB.Addr().String())
	out, err := cmd.CombinedOutput()
	r, perr := parsePing(string(out))
	if perr != nil {
		return testResult{}, errors.Join(perr, err)
	}
	return testResult{Ping: &r}, nil
}

// ensureTools installs the Debian packages providing the missing commands
// (apt-get, as root), unless install is false, in which case a missing
// command is an error.
func ensureTools(ctx context.Context, install bool, logf func(string, ...any), cmds map[string]string) error {
	var missing, pkgs []string
	for c, pkg := range cmds {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
			pkgs = append(pkgs, pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if !install {
		return fmt.Errorf("tunnelbed: missing commands %v (Debian packages %v); install them or drop -no-install", missing, pkgs)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("tunnelbed: missing commands %v and no apt-get to install %v", missing, pkgs)
	}
	logf("installing %v (for %v) with apt-get", pkgs, missing)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	env := append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	for _, argv := range [][]string{
		{"apt-get", "update", "-qq"},
		append([]string{"apt-get", "install", "-y", "-qq", "--no-install-recommends"}, pkgs...),
	} {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = env
		// SIGTERM lets apt-get release the dpkg lock cleanly on Ctrl-C.
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 30 * time.Second
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("tunnelbed: %s: %w: %s", strings.Join(argv, " "), err, lastLines(string(out), 3))
		}
	}
	for _, c := range missing {
		if _, err := exec.LookPath(c); err != nil {
			return fmt.Errorf("tunnelbed: %s still missing after apt-get install", c)
		}
	}
	return nil
}

// lastLines returns the last n non-empty lines of s joined by " | ".
func lastLines(s string, n int) string {
	t := &tailBuffer{max: len(s) + 1}
	_, _ = t.Write([]byte(s))
	return t.Tail(n)
}
