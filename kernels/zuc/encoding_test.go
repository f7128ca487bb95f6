//go:build amd64 && gc && !purego

package zuc

import (
	"testing"

	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// TestAESENCLASTEncodable checks that every AESENCLAST of the AES-NI
// kernels (AESNI16 on ZMM included) is VEX-encodable, as CPUs without
// VAES need (kerneltest.VEXOnly).
func TestAESENCLASTEncodable(t *testing.T) {
	kerneltest.RequireVEXOnly(t, "zuc_amd64.s", "VAESENCLAST", func(string) bool { return false })
}
