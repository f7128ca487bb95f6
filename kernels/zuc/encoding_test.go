//go:build amd64 && gc && !purego

package zuc

import (
	"os"
	"testing"

	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// TestAESENCLASTEncodable checks that every AESENCLAST of the AES-NI
// kernels (AESNI16 on ZMM included) is VEX-encodable, as CPUs without
// VAES need (kerneltest.VEXOnly).
func TestAESENCLASTEncodable(t *testing.T) {
	f, err := os.Open("zuc_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, errs := kerneltest.VEXOnly(f, "VAESENCLAST", func(string) bool { return false })
	for _, err := range errs {
		t.Error(err)
	}
	if n == 0 {
		t.Fatal("no AESENCLAST found")
	}
}
