//go:build !linux

package main

// disableCoreDumps does nothing where prctl does not exist; gmtun's
// daemon runs on Linux only.
func disableCoreDumps() error { return nil }
