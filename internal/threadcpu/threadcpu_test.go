package threadcpu

import (
	"runtime"
	"testing"
	"time"
)

func TestThreadAdvancesWithWork(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("thread CPU time is measured on Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := Now()
	if start <= 0 {
		t.Fatalf("Now() = %v at start, want > 0", start)
	}
	x := uint64(1)
	for begin := time.Now(); time.Since(begin) < 20*time.Millisecond; {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 0 {
		t.Log("unreachable; keeps the loop alive")
	}
	if d := Now() - start; d < time.Millisecond {
		t.Fatalf("20 ms of busy work advanced thread CPU time by only %v", d)
	}
}

func TestReadCost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("thread CPU time is measured on Linux only")
	}
	c := ReadCost()
	if c <= 0 || c > 100*time.Microsecond {
		t.Errorf("ReadCost() = %v, want a system call's cost (> 0, well under 100 µs)", c)
	}
	if ReadCost() != c {
		t.Error("ReadCost changed between calls; it is measured once")
	}
}
