package gf

import "testing"

// TestAESField checks Mul and Inv against FIPS 197's worked examples and
// that every non-zero element times its inverse is 1, in both fields.
func TestAESField(t *testing.T) {
	if got := Mul(0x57, 0x83, 0x11b); got != 0xc1 {
		t.Errorf("{57}·{83} = %#02x, want 0xc1 (FIPS 197 §4.2)", got)
	}
	if got := Mul(0x57, 0x13, 0x11b); got != 0xfe {
		t.Errorf("{57}·{13} = %#02x, want 0xfe (FIPS 197 §4.2.1)", got)
	}
	for _, poly := range []uint16{0x11b, 0x1f5} {
		if Inv(0, poly) != 0 {
			t.Errorf("Inv(0) != 0 for %#x", poly)
		}
		for a := 1; a < 256; a++ {
			if p := Mul(byte(a), Inv(byte(a), poly), poly); p != 1 {
				t.Fatalf("poly %#x: %#02x · Inv = %#02x", poly, a, p)
			}
		}
	}
}
