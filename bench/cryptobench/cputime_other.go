//go:build !linux

package cryptobench

import "time"

// clockName describes the clock the measurements use. Without a
// per-thread CPU clock the numbers are wall-clock time and include
// whatever else the machine runs.
const clockName = "wall-clock time (no per-thread CPU clock on this OS)"

// epoch anchors the monotonic readings of threadCPU and processCPU.
var epoch = time.Now()

// threadCPU returns monotonic wall-clock time on this OS.
func threadCPU() (time.Duration, error) { return time.Since(epoch), nil }

// processCPU returns monotonic wall-clock time on this OS.
func processCPU() (time.Duration, error) { return time.Since(epoch), nil }

// cpuModel is unknown on this OS.
func cpuModel() string { return "" }
