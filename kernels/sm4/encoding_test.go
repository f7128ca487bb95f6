//go:build amd64 && gc && !purego

package sm4

import (
	"os"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// TestAESENCLASTEncodable checks that every AESENCLAST of the AES-NI tiers
// (AVX512AESNI on ZMM included) is VEX-encodable, as CPUs without VAES
// need (kerneltest.VEXOnly).
func TestAESENCLASTEncodable(t *testing.T) {
	f, err := os.Open("sm4_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, errs := kerneltest.VEXOnly(f, "VAESENCLAST", func(text string) bool { return strings.Contains(text, "VAES(SB)") })
	for _, err := range errs {
		t.Error(err)
	}
	if n == 0 {
		t.Fatal("no AESENCLAST found")
	}
}
