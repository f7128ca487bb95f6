//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// machineFacts describes the machine a report was measured on.
type machineFacts struct {
	CPUModel  string   `json:"cpu_model"`
	CPUs      int      `json:"cpus"`
	CPUFlags  []string `json:"cpu_flags"` // the SIMD features relevant to gmtun's kernels
	MemoryGiB float64  `json:"memory_gib"`
	Kernel    string   `json:"kernel"`
	OS        string   `json:"os"`
	Go        string   `json:"go"`
	Iperf3    string   `json:"iperf3"`
	Hostname  string   `json:"hostname"`
}

// interestingFlags are the /proc/cpuinfo flags reported, in this order.
var interestingFlags = []string{"aes", "pclmulqdq", "avx2", "bmi2", "avx512f", "avx512bw", "avx512vl", "gfni", "vaes", "vpclmulqdq", "sm4"}

// collectMachineFacts reads /proc and runs `iperf3 --version`.
func collectMachineFacts(ctx context.Context) machineFacts {
	m := machineFacts{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch {
			case k == "model name" && m.CPUModel == "":
				m.CPUModel = v
			case k == "flags" && m.CPUFlags == nil:
				have := map[string]bool{}
				for _, fl := range strings.Fields(v) {
					have[fl] = true
				}
				m.CPUFlags = []string{}
				for _, fl := range interestingFlags {
					if have[fl] {
						m.CPUFlags = append(m.CPUFlags, fl)
					}
				}
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %f kB", &kb); err == nil {
			m.MemoryGiB = kb / (1 << 20)
		}
	}
	m.OS = osRelease()
	m.Hostname, _ = os.Hostname()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "iperf3", "--version").Output(); err == nil {
		m.Iperf3 = firstLine(string(out))
	}
	return m
}

// osRelease returns PRETTY_NAME from /etc/os-release (os-release(5)).
func osRelease() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return runtime.GOOS
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return runtime.GOOS
}

// quietResult is the outcome of waiting for a quiet machine.
type quietResult struct {
	Busy   float64 `json:"busy"`   // last sampled busy fraction of all CPUs
	Waited float64 `json:"waited"` // seconds waited
	Quiet  bool    `json:"quiet"`  // false: gave up after the maximum wait
}

// waitQuiet samples the machine's busy fraction over 2-second windows
// until it is at most threshold or maxWait has passed (then it gives up
// and reports Quiet false; the caller warns and continues).
func waitQuiet(ctx context.Context, threshold float64, maxWait time.Duration) (quietResult, error) {
	start := time.Now()
	for {
		busy, err := sampleBusy(2 * time.Second)
		if err != nil {
			return quietResult{}, err
		}
		r := quietResult{Busy: busy, Waited: time.Since(start).Seconds(), Quiet: busy <= threshold}
		if r.Quiet || time.Since(start) >= maxWait {
			return r, nil
		}
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
	}
}
