package zuc

import (
	"testing"

	"github.com/gmtun/gmtun/internal/reftables"
)

// The table S-boxes of the standard: the oracle the circuit of
// sbox_ct.go is tested against, and the S-box layer of the table
// reference core (ct_oracle_test.go). They come from internal/reftables and
// are used only by test files: no production path indexes memory with
// secret data.
var (
	s0box = reftables.ZUCS0 // S0 of GB/T 33133.1-2016 (Table 1)
	s1box = reftables.ZUCS1 // S1 of GB/T 33133.1-2016 (Table 2)
)

// TestConstantsMatchStandard pins the key-loading constants of zuc.go
// (production code, which may not import internal/reftables) to the
// standards' tables.
func TestConstantsMatchStandard(t *testing.T) {
	if kd128 != reftables.ZUC128D {
		t.Errorf("kd128 = %#04x, want %#04x (GB/T 33133.1-2016)", kd128, reftables.ZUC128D)
	}
	if d256 != reftables.ZUC256D {
		t.Errorf("d256 = %#02x, want %#02x (ZUC-256, 2018)", d256, reftables.ZUC256D)
	}
}
