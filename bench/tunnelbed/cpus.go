//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Daemon placement (-daemon-cpus, -daemon-gomaxprocs): the tunnel daemons,
// and only they, run under `taskset -c LIST` and with GOMAXPROCS=N in
// their environment, so that the bed can show how throughput and CPU per
// GB change with the cores a tunnel gets (docs/DESIGN.md, "Scaling with
// cores"). taskset sets the affinity before the daemon's binary is
// executed, so a Go daemon's runtime.NumCPU (and everything sized from it:
// gmtun's TUN queues and crypto workers, wireguard-go's workers) already
// sees the restricted set.

// maxCPU bounds the CPU numbers of a list: the size of the kernel's
// default cpu_set_t (CPU_SETSIZE), which unix.CPUSet holds.
const maxCPU = 1024

// cpuList is a set of CPU numbers, ascending and without duplicates.
type cpuList []int

// parseCPUList parses a CPU list as taskset -c and the kernel's
// *_list files write it: comma-separated CPU numbers and inclusive
// ranges ("0", "0,2", "0-3,8-11"). Strides ("0-7:2") are not accepted.
// The result is sorted and deduplicated; an empty list is an error.
func parseCPUList(s string) (cpuList, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty CPU list")
	}
	var cpus cpuList
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(item, "-")
		first, err := parseCPU(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", s, err)
		}
		last := first
		if isRange {
			if last, err = parseCPU(hi); err != nil {
				return nil, fmt.Errorf("CPU list %q: %w", s, err)
			}
			if last < first {
				return nil, fmt.Errorf("CPU list %q: range %q runs backwards", s, item)
			}
		}
		for c := first; c <= last; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// parseCPU parses one CPU number of a list.
func parseCPU(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a CPU number", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n >= maxCPU {
		return 0, fmt.Errorf("CPU %q out of range 0..%d", s, maxCPU-1)
	}
	return n, nil
}

// String formats the list canonically, runs of consecutive CPUs as
// ranges ("0-3,8"): the form taskset -c takes and the kernel prints in
// Cpus_allowed_list.
func (l cpuList) String() string {
	var b strings.Builder
	for i := 0; i < len(l); {
		j := i
		for j+1 < len(l) && l[j+1] == l[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(l[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(l[j]))
		}
		i = j + 1
	}
	return b.String()
}

// checkCPUsAllowed fails unless every CPU of l is in allowed (the bed's
// own affinity: a daemon cannot be given a CPU the bed may not use).
func checkCPUsAllowed(l cpuList, allowed *unix.CPUSet) error {
	var missing cpuList
	for _, c := range l {
		if !allowed.IsSet(c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("CPU(s) %s not available to this process (it may use %d CPUs)", missing, allowed.Count())
	}
	return nil
}

// checkDaemonCPUs fails unless this process may use every CPU of l.
func checkDaemonCPUs(l cpuList) error {
	if len(l) == 0 {
		return nil
	}
	var own unix.CPUSet
	err := unix.SchedGetaffinity(0, &own)
	if err == nil {
		err = checkCPUsAllowed(l, &own)
	}
	if err != nil {
		return fmt.Errorf("tunnelbed: -daemon-cpus: %w", err)
	}
	return nil
}

// placement is how the bed restricts the tunnel daemons; the zero value
// leaves them alone.
type placement struct {
	// CPUs, if not empty, is the affinity given with taskset -c.
	CPUs cpuList
	// GOMAXPROCS, if positive, is put into the daemons' environment.
	GOMAXPROCS int
}

// wrap returns argv run under taskset when p restricts the CPUs.
func (p placement) wrap(argv []string) []string {
	if len(p.CPUs) == 0 {
		return argv
	}
	return append([]string{"taskset", "-c", p.CPUs.String()}, argv...)
}

// env returns the environment entries p adds.
func (p placement) env() []string {
	if p.GOMAXPROCS <= 0 {
		return nil
	}
	return []string{"GOMAXPROCS=" + strconv.Itoa(p.GOMAXPROCS)}
}

// describe is p in words for reports ("" when p restricts nothing).
func (p placement) describe() string {
	var parts []string
	if len(p.CPUs) > 0 {
		parts = append(parts, "CPUs "+p.CPUs.String()+" (taskset -c)")
	}
	if p.GOMAXPROCS > 0 {
		parts = append(parts, "GOMAXPROCS="+strconv.Itoa(p.GOMAXPROCS))
	}
	return strings.Join(parts, ", ")
}

// allowedCPUs reads the Cpus_allowed_list line of a /proc/PID/status
// file.
func allowedCPUs(status []byte) (cpuList, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			return parseCPUList(v)
		}
	}
	return nil, errors.New("no Cpus_allowed_list line")
}

// checkPlacement verifies that every daemon of s runs on exactly the CPUs
// p asked for (a cpuset cgroup could silently narrow taskset's mask) and
// returns one note per daemon for the report. It does nothing when p
// restricts nothing.
func checkPlacement(p placement, s *Session) ([]string, error) {
	if len(p.CPUs) == 0 && p.GOMAXPROCS <= 0 {
		return nil, nil
	}
	var notes []string
	for _, d := range s.Daemons {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.PID()))
		if err != nil {
			return nil, fmt.Errorf("tunnelbed: %s: %w", d.name, err)
		}
		got, err := allowedCPUs(b)
		if err != nil {
			return nil, fmt.Errorf("tunnelbed: %s: /proc/%d/status: %w", d.name, d.PID(), err)
		}
		if len(p.CPUs) > 0 && !slices.Equal(got, p.CPUs) {
			return nil, fmt.Errorf("tunnelbed: %s runs on CPUs %s, not the %s asked for with -daemon-cpus", d.name, got, p.CPUs)
		}
		note := d.name + ": CPUs " + got.String()
		if p.GOMAXPROCS > 0 {
			note += ", GOMAXPROCS=" + strconv.Itoa(p.GOMAXPROCS)
		}
		notes = append(notes, note)
	}
	return notes, nil
}
