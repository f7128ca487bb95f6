//go:build linux

// Command tunnelbed is gmtun's tunnel test bed: it measures a tunnel
// between two network namespaces joined by a veth, with wireguard-go as
// the reference peer. It drives both `make bench-tunnel` (the benchmark)
// and `make demo` (-demo: one short run per gmtun suite).
//
// The bed (two namespaces gmtb-PID-a and gmtb-PID-b, a veth with
// 198.18.0.1/24 and 198.18.0.2/24, tunnel addresses 198.19.0.1/24 and
// 198.19.0.2/24, MTU 1500 and 1420) is created once. Then, for each run
// and each tunnel in alternating order, it waits for a quiet machine,
// starts the tunnel, waits for the handshake, measures ping RTT, iperf3
// TCP with 1 and 4 streams and iperf3 UDP with small payloads, reading
// the CPU time of both tunnel processes from /proc around every test, and
// stops the tunnel. Everything is torn down on exit, on failure and on
// SIGINT/SIGTERM/SIGHUP. Results: a Markdown report on standard output
// (progress goes to standard error) and, with -json, all raw numbers.
//
// It must run as root. bench/README.md describes the measurements, the
// flags and the safety rules.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Exit codes.
const (
	exitOK      = 0 // every tunnel measured
	exitPartial = 1 // a report was produced, but a tunnel or session failed
	exitUsage   = 2 // bad flags
	exitSetup   = 3 // no report: not root, tools missing, the bed failed
)

// requiredTools maps each command the bed runs to its Debian package.
var requiredTools = map[string]string{
	"ip":     "iproute2",
	"iperf3": "iperf3",
	"ping":   "iputils-ping",
	"wg":     "wireguard-tools",
	"nice":   "coreutils",
}

// options are the command-line settings.
type options struct {
	gmtun       string
	suites      []string
	wireguard   bool
	wgBin       string
	goBin       string
	runs        int
	duration    time.Duration
	tests       []string
	udpLen      int
	udpRate     string
	pingCount   int
	jsonPath    string
	quietBusy   float64
	quietWait   time.Duration
	nice        int
	install     bool
	cleanup     bool
	demo        bool
	breakdown   bool
	perfKeep    string
	maxDuration time.Duration
	// daemons restricts the tunnel daemons (-daemon-cpus,
	// -daemon-gomaxprocs; cpus.go).
	daemons placement
	// runToCompletion is gmtun's run_to_completion ("auto": its default,
	// not written).
	runToCompletion string
}

