package main

import "golang.org/x/sys/unix"

// disableCoreDumps sets the process non-dumpable (prctl PR_SET_DUMPABLE
// 0): the kernel writes no core dump of it, other processes of the same
// user cannot ptrace it or read its /proc/PID/mem, and /proc/PID files
// belong to root. The systemd unit also sets LimitCORE=0.
func disableCoreDumps() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
