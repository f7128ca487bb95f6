//go:build linux

package main

import (
	"encoding/binary"
	"os"
	"testing"
	"time"
)

func TestParsePIDStat(t *testing.T) {
	// A command name with spaces and parentheses: fields must be counted
	// after the last ')'. utime = 1200, stime = 34.
	line := "4242 (we (ird) name) S 1 4242 4242 0 -1 4194560 500 0 0 0 1200 34 7 8 20 0 12 0 100 1000000 300 18446744073709551615\n"
	got, err := parsePIDStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if got != 1234 {
		t.Errorf("parsePIDStat = %d, want 1234", got)
	}
	for _, bad := range []string{"", "12 (x S 1 2", "12 (x) S 1 2 3", "12 (x) S 1 2 3 4 5 6 7 8 9 10 u s"} {
		if _, err := parsePIDStat([]byte(bad)); err == nil {
			t.Errorf("parsePIDStat(%q) succeeded", bad)
		}
	}
}

func TestProcCPUTicksGrows(t *testing.T) {
	hz := clockTicks()
	if hz <= 0 || hz > 10000 {
		t.Fatalf("clockTicks = %d", hz)
	}
	before, err := snapshotCPU([]int{os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	// Burn at least 3 ticks of CPU; the counter must see it.
	x := 0
	for start := time.Now(); time.Since(start) < 5*time.Duration(int64(time.Second)/hz); {
		for i := range 1000 {
			x += i
		}
	}
	_ = x
	got, err := cpuSecondsSince(before, hz)
	if err != nil {
		t.Fatal(err)
	}
	if got <= 0 || got > 60 {
		t.Errorf("cpu seconds after a busy loop = %v, want > 0", got)
	}
	if _, err := procCPUTicks(-1); err == nil {
		t.Error("procCPUTicks(-1) succeeded")
	}
}

func TestParseAuxvClkTck(t *testing.T) {
	put := func(pairs ...uint64) []byte {
		b := make([]byte, 8*len(pairs))
		for i, v := range pairs {
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
		return b
	}
	if got := parseAuxvClkTck(put(6, 4096, atClkTck, 250, 0, 0)); got != 250 {
		t.Errorf("AT_CLKTCK = %d, want 250", got)
	}
	if got := parseAuxvClkTck(put(6, 4096, 0, 0, atClkTck, 250)); got != 0 {
		t.Errorf("entry after AT_NULL used: %d", got)
	}
	if got := parseAuxvClkTck(put(6, 4096)); got != 0 {
		t.Errorf("missing AT_CLKTCK gave %d", got)
	}
}

func TestParseProcStat(t *testing.T) {
	in := "cpu  100 5 50 800 20 3 7 15 40 0\ncpu0 50 2 25 400 10 1 3 7 20 0\nintr 1\n"
	got, err := parseProcStat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	// total = user..steal = 100+5+50+800+20+3+7+15; guest is inside user.
	if got.total != 1000 || got.busy != 1000-800-20 {
		t.Errorf("parseProcStat = %+v, want total 1000 busy 180", got)
	}
	if _, err := parseProcStat([]byte("intr 1\n")); err == nil {
		t.Error("no cpu line accepted")
	}
	a, b := systemTimes{busy: 100, total: 1000}, systemTimes{busy: 400, total: 2000}
	if f := busyFraction(a, b); f != 0.3 {
		t.Errorf("busyFraction = %v, want 0.3", f)
	}
	if f := busyFraction(a, a); f != 0 {
		t.Errorf("busyFraction over no time = %v", f)
	}
	live, err := readSystemTimes()
	if err != nil || live.total <= 0 || live.busy < 0 || live.busy > live.total {
		t.Errorf("readSystemTimes = %+v, %v", live, err)
	}
}