// gmtunRunToCompletion is the run_to_completion value to write into the
// gmtun configurations; "" for gmtun's default.
func (o *options) gmtunRunToCompletion() string {
	if o.runToCompletion == "auto" {
		return ""
	}
	return o.runToCompletion
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// parseFlags parses args into options, applying the demo defaults.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("tunnelbed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var suites, tests, daemonCPUs string
	var noInstall bool
	fs.StringVar(&o.gmtun, "gmtun", "", "gmtun binary to measure (`BIN`); without it only wireguard-go is measured")
	fs.StringVar(&suites, "suites", "sm4-gcm,zuc-256,zuc-128,ublock-gcm", "gmtun data suites to measure, one tunnel row each")
	fs.BoolVar(&o.wireguard, "wireguard", true, "measure wireguard-go as the reference (default false with -demo)")
	fs.StringVar(&o.wgBin, "wireguard-go", "", "prebuilt wireguard-go binary (`BIN`); default: go install the pinned version into a temporary directory")
	fs.StringVar(&o.goBin, "go", "", "go command used to build wireguard-go (default: go in PATH, else /usr/local/go/bin/go)")
	fs.IntVar(&o.runs, "runs", 3, "runs per tunnel (median and min–max are reported)")
	fs.DurationVar(&o.duration, "time", 10*time.Second, "duration of each iperf3 test (whole seconds)")
	fs.StringVar(&tests, "tests", "ping,tcp1,tcp4,udp", "tests to run, comma-separated: ping, tcp1, tcp4, udp")
	fs.IntVar(&o.udpLen, "udp-len", 64, "UDP payload bytes")
	fs.StringVar(&o.udpRate, "udp-rate", "0", "UDP target rate for iperf3 -b (0 = as fast as the sender can)")
	fs.IntVar(&o.pingCount, "ping-count", 40, "pings per session (50 ms apart)")
	fs.StringVar(&o.jsonPath, "json", "", "also write every raw number to `FILE` as JSON")
	fs.Float64Var(&o.quietBusy, "quiet-busy", 0.30, "a machine is quiet when at most this fraction of all CPU time is busy")
	fs.DurationVar(&o.quietWait, "quiet-wait", 60*time.Second, "longest wait for a quiet machine before each session (then warn and go on)")
	fs.IntVar(&o.nice, "nice", -5, "niceness of the tunnel and load processes (0: unchanged)")
	fs.BoolVar(&noInstall, "no-install", false, "fail instead of installing missing Debian packages with apt-get")
	fs.BoolVar(&o.cleanup, "cleanup", false, "remove namespaces and sockets left by dead tunnelbed processes, then exit")
	fs.BoolVar(&o.demo, "demo", false, "demo: each gmtun suite once, ping and TCP 1 stream for 5 s, a short table (needs -gmtun)")
	fs.BoolVar(&o.breakdown, "breakdown", false, "profile one TCP stream per tunnel and the bare veth with perf and print the CPU-s/GB per bucket (crypto, copies, checksums, kernel, runtime, other)")
	fs.StringVar(&o.perfKeep, "perf-keep", "", "with -breakdown: keep each run's perf recording in `DIR` (for perf report)")
	fs.DurationVar(&o.maxDuration, "max-duration", 0, "abort everything after this long (default: estimated from the settings, doubled)")
	fs.StringVar(&daemonCPUs, "daemon-cpus", "", "run the tunnel daemons (both sides; not iperf3) under taskset -c `LIST`, e.g. 0 or 0-1 (default: unrestricted)")
	fs.IntVar(&o.daemons.GOMAXPROCS, "daemon-gomaxprocs", 0, "set GOMAXPROCS=`N` in the tunnel daemons' environment (0: inherited)")
	fs.StringVar(&o.runToCompletion, "run-to-completion", "auto", "gmtun's run_to_completion: auto (its default), true or false")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("tunnelbed: unexpected arguments %q", fs.Args())
	}
	switch o.runToCompletion {
	case "auto", "true", "false":
	default:
		return nil, fmt.Errorf("tunnelbed: -run-to-completion must be auto, true or false, not %q", o.runToCompletion)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.demo {
		if o.gmtun == "" {
			return nil, errors.New("tunnelbed: -demo needs -gmtun BIN")
		}
		if !set["wireguard"] && !set["wireguard-go"] {
			o.wireguard = false
		}
		if !set["runs"] {
			o.runs = 1
		}
		if !set["time"] {
			o.duration = 5 * time.Second
		}
		if !set["tests"] {
			tests = "ping,tcp1"
		}
		if !set["quiet-wait"] {
			o.quietWait = 10 * time.Second
		}
	}
	if o.breakdown {
		switch {
		case o.demo:
			return nil, errors.New("tunnelbed: -breakdown and -demo exclude each other")
		case set["tests"]:
			return nil, errors.New("tunnelbed: -breakdown profiles TCP 1 stream only; drop -tests")
		}
		tests = testTCP1
		if !set["runs"] {
			o.runs = 1
		}
		if !set["quiet-wait"] {
			o.quietWait = 10 * time.Second
		}
	}
	if daemonCPUs != "" {
		cpus, err := parseCPUList(daemonCPUs)
		if err != nil {
			return nil, fmt.Errorf("tunnelbed: -daemon-cpus: %w", err)
		}
		o.daemons.CPUs = cpus
	}
	o.install = !noInstall
	o.suites = splitList(suites)
	o.tests = splitList(tests)
	for _, t := range o.tests {
		if !slices.Contains([]string{testPing, testTCP1, testTCP4, testUDP}, t) {
			return nil, fmt.Errorf("tunnelbed: unknown test %q in -tests", t)
		}
	}
	switch {
	case o.runs < 1 || o.runs > 100:
		return nil, errors.New("tunnelbed: -runs must be 1..100")
	case o.duration < time.Second || o.duration > 10*time.Minute:
		return nil, errors.New("tunnelbed: -time must be 1s..10m")
	case o.udpLen < 16 || o.udpLen > 1392:
		return nil, errors.New("tunnelbed: -udp-len must be 16..1392 (an inner MTU of 1420 minus IPv4 and UDP headers)")
	case o.pingCount < 1 || o.pingCount > 10000:
		return nil, errors.New("tunnelbed: -ping-count must be 1..10000")
	case o.nice < -20 || o.nice > 19:
		return nil, errors.New("tunnelbed: -nice must be -20..19")
	case o.daemons.GOMAXPROCS < 0 || o.daemons.GOMAXPROCS > maxCPU:
		return nil, fmt.Errorf("tunnelbed: -daemon-gomaxprocs must be 0..%d", maxCPU)
	case !o.wireguard && o.gmtun == "" && !o.cleanup:
		return nil, errors.New("tunnelbed: nothing to measure: give -gmtun or keep -wireguard")
	}
	return o, nil
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// run is main without os.Exit.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
		return exitOK
	}
	if err := checkDaemonCPUs(o.daemons.CPUs); err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "tunnelbed %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(stderr, "tunnelbed: must run as root (network namespaces, TUN devices): use sudo")
		return exitSetup
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	removed, err := cleanupLeftovers()
	for _, r := range removed {
		logf("removed leftover %s", r)
	}
	if err != nil {
		logf("cleanup: %v", err)
	}
	if o.cleanup {
		if err != nil {
			return exitSetup
		}
		logf("cleanup done (%d removed)", len(removed))
		return exitOK
	}

	if o.breakdown {
		return runBreakdown(ctx, o, stdout, logf)
	}
	if o.maxDuration == 0 {
		o.maxDuration = 2 * estimate(o)
	}
	ctx, cancel := context.WithTimeout(ctx, o.maxDuration)
	defer cancel()
	logf("at most %v in total (-max-duration)", o.maxDuration.Round(time.Second))

	r, code := measure(ctx, o, logf)
	if r == nil {
		return code
	}
	if o.jsonPath != "" {
		b, err := json.MarshalIndent(r, "", "  ")
		if err == nil {
			err = os.WriteFile(o.jsonPath, append(b, '\n'), 0o644)
		}
		if err != nil {
			logf("writing %s: %v", o.jsonPath, err)
			code = exitPartial
		}
	}
	if o.demo {
		writeDemoTable(stdout, r)
	} else {
		writeMarkdown(stdout, r, "wireguard-go")
	}
	return code
}

