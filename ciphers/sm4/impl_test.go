package sm4

import (
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	"github.com/gmtun/gmtun/ciphers/internal/sm4"
)

// TestAllImplementations runs the standard vectors (GB/T 32907-2016,
// GB/T 17964 modes, RFC 8998 GCM), the conformance suites and the
// differential tests against gmsm once per SIMD tier and once on the
// generic code.
func TestAllImplementations(t *testing.T) {
	impltest.TestAllImplementations(t, sm4.ImplPackage, func(t *testing.T) {
		for name, f := range map[string]func(*testing.T){
			"BlockVectors":     TestBlockVectors,
			"ModeVectors":      TestModeVectors,
			"GCMVectors":       TestGCMVectors,
			"BlockConformance": TestBlockConformance,
			"CTRConformance":   TestCTRConformance,
			"GCMConformance":   TestGCMConformance,
			"DiffBlock":        TestDiffBlock,
			"DiffCTR":          TestDiffCTR,
			"DiffGCM":          TestDiffGCM,
		} {
			t.Run(name, f)
		}
	})
}
