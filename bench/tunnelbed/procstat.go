//go:build linux

package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// atClkTck is the auxiliary vector entry that carries sysconf(_SC_CLK_TCK),
// the unit of the times in /proc/PID/stat and /proc/stat (getauxval(3)).
const atClkTck = 17

// defaultClockTicks is USER_HZ on every Linux architecture Go supports; it
// is used when the auxiliary vector cannot be read.
const defaultClockTicks = 100

// clockTicks returns the number of clock ticks per second used by /proc,
// read from this process's auxiliary vector (AT_CLKTCK), falling back to 100.
func clockTicks() int64 {
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return defaultClockTicks
	}
	if hz := parseAuxvClkTck(b); hz > 0 {
		return hz
	}
	return defaultClockTicks
}

// parseAuxvClkTck returns the AT_CLKTCK value of a 64-bit little-endian
// auxiliary vector (pairs of uint64 key and value, ended by AT_NULL), or 0.
func parseAuxvClkTck(b []byte) int64 {
	for len(b) >= 16 {
		key := binary.LittleEndian.Uint64(b[0:8])
		val := binary.LittleEndian.Uint64(b[8:16])
		b = b[16:]
		if key == 0 {
			break
		}
		if key == atClkTck && val > 0 && val < 1<<20 {
			return int64(val)
		}
	}
	return 0
}

// procCPUTicks returns utime+stime of the whole thread group of pid, in
// clock ticks (proc(5): fields 14 and 15 of /proc/PID/stat). Time spent by
// reaped children is not included.
func procCPUTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("tunnelbed: cpu time of pid %d: %w", pid, err)
	}
	return parsePIDStat(b)
}

// parsePIDStat extracts utime+stime from the contents of /proc/PID/stat.
// The command name (field 2) is in parentheses and may itself contain
// spaces and parentheses, so fields are counted after the last ')'.
func parsePIDStat(b []byte) (int64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("tunnelbed: malformed /proc/PID/stat: no ')'")
	}
	// After ')' come field 3 (state), 4 (ppid), …; utime is field 14.
	f := strings.Fields(string(b[i+1:]))
	const utimeIdx, stimeIdx = 14 - 3, 15 - 3
	if len(f) <= stimeIdx {
		return 0, fmt.Errorf("tunnelbed: malformed /proc/PID/stat: %d fields after the name", len(f))
	}
	u, err1 := strconv.ParseInt(f[utimeIdx], 10, 64)
	s, err2 := strconv.ParseInt(f[stimeIdx], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("tunnelbed: malformed /proc/PID/stat times: %w", err)
	}
	return u + s, nil
}

// cpuSnapshot is the CPU time of a set of processes at one moment.
type cpuSnapshot struct {
	ticks map[int]int64
}

// snapshotCPU reads the CPU time of every pid. A process that cannot be
// read is an error: a tunnel process that died mid-measurement must not
// silently count as zero.
func snapshotCPU(pids []int) (cpuSnapshot, error) {
	s := cpuSnapshot{ticks: make(map[int]int64, len(pids))}
	for _, pid := range pids {
		t, err := procCPUTicks(pid)
		if err != nil {
			return s, err
		}
		s.ticks[pid] = t
	}
	return s, nil
}

// cpuSecondsSince returns the CPU seconds used by the pids of before
// between before and now.
func cpuSecondsSince(before cpuSnapshot, hz int64) (float64, error) {
	var total int64
	for pid, t0 := range before.ticks {
		t1, err := procCPUTicks(pid)
		if err != nil {
			return 0, err
		}
		total += t1 - t0
	}
	return float64(total) / float64(hz), nil
}

// systemTimes is the aggregate "cpu" line of /proc/stat, in clock ticks.
type systemTimes struct {
	busy, total int64
}

// readSystemTimes reads the aggregate CPU line of /proc/stat.
func readSystemTimes() (systemTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return systemTimes{}, fmt.Errorf("tunnelbed: %w", err)
	}
	return parseProcStat(b)
}

// parseProcStat parses the first line of /proc/stat ("cpu user nice system
// idle iowait irq softirq steal guest guest_nice"). Idle and iowait count as
// idle; guest time is already included in user and is not added twice.
func parseProcStat(b []byte) (systemTimes, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return systemTimes{}, errors.New("tunnelbed: malformed /proc/stat: no aggregate cpu line")
	}
	var v [8]int64 // user nice system idle iowait irq softirq steal
	for i := range v {
		if 1+i >= len(f) {
			break
		}
		n, err := strconv.ParseInt(f[1+i], 10, 64)
		if err != nil {
			return systemTimes{}, fmt.Errorf("tunnelbed: malformed /proc/stat: %w", err)
		}
		v[i] = n
	}
	var t systemTimes
	for _, n := range v {
		t.total += n
	}
	t.busy = t.total - v[3] - v[4]
	return t, nil
}

// busyFraction is the fraction of all CPUs' time that was busy between a
// and b (0..1), or 0 when no time passed.
func busyFraction(a, b systemTimes) float64 {
	dt := b.total - a.total
	if dt <= 0 {
		return 0
	}
	return float64(b.busy-a.busy) / float64(dt)
}

// sampleBusy measures the machine's busy fraction over d.
func sampleBusy(d time.Duration) (float64, error) {
	a, err := readSystemTimes()
	if err != nil {
		return 0, err
	}
	time.Sleep(d)
	b, err := readSystemTimes()
	if err != nil {
		return 0, err
	}
	return busyFraction(a, b), nil
}
