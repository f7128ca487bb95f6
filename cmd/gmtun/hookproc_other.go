//go:build !unix

package main

import "os/exec"

// setHookProcessGroup: outside Unix, the timeout kills the command only.
func setHookProcessGroup(cmd *exec.Cmd) {}
