// Package cputime reports the CPU time of benchmark loops (the calling OS
// thread's, read with internal/threadcpu), for shared, oversubscribed
// machines where wall-clock time swings by 2–3× but a thread's own CPU
// time stays put.
package cputime

import (
	"runtime"
	"testing"

	"github.com/gmtun/gmtun/internal/threadcpu"
)

// Loop runs f in b.Loop on a locked OS thread and reports, besides the
// usual wall-clock figures, the thread's CPU time per operation
// ("cpu-ns/op") and the CPU-time throughput ("cpu-MB/s") for bytesPerOp
// bytes per call. It also calls b.SetBytes and b.ReportAllocs.
func Loop(b *testing.B, bytesPerOp int, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(bytesPerOp))
	b.ReportAllocs()
	start := threadcpu.Now()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	cpu := threadcpu.Now() - start
	if n > 0 && cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
		b.ReportMetric(float64(bytesPerOp)*float64(n)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}
