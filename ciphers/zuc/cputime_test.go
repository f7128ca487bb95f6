package zuc

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has consumed.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD (Linux)
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loopCPU runs f in a b.Loop on a locked thread and reports, besides the
// wall-clock figures, the thread's CPU time per op and CPU-time MB/s
// ("cpu-MB/s"), which are stable on a shared, oversubscribed machine.
func loopCPU(b *testing.B, bytesPerOp int, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(bytesPerOp))
	b.ReportAllocs()
	start := threadCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	cpu := threadCPU() - start
	if n > 0 && cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
		b.ReportMetric(float64(bytesPerOp)*float64(n)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}
