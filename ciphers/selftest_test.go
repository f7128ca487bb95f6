package ciphers

import (
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
)

// TestSelfTest runs the start-up self-test on every implementation of
// every primitive (the same switch the daemon relies on).
func TestSelfTest(t *testing.T) {
	for _, pkg := range []string{"sm4", "zuc"} {
		t.Run(pkg, func(t *testing.T) {
			impltest.TestAllImplementations(t, pkg, func(t *testing.T) {
				if err := SelfTest(); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}
