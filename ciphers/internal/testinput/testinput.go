// Package testinput makes the inputs of the cipher packages' tests
// (ciphers/internal/sm4, ciphers/internal/ublock): random bytes from a
// seeded generator, copies at unaligned addresses, and the message
// lengths of the exhaustive tests. It is imported by tests only.
package testinput

import (
	"math/rand/v2"
	"testing"
)

// Bytes returns n random bytes from rng.
func Bytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// Unaligned returns a copy of b that starts off bytes into a fresh buffer.
func Unaligned(b []byte, off int) []byte {
	buf := make([]byte, len(b)+off)
	copy(buf[off:], b)
	return buf[off:]
}

// Lengths are the message lengths of the exhaustive tests: every length
// 0..4096 (every 7th with -short) and two longer ones.
func Lengths() []int {
	var ls []int
	step := 1
	if testing.Short() {
		step = 7
	}
	for n := 0; n <= 4096; n += step {
		ls = append(ls, n)
	}
	return append(ls, 8192, 65535)
}
