package sm4

import (
	"encoding/binary"
	"math/bits"
)

// GHASH (NIST SP 800-38D §6.4) in constant time.
//
// A field element is held as two big-endian 64-bit words [hi, lo] of its
// 16-byte encoding, so the coefficient of x^i is bit 127−i ("reflected"
// order, §6.3). The carry-less 64×64-bit products are computed with
// ordinary integer multiplications on operands whose set bits are at least
// five positions apart ("holes", the technique of BearSSL's ghash_ctmul64
// adapted to full 128-bit products): a piece keeps the bits of one residue
// class mod 5, at most 13 of them, so every column sum of an integer
// product is below 16 and stays inside its 4-bit hole; the parity of the
// column is the carry-less result. No memory access depends on H or on the
// data, and math/bits.Mul64 is a single constant-time MUL on amd64 and
// arm64.

// holeMask[c] has the bits at positions ≡ c (mod 5) of a 64-bit word.
var holeMask = [5]uint64{
	0x1084210842108421,
	0x1084210842108421 << 1,
	0x1084210842108421 << 2,
	0x1084210842108421 << 3,
	0x1084210842108421 << 4 & (1<<64 - 1),
}

// ghashKey is the precomputed hash subkey H = E_K(0^128): for each of the
// three Karatsuba operands (H_hi, H_lo, H_hi ⊕ H_lo), its five hole-masked
// pieces.
type ghashKey struct {
	h [3][5]uint64
}

// initGHASHKey precomputes key from the hash subkey h (16 bytes).
func initGHASHKey(key *ghashKey, h *[16]byte) {
	hi := binary.BigEndian.Uint64(h[0:8])
	lo := binary.BigEndian.Uint64(h[8:16])
	for c := range 5 {
		key.h[0][c] = hi & holeMask[c]
		key.h[1][c] = lo & holeMask[c]
		key.h[2][c] = (hi ^ lo) & holeMask[c]
	}
}

// clmul64 returns the 128-bit carry-less product of x and the operand
// whose hole-masked pieces are y, as (high word, low word).
func clmul64(x uint64, y *[5]uint64) (hi, lo uint64) {
	x0, x1, x2, x3, x4 := x&holeMask[0], x&holeMask[1], x&holeMask[2], x&holeMask[3], x&holeMask[4]
	y0, y1, y2, y3, y4 := y[0], y[1], y[2], y[3], y[4]

	// z_c collects the products whose bits land on positions ≡ c (mod 5).
	var h0, l0, h1, l1, h2, l2, h3, l3, h4, l4, h, l uint64
	h0, l0 = bits.Mul64(x0, y0)
	h, l = bits.Mul64(x1, y4)
	h0, l0 = h0^h, l0^l
	h, l = bits.Mul64(x2, y3)
	h0, l0 = h0^h, l0^l
	h, l = bits.Mul64(x3, y2)
	h0, l0 = h0^h, l0^l
	h, l = bits.Mul64(x4, y1)
	h0, l0 = h0^h, l0^l

	h1, l1 = bits.Mul64(x0, y1)
	h, l = bits.Mul64(x1, y0)
	h1, l1 = h1^h, l1^l
	h, l = bits.Mul64(x2, y4)
	h1, l1 = h1^h, l1^l
	h, l = bits.Mul64(x3, y3)
	h1, l1 = h1^h, l1^l
	h, l = bits.Mul64(x4, y2)
	h1, l1 = h1^h, l1^l

	h2, l2 = bits.Mul64(x0, y2)
	h, l = bits.Mul64(x1, y1)
	h2, l2 = h2^h, l2^l
	h, l = bits.Mul64(x2, y0)
	h2, l2 = h2^h, l2^l
	h, l = bits.Mul64(x3, y4)
	h2, l2 = h2^h, l2^l
	h, l = bits.Mul64(x4, y3)
	h2, l2 = h2^h, l2^l

	h3, l3 = bits.Mul64(x0, y3)
	h, l = bits.Mul64(x1, y2)
	h3, l3 = h3^h, l3^l
	h, l = bits.Mul64(x2, y1)
	h3, l3 = h3^h, l3^l
	h, l = bits.Mul64(x3, y0)
	h3, l3 = h3^h, l3^l
	h, l = bits.Mul64(x4, y4)
	h3, l3 = h3^h, l3^l

	h4, l4 = bits.Mul64(x0, y4)
	h, l = bits.Mul64(x1, y3)
	h4, l4 = h4^h, l4^l
	h, l = bits.Mul64(x2, y2)
	h4, l4 = h4^h, l4^l
	h, l = bits.Mul64(x3, y1)
	h4, l4 = h4^h, l4^l
	h, l = bits.Mul64(x4, y0)
	h4, l4 = h4^h, l4^l

	// Keep each class's own positions. Bit i of the high word is position
	// 64+i, whose class is (i+4) mod 5, so class c sits under holeMask[(c+1) mod 5].
	lo = l0&holeMask[0] | l1&holeMask[1] | l2&holeMask[2] | l3&holeMask[3] | l4&holeMask[4]
	hi = h0&holeMask[1] | h1&holeMask[2] | h2&holeMask[3] | h3&holeMask[4] | h4&holeMask[0]
	return hi, lo
}

