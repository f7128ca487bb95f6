package sm4ref

import (
	"testing"

	"github.com/gmtun/gmtun/internal/reftables"
)

// TestExpandKey checks the schedule against GB/T 32907-2016 App. A
// example 1: its first and last round keys.
func TestExpandKey(t *testing.T) {
	key := []byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10}
	enc, dec := ExpandKey(key)
	if enc[0] != 0xf12186f9 || enc[31] != 0x9124a012 {
		t.Errorf("rk0 = %#08x, rk31 = %#08x; want 0xf12186f9, 0x9124a012", enc[0], enc[31])
	}
	if dec[0] != enc[31] || dec[31] != enc[0] {
		t.Error("decryption keys are not the encryption keys reversed")
	}
}

// TestSBox checks the computed S-box against Table 1 of GB/T 32907-2016
// (internal/reftables) on every input.
func TestSBox(t *testing.T) {
	for x := range 256 {
		if got, want := SBox(byte(x)), reftables.SM4SBox[x]; got != want {
			t.Errorf("SBox(%#02x) = %#02x, want %#02x", x, got, want)
		}
	}
}
