//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// setHookProcessGroup runs cmd in a process group of its own, so that a
// timeout kills everything the hook started (a shell's children too).
func setHookProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