// estimate is the expected duration of a run with options o, without
// waits for a quiet machine beyond the first sample.
func estimate(o *options) time.Duration {
	tunnels := len(o.suites)
	if o.gmtun == "" {
		tunnels = 0
	}
	if o.wireguard {
		tunnels++
	}
	var perSession time.Duration = 15 * time.Second // start, handshake, stop
	for _, t := range o.tests {
		if t == testPing {
			perSession += time.Duration(o.pingCount)*50*time.Millisecond + 2*time.Second
		} else {
			perSession += o.duration + 5*time.Second
		}
	}
	perSession += o.quietWait
	return 10*time.Minute + time.Duration(o.runs*tunnels)*perSession // 10 min: installs and builds
}

// measure sets up the bed, runs every session and returns the report.
// A nil report comes with an exitSetup code.
func measure(ctx context.Context, o *options, logf func(string, ...any)) (*report, int) {
	r := &report{
		Command: strings.Join(append([]string{"tunnelbed"}, os.Args[1:]...), " "),
		Started: time.Now(),
	}
	tools := map[string]string{}
	for k, v := range requiredTools {
		if k != "wg" || o.wireguard {
			tools[k] = v
		}
	}
	if o.install {
		tools["ethtool"] = "ethtool" // only for reporting offloads; optional with -no-install
	}
	if len(o.daemons.CPUs) > 0 {
		tools["taskset"] = "util-linux"
	}
	if err := ensureTools(ctx, o.install, logf, tools); err != nil {
		logf("%v", err)
		return nil, exitSetup
	}
	r.Machine = collectMachineFacts(ctx)
	r.Settings = settings{
		Runs: o.runs, TestSeconds: o.duration.Seconds(), Tests: o.tests, UDPLen: o.udpLen, UDPRate: o.udpRate,
		PingCount: o.pingCount, Nice: o.nice, QuietBusy: o.quietBusy, QuietWait: o.quietWait.Seconds(),
		UnderlayMTU: underlayMTU, InnerMTU: innerMTU,
		DaemonCPUs: o.daemons.CPUs.String(), DaemonGOMAXPROCS: o.daemons.GOMAXPROCS,
		RunToCompletion: o.gmtunRunToCompletion(),
	}

	dir, err := os.MkdirTemp("", namePrefix)
	if err != nil {
		logf("%v", err)
		return nil, exitSetup
	}
	defer os.RemoveAll(dir)

	var tunnels []Tunnel
	if o.wireguard {
		bin := o.wgBin
		if bin == "" {
			goBin, err := findGo(o.goBin)
			if err != nil {
				logf("%v", err)
				return nil, exitSetup
			}
			logf("building wireguard-go %s@%s", wireguardGoModule, wireguardGoVersion)
			if bin, err = buildWireguardGo(ctx, goBin, dir); err != nil {
				logf("%v", err)
				return nil, exitSetup
			}
			r.Settings.WireguardGo = wireguardGoVersion
		} else {
			r.Settings.WireguardGo = "prebuilt " + bin
		}
		tunnels = append(tunnels, &wireguardGo{bin: bin})
	}
	if o.gmtun != "" {
		for _, s := range o.suites {
			tunnels = append(tunnels, &gmtunTunnel{bin: o.gmtun, suite: s, runToCompletion: o.gmtunRunToCompletion()})
		}
	}

	bed := NewBed()
	bed.Nice = o.nice
	bed.Daemons = o.daemons
	logf("bringing up namespaces %s and %s", bed.NSA, bed.NSB)
	if err := bed.Up(ctx); err != nil {
		logf("%v", err)
		return nil, exitSetup
	}
	defer func() {
		if err := bed.Down(); err != nil {
			logf("teardown: %v", err)
		} else {
			logf("torn down %s and %s", bed.NSA, bed.NSB)
		}
	}()
	if err := bed.CheckUnderlay(ctx, 10*time.Second); err != nil {
		logf("%v", err)
		return nil, exitSetup
	}

	code := exitOK
	var ready []Tunnel
	for _, t := range tunnels {
		info := tunnelInfo{Name: t.Name()}
		if err := t.Prepare(ctx, bed, dir); err != nil {
			info.Error = err.Error()
			logf("%s: skipped: %v", t.Name(), err)
			code = exitPartial
		} else {
			ready = append(ready, t)
		}
		r.Tunnels = append(r.Tunnels, info)
	}

	hz := clockTicks()
	for run := 1; run <= o.runs && ctx.Err() == nil; run++ {
		order := slices.Clone(ready)
		if run%2 == 0 {
			slices.Reverse(order)
		}
		for _, t := range order {
			if ctx.Err() != nil {
				break
			}
			s := runSession(ctx, o, bed, t, run, hz, logf)
			if s.Error != "" {
				code = exitPartial
			}
			r.Sessions = append(r.Sessions, s)
		}
	}
	if err := ctx.Err(); err != nil {
		logf("stopped early: %v", context.Cause(ctx))
		code = exitPartial
	}
	r.Finished = time.Now()
	summarizeReport(r, "wireguard-go")
	return r, code
}

