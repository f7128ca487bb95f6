//go:build amd64 && gc && !purego

package sm4

import (
	"strings"
	"testing"

	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// TestAESENCLASTEncodable checks that every AESENCLAST of the AES-NI tiers
// (AVX512AESNI on ZMM included) is VEX-encodable, as CPUs without VAES
// need (kerneltest.VEXOnly).
func TestAESENCLASTEncodable(t *testing.T) {
	kerneltest.RequireVEXOnly(t, "sm4_amd64.s", "VAESENCLAST", func(text string) bool { return strings.Contains(text, "VAES(SB)") })
}
