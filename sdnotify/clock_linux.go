package sdnotify

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// monotonicMicros reads CLOCK_MONOTONIC (clock_gettime(2)), the clock
// systemd uses for MONOTONIC_USEC.
func monotonicMicros() (uint64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, fmt.Errorf("sdnotify: clock_gettime: %w", err)
	}
	return uint64(ts.Sec)*1e6 + uint64(ts.Nsec)/1e3, nil
}