// gfMul returns y·H in GF(2^128) (SP 800-38D §6.3) for y = [yhi, ylo].
func gfMul(key *ghashKey, yhi, ylo uint64) (rhi, rlo uint64) {
	// Karatsuba: three 64×64 products for the 128×128 product.
	a1, a0 := clmul64(yhi, &key.h[0])
	c1, c0 := clmul64(ylo, &key.h[1])
	b1, b0 := clmul64(yhi^ylo, &key.h[2])
	b1 ^= a1 ^ c1
	b0 ^= a0 ^ c0
	z3, z2, z1, z0 := a1, a0^b1, c1^b0, c0

	// In reflected order the 255-bit product is one bit short: shift the
	// 256-bit value left by one so that [z3:z2] holds the low half
	// (degrees 0..127) and [z1:z0] the high half (degrees 128..254).
	z3 = z3<<1 | z2>>63
	z2 = z2<<1 | z1>>63
	z1 = z1<<1 | z0>>63
	z0 <<= 1

	// Reduce by x^128 = x^7 + x^2 + x + 1. First fold the part of the high
	// half that x^7, x^2 and x push past degree 127 (only z0 reaches it),
	// then add D·(1 + x + x^2 + x^7); in reflected order ·x^k is >> k.
	d := z1 ^ z0<<63 ^ z0<<62 ^ z0<<57
	rhi = z3 ^ d ^ d>>1 ^ d>>2 ^ d>>7
	rlo = z2 ^ z0 ^ (z0>>1 | d<<63) ^ (z0>>2 | d<<62) ^ (z0>>7 | d<<57)
	return rhi, rlo
}

// ghashGeneric absorbs data into the GHASH state y (SP 800-38D §6.4): each
// 16-byte block is XORed into y, then y is multiplied by H. A final
// partial block is zero-padded, as GCM pads A and C (§7.1 step 5).
func ghashGeneric(key *ghashKey, y *[2]uint64, data []byte) {
	yhi, ylo := y[0], y[1]
	for len(data) >= 16 {
		yhi ^= binary.BigEndian.Uint64(data[0:8])
		ylo ^= binary.BigEndian.Uint64(data[8:16])
		yhi, ylo = gfMul(key, yhi, ylo)
		data = data[16:]
	}
	if len(data) > 0 {
		var block [16]byte
		copy(block[:], data)
		yhi ^= binary.BigEndian.Uint64(block[0:8])
		ylo ^= binary.BigEndian.Uint64(block[8:16])
		yhi, ylo = gfMul(key, yhi, ylo)
	}
	y[0], y[1] = yhi, ylo
}
