//go:build linux

package cryptobench

import (
	"bufio"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// clockName describes the clock the measurements use.
const clockName = "thread CPU time (CLOCK_THREAD_CPUTIME_ID)"

// threadCPU returns the CPU time consumed by the calling OS thread; the
// caller has locked its goroutine to the thread.
func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}

// processCPU returns the CPU time consumed by all threads of the process
// (it includes the garbage collector's background work).
func processCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}

// cpuModel returns the processor's model name from /proc/cpuinfo, or ""
// if it cannot be read.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
