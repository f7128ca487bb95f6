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
