// Package cryptotest is gmtun's conformance suite for the crypto/cipher
// interfaces: TestBlock, TestStream and TestAEAD check that an
// implementation honours the contracts callers of cipher.Block,
// cipher.Stream and cipher.AEAD rely on (roundtrips, buffer aliasing
// rules, panics on misuse, no release of unauthenticated plaintext). They
// check behaviour, not known answers: pair them with vector tests and a
// differential test against a reference.
//
// The suite is modelled on the habits of Go's crypto/internal/cryptotest
// and written for gmtun. Every helper takes a constructor so that each
// subtest starts from a fresh object with the same key.
package cryptotest

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// newRand returns a deterministic generator for the named test.
func newRand(name string) *rand.Rand {
	var seed [32]byte
	copy(seed[:], "gmtun cryptotest: "+name)
	return rand.New(rand.NewChaCha8(seed))
}

// randomBytes returns n bytes from rng.
func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// mustPanic fails t unless f panics.
func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

// mustNotModify fails t if f changes any byte of the buffers.
func mustNotModify(t *testing.T, what string, f func(), bufs ...[]byte) {
	t.Helper()
	saved := make([][]byte, len(bufs))
	for i, b := range bufs {
		saved[i] = bytes.Clone(b)
	}
	f()
	for i, b := range bufs {
		if !bytes.Equal(b, saved[i]) {
			t.Errorf("%s modified input %d", what, i)
		}
	}
}
