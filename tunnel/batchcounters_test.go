package tunnel

import (
	"runtime"
	"testing"
	"time"
)

// TestBatchCountersTime: every call's wall-clock time is counted, and one
// call in cpuSampleEvery also measures its thread's CPU time, which for
// busy work is close to the wall-clock time and never above it by more
// than the clocks' granularity.
func TestBatchCountersTime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("thread CPU time is measured on Linux only")
	}
	var c batchCounters
	const calls, n = 3 * cpuSampleEvery, 20
	spin := func() {
		x := uint64(1)
		for begin := time.Now(); time.Since(begin) < 200*time.Microsecond; {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if x == 0 {
			t.Log("unreachable; keeps the loop alive")
		}
	}
	start := time.Now()
	for range calls {
		tm := c.start()
		spin()
		c.done(tm, n)
	}
	elapsed := time.Since(start)
	b := c.load()
	if b.Calls != calls || b.Packets != calls*n || b.Groups != calls*((n+KernelLanes-1)/KernelLanes) {
		t.Fatalf("counts %+v, want %d calls of %d packets", b, calls, n)
	}
	if b.Nanos < uint64(calls*200*time.Microsecond) || b.Nanos > uint64(elapsed) {
		t.Errorf("wall time inside the calls %v, want between %v and %v", time.Duration(b.Nanos), calls*200*time.Microsecond, elapsed)
	}
	if b.SampledPackets != 3*n {
		t.Fatalf("sampled packets %d, want those of 3 calls (%d)", b.SampledPackets, 3*n)
	}
	// Busy work: the thread's CPU time in the 3 sampled calls is most of
	// their ≥ 600 µs (a tenth even on a crowded machine), and no more
	// than the wall-clock time of all calls.
	if cpu := time.Duration(b.SampledCPUNanos); cpu < 60*time.Microsecond || cpu > time.Duration(b.Nanos) {
		t.Errorf("thread CPU time in the sampled calls %v, want between 60 µs and the wall-clock time of all calls (%v)", cpu, time.Duration(b.Nanos))
	}
	if got, want := b.CPUNanosPerPacket(), float64(b.SampledCPUNanos)/float64(3*n); got != want {
		t.Errorf("CPUNanosPerPacket = %v, want %v", got, want)
	}
	if BatchStats.CPUNanosPerPacket(BatchStats{}) != 0 || BatchStats.NanosPerPacket(BatchStats{}) != 0 {
		t.Error("per-packet times without calls are not 0")
	}
}
