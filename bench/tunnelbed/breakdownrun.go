//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// bareVeth names the reference run without a tunnel: iperf3 straight over
// the veth between the namespaces.
const bareVeth = "bare veth"

// breakdownRun is one profiled iperf3 TCP test of one tunnel.
type breakdownRun struct {
	Tunnel string `json:"tunnel"`
	Run    int    `json:"run"`
	Error  string `json:"error,omitempty"`
	// Busy is the machine's busy fraction just before the session.
	Busy  float64 `json:"busy_before"`
	Gbps  float64 `json:"gbps"`
	Bytes float64 `json:"bytes"`
	// ProcCPUSeconds is the daemons' utime+stime from /proc.
	ProcCPUSeconds float64  `json:"proc_cpu_seconds"`
	Profile        *profile `json:"profile,omitempty"`
}

// perGB returns the daemons' breakdown in CPU-s/GB.
func (r breakdownRun) perGB() perGB { return normalize(r.Profile, r.Bytes) }

// classPerGB is the CPU-s/GB of a process class.
func (r breakdownRun) classPerGB(c procClass) float64 {
	return r.Profile.classSeconds(c) / (r.Bytes / 1e9)
}

// busyPerGB is the whole machine's busy CPU-s/GB (everything but idle).
func (r breakdownRun) busyPerGB() float64 {
	var s float64
	for c := range numClasses {
		if c != classIdle {
			s += r.Profile.classSeconds(c)
		}
	}
	return s / (r.Bytes / 1e9)
}

// bedPerGB is the CPU-s/GB of the bed's own work: the daemons, iperf3 and
// the kernel threads and idle-CPU softirqs that carry the packets (not
// perf, not other processes).
func (r breakdownRun) bedPerGB() float64 {
	var s float64
	for _, c := range []procClass{classSideA, classSideB, classIperf, classKernel} {
		s += r.Profile.classSeconds(c)
	}
	return s / (r.Bytes / 1e9)
}

// breakdownReport is what -breakdown produced.
type breakdownReport struct {
	Command  string         `json:"command"`
	Started  time.Time      `json:"started"`
	Finished time.Time      `json:"finished"`
	Machine  machineFacts   `json:"machine"`
	Seconds  float64        `json:"test_seconds"`
	Perf     string         `json:"perf"`
	Tunnels  []tunnelInfo   `json:"tunnels"`
	Runs     []breakdownRun `json:"runs"`
	// Daemons is the daemons' restriction (-daemon-cpus,
	// -daemon-gomaxprocs) in words; empty when unrestricted.
	Daemons string `json:"daemons,omitempty"`
}