// findGo returns the go command to build wireguard-go with.
func findGo(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/local/go/bin/go"); err == nil {
		return "/usr/local/go/bin/go", nil // sudo's secure_path often lacks it
	}
	return "", errors.New("tunnelbed: no go command found to build wireguard-go: give -go or -wireguard-go")
}

// runSession measures tunnel t once: quiet wait, start, handshake, tests,
// stop. Failures are recorded in the result, never fatal.
func runSession(ctx context.Context, o *options, bed *Bed, t Tunnel, run int, hz int64, logf func(string, ...any)) sessionResult {
	res := sessionResult{Run: run, Tunnel: t.Name(), Tests: map[string]testResult{}}
	fail := func(err error) sessionResult {
		res.Error = err.Error()
		logf("%s run %d: %v", t.Name(), run, err)
		return res
	}
	q, err := waitQuiet(ctx, o.quietBusy, o.quietWait)
	if err != nil {
		return fail(err)
	}
	res.Quiet = &q
	if !q.Quiet {
		logf("warning: machine still %.0f%% busy after %.0fs; measuring anyway", 100*q.Busy, q.Waited)
	}
	logf("%s run %d/%d: starting", t.Name(), run, o.runs)
	sess, err := t.Start(ctx, bed)
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err := sess.Stop(); err != nil {
			logf("%s run %d: stop: %v", t.Name(), run, err)
		}
	}()
	res.Notes = sess.Notes
	placed, err := checkPlacement(bed.Daemons, sess)
	if err != nil {
		return fail(err)
	}
	res.Notes = append(res.Notes, placed...)
	if err := bed.waitPing(ctx, bed.NSA, innerB.Addr(), 20*time.Second); err != nil {
		return fail(fmt.Errorf("no traffic through the tunnel: %w", errors.Join(err, sess.Exited())))
	}
	batchErrLogged := false
	readBatches := func(test string) ([2]batchCounts, bool) {
		if sess.batches == nil || test == testPing {
			return [2]batchCounts{}, false
		}
		c, err := sess.batches(ctx)
		if err != nil && !batchErrLogged {
			logf("%s run %d: no batch fill: %v", t.Name(), run, err)
			batchErrLogged = true
		}
		return c, err == nil
	}
	for _, name := range o.tests {
		if err := sess.Exited(); err != nil {
			return fail(err)
		}
		var tr testResult
		var err error
		before, haveBefore := readBatches(name)
		switch name {
		case testPing:
			tr, err = runPing(ctx, bed, o.pingCount)
		case testTCP1:
			tr, err = runIperf(ctx, bed, iperfSpec{Streams: 1, Duration: o.duration}, sess.PIDs(), hz)
		case testTCP4:
			tr, err = runIperf(ctx, bed, iperfSpec{Streams: 4, Duration: o.duration}, sess.PIDs(), hz)
		case testUDP:
			tr, err = runIperf(ctx, bed, iperfSpec{Streams: 1, UDP: true, Len: o.udpLen, Rate: o.udpRate, Duration: o.duration}, sess.PIDs(), hz)
		}
		if err != nil {
			return fail(fmt.Errorf("%s: %w", name, err))
		}
		if after, ok := readBatches(name); ok && haveBefore {
			fill := fillBetween(before, after)
			tr.Batches = &fill
		}
		res.Tests[name] = tr
		logf("%s run %d: %s", t.Name(), run, describe(name, tr))
	}
	return res
}

