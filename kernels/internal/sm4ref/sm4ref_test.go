package sm4ref

import "testing"

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

// TestSBox checks the computed S-box against table 1 of GB/T 32907-2016
// (its first and last rows).
func TestSBox(t *testing.T) {
	first := []byte{0xd6, 0x90, 0xe9, 0xfe, 0xcc, 0xe1, 0x3d, 0xb7, 0x16, 0xb6, 0x14, 0xc2, 0x28, 0xfb, 0x2c, 0x05}
	last := []byte{0x18, 0xf0, 0x7d, 0xec, 0x3a, 0xdc, 0x4d, 0x20, 0x79, 0xee, 0x5f, 0x3e, 0xd7, 0xcb, 0x39, 0x48}
	for i := range 16 {
		if got := SBox(byte(i)); got != first[i] {
			t.Errorf("SBox(%#02x) = %#02x, want %#02x", i, got, first[i])
		}
		if got := SBox(byte(0xf0 + i)); got != last[i] {
			t.Errorf("SBox(%#02x) = %#02x, want %#02x", 0xf0+i, got, last[i])
		}
	}
}
