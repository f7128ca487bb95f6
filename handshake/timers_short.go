//go:build gmtun_shorttimers

package handshake

import "time"

// A test-only build (go build -tags gmtun_shorttimers) rekeys every 10 s
// and rejects keypairs after 20 s, so a soak of minutes crosses many
// rekeys and keypair expiries (docs/RELIABILITY.md, "Soak"). The
// relations the protocol needs still hold: RejectAfterTime >
// RekeyAfterTime + RekeyTimeout, and the receive-side rekey age
// RejectAfterTime − KeepaliveTimeout − RekeyTimeout stays positive (5 s).
// The daemon logs a warning at start when built this way; the Makefile
// builds it only into a temporary directory for the fault bed.
const (
	rekeyAfterTime  = 10 * time.Second
	rejectAfterTime = 20 * time.Second
)

// ShortTimers reports whether this build shortens the key lifetimes for
// tests; true only in a gmtun_shorttimers build.
const ShortTimers = true
