// Package threadcpu reads the CPU time of the calling OS thread. It has
// no dependency on package testing, so the daemon can use it (sampled: on
// Linux a read is a system call) as well as the benchmarks
// (internal/cputime).
package threadcpu

import (
	"slices"
	"sync"
	"time"
)

// Now returns the CPU time (user + system) consumed so far by the calling
// OS thread, or 0 where the platform cannot tell. A caller measuring an
// interval keeps its goroutine on one thread for it
// (runtime.LockOSThread).
func Now() time.Duration { return thread() }

// ReadCost returns what an interval measured with two calls of Now
// counts beyond the work between them: the second half of the first read
// and the first half of the second, together about one read (a system
// call on Linux: ≈ 1.4 µs on the 2-vCPU AMD EPYC VM of docs/BENCHMARKS.md).
// It is measured once, as the median of back-to-back pairs, on the
// calling thread.
func ReadCost() time.Duration { return readCost() }

var readCost = sync.OnceValue(func() time.Duration {
	d := make([]time.Duration, 15)
	for i := range d {
		a := Now()
		d[i] = Now() - a
	}
	slices.Sort(d)
	return max(d[len(d)/2], 0)
})
