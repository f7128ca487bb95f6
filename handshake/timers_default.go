//go:build !gmtun_shorttimers

package handshake

import "time"

// The key lifetimes of every production build: WireGuard's values.
const (
	rekeyAfterTime  = 120 * time.Second
	rejectAfterTime = 180 * time.Second
)

// ShortTimers reports whether this build shortens the key lifetimes for
// tests (the gmtun_shorttimers build tag); it is false in every product
// build.
const ShortTimers = false
