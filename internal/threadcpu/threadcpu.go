// Package threadcpu reads the CPU time of the calling OS thread. It has
// no dependency on package testing, so the daemon can use it (sampled: on
// Linux a read is a system call) as well as the benchmarks
// (internal/cputime).
package threadcpu

import "time"

// Now returns the CPU time (user + system) consumed so far by the calling
// OS thread, or 0 where the platform cannot tell. A caller measuring an
// interval keeps its goroutine on one thread for it
// (runtime.LockOSThread).
func Now() time.Duration { return thread() }
