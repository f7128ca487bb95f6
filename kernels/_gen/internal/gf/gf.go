// Package gf is GF(2^8) arithmetic for the generators' S-box derivations
// (SM4's affine–inverse–affine forms for GFNI, AES-NI and the Boolean
// circuit of the portable code). It runs only at generation time, on public constants, so it is
// plain variable-time code.
package gf

// Mul multiplies a and b in GF(2^8) modulo poly (a degree-8 polynomial,
// e.g. 0x11b for AES, 0x1f5 for SM4).
func Mul(a, b byte, poly uint16) byte {
	var r uint16
	x := uint16(a)
	for i := 0; i < 8; i++ {
		if b>>i&1 == 1 {
			r ^= x
		}
		x <<= 1
		if x&0x100 != 0 {
			x ^= poly
		}
	}
	return byte(r)
}

// Inv returns the multiplicative inverse of a modulo poly (a^254), with 0
// mapped to 0 as in both S-box constructions.
func Inv(a byte, poly uint16) byte {
	r := byte(1)
	for i := 0; i < 254; i++ {
		r = Mul(r, a, poly)
	}
	return r
}