// medianRun returns the successful run of tunnel whose daemons' total
// CPU-s/GB (the busy machine's CPU-s/GB for the bare veth) is the median,
// and every run's total, in run order.
func (br *breakdownReport) medianRun(tunnel string) (breakdownRun, []float64, bool) {
	var ok []breakdownRun
	for _, r := range br.Runs {
		if r.Tunnel == tunnel && r.Error == "" && r.Profile != nil {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return breakdownRun{}, nil, false
	}
	key := func(r breakdownRun) float64 {
		if tunnel == bareVeth {
			return r.bedPerGB()
		}
		return r.perGB().total()
	}
	totals := make([]float64, len(ok))
	for i, r := range ok {
		totals[i] = key(r)
	}
	sorted := slices.Clone(ok)
	slices.SortStableFunc(sorted, func(a, b breakdownRun) int {
		switch ka, kb := key(a), key(b); {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
	return sorted[(len(sorted)-1)/2], totals, true
}

// breakdownEstimate bounds a -breakdown run: per session start, stop, the
// test, perf script on a loaded machine and the quiet wait.
func breakdownEstimate(o *options, tunnels int) time.Duration {
	per := 60*time.Second + o.duration + o.quietWait
	return 10*time.Minute + time.Duration(o.runs*(tunnels+1))*per
}

// runBreakdown is tunnelbed -breakdown: it profiles one iperf3 TCP stream
// through each tunnel (and once over the bare veth) per run and prints the
// CPU-s/GB breakdown.
func runBreakdown(ctx context.Context, o *options, stdout io.Writer, logf func(string, ...any)) int {
	perfBin, err := findPerf(ctx)
	if err != nil {
		logf("%v", err)
		return exitSetup
	}
	if o.perfKeep != "" {
		if err := os.MkdirAll(o.perfKeep, 0o755); err != nil {
			logf("tunnelbed: -perf-keep: %v", err)
			return exitSetup
		}
	}
	nTunnels := 0
	if o.wireguard {
		nTunnels++
	}
	if o.gmtun != "" {
		nTunnels += len(o.suites)
	}
	if o.maxDuration == 0 {
		o.maxDuration = 2 * breakdownEstimate(o, nTunnels)
	}
	ctx, cancel := context.WithTimeout(ctx, o.maxDuration)
	defer cancel()
	logf("at most %v in total (-max-duration)", o.maxDuration.Round(time.Second))

	br := &breakdownReport{
		Command: strings.Join(append([]string{"tunnelbed"}, os.Args[1:]...), " "),
		Started: time.Now(),
		Seconds: o.duration.Seconds(),
		Perf:    "perf " + strings.Join(perfArgs, " "),
		Daemons: o.daemons.describe(),
	}
	tools := map[string]string{}
	for k, v := range requiredTools {
		if k != "wg" || o.wireguard {
			tools[k] = v
		}
	}
	if len(o.daemons.CPUs) > 0 {
		tools["taskset"] = "util-linux"
	}
	if err := ensureTools(ctx, o.install, logf, tools); err != nil {
		logf("%v", err)
		return exitSetup
	}
	br.Machine = collectMachineFacts(ctx)
	dir, err := os.MkdirTemp("", namePrefix)
	if err != nil {
		logf("%v", err)
		return exitSetup
	}
	defer os.RemoveAll(dir)

	var tunnels []Tunnel
	if o.wireguard {
		bin := o.wgBin
		if bin == "" {
			goBin, err := findGo(o.goBin)
			if err != nil {
				logf("%v", err)
				return exitSetup
			}
			logf("building wireguard-go %s@%s", wireguardGoModule, wireguardGoVersion)
			if bin, err = buildWireguardGo(ctx, goBin, dir); err != nil {
				logf("%v", err)
				return exitSetup
			}
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
		return exitSetup
	}
	defer func() {
		if err := bed.Down(); err != nil {
			logf("teardown: %v", err)
		}
	}()
	if err := bed.CheckUnderlay(ctx, 10*time.Second); err != nil {
		logf("%v", err)
		return exitSetup
	}
	code := exitOK
	br.Tunnels = append(br.Tunnels, tunnelInfo{Name: bareVeth})
	ready := []Tunnel{nil} // nil: the bare veth
	for _, t := range tunnels {
		info := tunnelInfo{Name: t.Name()}
		if err := t.Prepare(ctx, bed, dir); err != nil {
			info.Error = err.Error()
			logf("%s: skipped: %v", t.Name(), err)
			code = exitPartial
		} else {
			ready = append(ready, t)
		}
		br.Tunnels = append(br.Tunnels, info)
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
			r := breakdownSession(ctx, o, bed, t, perfBin, dir, run, hz, logf)
			if r.Error != "" {
				code = exitPartial
			}
			br.Runs = append(br.Runs, r)
		}
	}
	if ctx.Err() != nil {
		logf("stopped early: %v", context.Cause(ctx))
		code = exitPartial
	}
	br.Finished = time.Now()
	if o.jsonPath != "" {
		b, err := json.MarshalIndent(br, "", "  ")
		if err == nil {
			err = os.WriteFile(o.jsonPath, append(b, '\n'), 0o644)
		}
		if err != nil {
			logf("writing %s: %v", o.jsonPath, err)
			code = exitPartial
		}
	}
	writeBreakdown(stdout, br)
	return code
}

// breakdownSession profiles one iperf3 TCP stream through t (nil: over the
// bare veth). Failures are recorded in the result.
func breakdownSession(ctx context.Context, o *options, bed *Bed, t Tunnel, perfBin, dir string, run int, hz int64, logf func(string, ...any)) breakdownRun {
	name := bareVeth
	if t != nil {
		name = t.Name()
	}
	res := breakdownRun{Tunnel: name, Run: run}
	fail := func(err error) breakdownRun {
		res.Error = err.Error()
		logf("%s run %d: %v", name, run, err)
		return res
	}
	q, err := waitQuiet(ctx, o.quietBusy, o.quietWait)
	if err != nil {
		return fail(err)
	}
	res.Busy = q.Busy
	if !q.Quiet {
		logf("warning: machine still %.0f%% busy after %.0fs; measuring anyway", 100*q.Busy, q.Waited)
	}
	dst := underlayB.Addr()
	var daemons [2]int
	if t != nil {
		logf("%s run %d/%d: starting", name, run, o.runs)
		sess, err := t.Start(ctx, bed)
		if err != nil {
			return fail(err)
		}
		defer func() {
			if err := sess.Stop(); err != nil {
				logf("%s run %d: stop: %v", name, run, err)
			}
		}()
		placed, err := checkPlacement(bed.Daemons, sess)
		if err != nil {
			return fail(err)
		}
		for _, n := range placed {
			logf("%s run %d: %s", name, run, n)
		}
		if err := bed.waitPing(ctx, bed.NSA, innerB.Addr(), 20*time.Second); err != nil {
			return fail(fmt.Errorf("no traffic through the tunnel: %w", err))
		}
		pids := sess.PIDs()
		if len(pids) != 2 {
			return fail(fmt.Errorf("tunnelbed: %d daemons, want one per side", len(pids)))
		}
		daemons = [2]int{pids[0], pids[1]}
		dst = innerB.Addr()
	}
	keep := ""
	if o.perfKeep != "" {
		keep = filepath.Join(o.perfKeep, fmt.Sprintf("%s-run%d.perf.data", strings.ReplaceAll(name, " ", "-"), run))
	}
	pi, err := runProfiledIperf(ctx, bed, perfBin, dir, keep, dst, o.duration, daemons, hz)
	if err != nil {
		return fail(err)
	}
	res.Gbps, res.Bytes, res.ProcCPUSeconds, res.Profile = gbps(pi.Iperf), pi.Iperf.Bytes, pi.ProcCPUSeconds, pi.Profile
	if t != nil {
		g := res.perGB()
		logf("%s run %d: %.2f Gbit/s, daemons %.2f CPU-s/GB (crypto %.2f, plumbing %.2f), %d samples",
			name, run, res.Gbps, g.total(), g.bucketTotal(bucketCrypto), g.plumbing(), res.Profile.Samples)
	} else {
		logf("%s run %d: %.2f Gbit/s, bed %.2f CPU-s/GB, %d samples", name, run, res.Gbps, res.bedPerGB(), res.Profile.Samples)
	}
	return res
}
