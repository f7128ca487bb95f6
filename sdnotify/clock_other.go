//go:build !linux

package sdnotify

import "errors"

// monotonicMicros is only implemented on Linux, where systemd runs.
func monotonicMicros() (uint64, error) {
	return 0, errors.New("sdnotify: CLOCK_MONOTONIC is only read on Linux")
}
