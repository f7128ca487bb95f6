// Package sm4ref is a plain, variable-time SM4 key schedule for the kernel
// packages' tests, which cannot import ciphers/internal/sm4 (Go's internal
// rule) and check the kernels themselves against gmsm. It holds no table
// (the S-box is computed from its definition; FK comes from
// internal/reftables) and is not used by any non-test code.
package sm4ref

import (
	"encoding/binary"
	"math/bits"

	"github.com/gmtun/gmtun/internal/reftables"
)

// SBox returns the SM4 S-box τ of GB/T 32907-2016 §6.2.1 at x, computed
// from its algebraic structure τ(x) = A·(A·x ⊕ C)⁻¹ ⊕ C in GF(2^8) modulo
// x^8+x^7+x^6+x^5+x^4+x^2+1 (A circulant with first row 0xd3, C = 0xd3).
// It is slow and test-only; sm4ref_test.go checks it against the
// standard's table (internal/reftables) on all 256 inputs and App. A's
// round keys.
func SBox(x byte) byte {
	y := affine(x)
	// y^254 = y⁻¹ (0 ↦ 0) by square-and-multiply.
	inv := byte(1)
	for i := 7; i >= 0; i-- {
		inv = gfMul(inv, inv)
		if 254>>i&1 == 1 {
			inv = gfMul(inv, y)
		}
	}
	return affine(inv)
}

// affine is A·x ⊕ C with A the circulant matrix of first row 0xd3
// (output bits MSB first) and C = 0xd3.
func affine(x byte) byte {
	var out byte
	for i := range 8 {
		row := bits.RotateLeft8(0xd3, -i)
		out = out<<1 | byte(bits.OnesCount8(row&x)&1)
	}
	return out ^ 0xd3
}

// gfMul multiplies in GF(2^8) modulo x^8+x^7+x^6+x^5+x^4+x^2+1.
func gfMul(a, b byte) byte {
	var r byte
	for ; b != 0; b >>= 1 {
		if b&1 != 0 {
			r ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0xf5
		}
	}
	return r
}

// ExpandKey is the SM4 key schedule of GB/T 32907-2016 §7.3: the 32
// encryption round keys and the same in reverse order for decryption.
// key must be 16 bytes.
func ExpandKey(key []byte) (enc, dec [32]uint32) {
	fk := reftables.SM4FK
	var k [36]uint32
	for i := 0; i < 4; i++ {
		k[i] = binary.BigEndian.Uint32(key[4*i:]) ^ fk[i]
	}
	for i := 0; i < 32; i++ {
		var ck uint32
		for j := 0; j < 4; j++ {
			ck = ck<<8 | uint32((4*i+j)*7%256)
		}
		a := k[i+1] ^ k[i+2] ^ k[i+3] ^ ck
		var b uint32
		for j := 0; j < 4; j++ {
			b |= uint32(SBox(byte(a>>(8*j)))) << (8 * j)
		}
		k[i+4] = k[i] ^ b ^ bits.RotateLeft32(b, 13) ^ bits.RotateLeft32(b, 23)
		enc[i] = k[i+4]
	}
	for i := range dec {
		dec[i] = enc[31-i]
	}
	return enc, dec
}