// describe is a one-line progress summary of a test result.
func describe(name string, tr testResult) string {
	switch {
	case tr.Ping != nil:
		return fmt.Sprintf("ping avg %.3f ms (%d/%d)", tr.Ping.AvgMs, tr.Ping.Received, tr.Ping.Sent)
	case tr.Iperf != nil && name == testUDP:
		return fmt.Sprintf("%s %.1f kpps received, %.1f%% lost, %.1f kpps through the tunnel (%.0f dropped at iperf3's socket, %.0f at the tunnel's), tunnel CPU %.2fs%s", name,
			kpps(*tr.Iperf), lossPct(*tr.Iperf), tr.DeliveredPackets()/tr.Iperf.Seconds/1e3, tr.AppSocketDrops, tr.TunnelSocketDrops, tr.TunnelCPUSeconds, describeFill(tr))
	case tr.Iperf != nil:
		return fmt.Sprintf("%s %.2f Gbit/s, tunnel CPU %.2fs = %.2f CPU-s/GB, machine %.0f%% busy%s", name,
			gbps(*tr.Iperf), tr.TunnelCPUSeconds, tr.TunnelCPUSeconds/(tr.Iperf.Bytes/1e9), 100*tr.MachineBusy, describeFill(tr))
	}
	return name
}

// describeFill is ", batches A seal x, B open y packets per call", or ""
// without batch counters.
func describeFill(tr testResult) string {
	if tr.Batches == nil {
		return ""
	}
	return fmt.Sprintf(", batches A seal %s, B open %s packets per call",
		fmtNum(tr.Batches.SealPacketsPerCall, 1), fmtNum(tr.Batches.OpenPacketsPerCall, 1))
}
