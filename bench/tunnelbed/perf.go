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
	"time"
)

// perfArgs are the `perf record` arguments of -breakdown: every CPU, call
// chains, the cpu-clock software event (a VM often has no hardware
// counters) at 999 Hz, no copies of the binaries into ~/.debug.
var perfArgs = []string{"record", "-q", "-N", "-a", "-g", "-e", "cpu-clock", "-F", "999"}

// perfScriptFields are the fields parsePerfScript reads.
const perfScriptFields = "comm,pid,tid,period,ip,sym,dso"

// findPerf returns the perf command, or an error of one sentence when it
// is missing or does not run on this kernel (Debian's /usr/bin/perf is a
// wrapper that needs a perf matching the kernel or a fallback).
func findPerf(ctx context.Context) (string, error) {
	bin, err := exec.LookPath("perf")
	if err != nil {
		return "", errors.New("tunnelbed: -breakdown needs perf, which is not installed (Debian: apt-get install linux-perf)")
	}
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, "version").CombinedOutput(); err != nil {
		return "", fmt.Errorf("tunnelbed: -breakdown needs a working perf, but `%s version` failed: %v: %s", bin, err, firstLine(string(out)))
	}
	return bin, nil
}

// profiledIperf is one iperf3 TCP test recorded by perf.
type profiledIperf struct {
	Iperf iperfResult
	// ProcCPUSeconds is utime+stime of the daemons from /proc over the
	// test: a cross-check of what perf attributed to them.
	ProcCPUSeconds float64
	Profile        *profile
}

// runProfiledIperf runs one iperf3 TCP test (one stream, duration d) from
// A to dst in B under `perf record -a` and parses the recording. perf
// starts the iperf3 client as its workload, so sampling covers exactly
// the test. daemons are the tunnel's PIDs in A and B (zero without a
// tunnel). The recording is written to keep, or else to dir and removed.
func runProfiledIperf(ctx context.Context, bed *Bed, perfBin, dir, keep string, dst netip.Addr, d time.Duration, daemons [2]int, hz int64) (profiledIperf, error) {
	var res profiledIperf
	ctx, cancel := context.WithTimeout(ctx, d+iperfSlack)
	defer cancel()
	srv := bed.Command(ctx, bed.NSB, "iperf3", "-s", "-1", "-p", strconv.Itoa(iperfPort))
	srvLog := &tailBuffer{max: 4096}
	srv.Stdout, srv.Stderr = srvLog, srvLog
	if err := srv.Start(); err != nil {
		return res, fmt.Errorf("tunnelbed: iperf3 server: %w", err)
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
		return res, fmt.Errorf("%w (server output: %s)", err, srvLog.Tail(3))
	}

	var pids []int
	for _, p := range daemons {
		if p > 0 {
			pids = append(pids, p)
		}
	}
	cpu0, err := snapshotCPU(pids)
	if err != nil {
		return res, err
	}
	data := keep
	if data == "" {
		data = filepath.Join(dir, "perf.data")
		defer os.Remove(data)
	}
	cli := bed.Command(ctx, bed.NSA, iperfSpec{Streams: 1, Duration: d}.args(dst.String())...)
	// perf runs the client (nice … ip netns exec … iperf3) as its workload.
	cli.Args = append(append(append([]string{"perf"}, perfArgs...), "-o", data, "--"), cli.Args...)
	cli.Path = perfBin
	var cliErr strings.Builder
	cli.Stderr = &cliErr
	out, runErr := cli.Output()
	procCPU, cpuErr := cpuSecondsSince(cpu0, hz)
	r, perr := parseIperf(out)
	if perr != nil {
		return res, fmt.Errorf("%w (perf record + iperf3 client: %v: %s)", perr, runErr, strings.TrimSpace(cliErr.String()))
	}
	if cpuErr != nil {
		return res, cpuErr
	}
	if r.Bytes <= 0 {
		return res, errors.New("tunnelbed: iperf3 moved no bytes")
	}
	perfPID := 0
	if cli.Process != nil {
		perfPID = cli.Process.Pid
	}
	p, err := perfScript(ctx, perfBin, data, daemons, perfPID)
	if err != nil {
		return res, err
	}
	return profiledIperf{Iperf: r, ProcCPUSeconds: procCPU, Profile: p}, nil
}

// perfScript runs `perf script` on a recording and parses its output as it
// streams. It runs while the daemons still live, so perf resolves their
// symbols from the running binaries.
func perfScript(ctx context.Context, perfBin, data string, daemons [2]int, perfPID int) (*profile, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, perfBin, "script", "-i", data, "-F", perfScriptFields)
	errBuf := &tailBuffer{max: 4096}
	cmd.Stderr = errBuf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("tunnelbed: perf script: %w", err)
	}
	p, perr := parsePerfScript(stdout, daemons, perfPID)
	if perr != nil {
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	if perr != nil {
		return nil, perr
	}
	if werr != nil {
		return nil, fmt.Errorf("tunnelbed: perf script: %v: %s", werr, errBuf.Tail(3))
	}
	return p, nil
}
