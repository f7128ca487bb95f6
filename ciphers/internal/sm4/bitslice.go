package sm4

import "math/bits"

// A bitsliced SM4 for the portable code: 64 blocks at a time, one uint64
// "bit plane" per state bit, lane j of every plane belonging to block j.
//
// Layout. A block is the halves a = X0‖X1 and b = X2‖X3 as big-endian
// 64-bit words. transpose64 turns the 64 a-words into 64 planes, plane i
// holding bit 63−i of every a-word, so planes 0..31 are X0 and 32..63 are
// X1, each MSB first (index i is bit 31−i of the word); likewise b. In that
// indexing B <<< r is the index shift i ↦ i+r mod 32, so L of §6.2 is
// plane renaming: with U = B ⊕ (B <<< 8), L(B) = (U <<< 2) ⊕ (U <<< 24) ⊕
// (B <<< 18). Byte k of a word is planes 8k..8k+7 (MSB first), the input
// of one evaluation of the S-box circuit over all 64 lanes. A round-key
// bit is an all-zeros or all-ones mask computed arithmetically, and the
// circuit's affine constants are folded into the round-key constants.
//
// There is no table and no branch on data: the only branches and loop
// bounds are the public lengths, so the core is constant time.

// bsLanes is the number of blocks of one bitsliced batch.
const bsLanes = 64

// bsSingleMax is the largest number of blocks the portable code encrypts
// two at a time (cryptWords2Generic) rather than as one 64-lane batch.
// Measured on the Intel Xeon (AVX-512) dev VM, go test -bench: a pair costs
// 0.85 µs, a batch 5.7–6.0 µs, so six pairs are still cheaper.
const bsSingleMax = 12

// bsBatch holds up to 64 blocks: a[j]‖b[j] is block j as two big-endian
// 64-bit halves, on input and on output.
type bsBatch struct {
	a, b [bsLanes]uint64
}

// transpose64 transposes the 64×64 bit matrix m in place: afterwards bit
// 63−j of m[i] is what bit 63−i of m[j] was. It is an involution.
func transpose64(m *[64]uint64) {
	// Swap the off-diagonal blocks of size 32, 16, …, 1 (Hacker's Delight
	// §7-3 on 64-bit rows): row k (bit j of k clear) with row k|j.
	swapLevel(m, 32, 0x00000000ffffffff)
	swapLevel(m, 16, 0x0000ffff0000ffff)
	swapLevel(m, 8, 0x00ff00ff00ff00ff)
	swapLevel(m, 4, 0x0f0f0f0f0f0f0f0f)
	swapLevel(m, 2, 0x3333333333333333)
	swapLevel(m, 1, 0x5555555555555555)
}

// swapLevel is one level of transpose64 for block size j.
func swapLevel(m *[64]uint64, j uint, mask uint64) {
	for i := range uint(32) {
		k := (i&^(j-1))<<1 | i&(j-1)
		a, b := m[k&63], m[(k|j)&63]
		t := (a ^ b>>j) & mask
		m[k&63] = a ^ t
		m[(k|j)&63] = b ^ t<<j
	}
}

// encrypt runs the 32 rounds of GB/T 32907-2016 §7.1 with round keys rk on
// all 64 blocks of b (unused lanes cost the same) and applies R.
func (b *bsBatch) encrypt(rk *[32]uint32) {
	transpose64(&b.a)
	transpose64(&b.b)
	// The circuit's output constant e adds L(E) (E = e in every byte) to
	// each new word. Instead of XORing it into the planes, the state words
	// are kept offset by known constants, X̃_i = X_i ⊕ c_i with c_0..c_3 = 0
	// and c_{i+4} = c_i ⊕ L(E), and the offsets of the three input words
	// are folded into the round's key constant with the input constant d.
	// c_i = L(E) exactly when i/4 is odd, so c_32..c_35 = 0 and the output
	// needs no correction.
	const e = sboxOutE * 0x01010101
	le := e ^ bits.RotateLeft32(e, 2) ^ bits.RotateLeft32(e, 10) ^ bits.RotateLeft32(e, 18) ^ bits.RotateLeft32(e, 24)
	c := func(i int) uint32 { return le & -uint32(i>>2&1) }
	x0 := (*[32]uint64)(b.a[0:32])
	x1 := (*[32]uint64)(b.a[32:64])
	x2 := (*[32]uint64)(b.b[0:32])
	x3 := (*[32]uint64)(b.b[32:64])
	for r := range 32 {
		k := rk[r] ^ sboxInD*0x01010101 ^ c(r+1) ^ c(r+2) ^ c(r+3)
		bsRound(k, x0, x1, x2, x3)
		x0, x1, x2, x3 = x1, x2, x3, x0
	}
	// After 32 rounds the roles are back: x0..x3 hold X32..X35, and the
	// output R = X35‖X34‖X33‖X32 is b‖a with each half's words swapped.
	transpose64(&b.a)
	transpose64(&b.b)
	for j := range bsLanes {
		b.a[j], b.b[j] = b.b[j]<<32|b.b[j]>>32, b.a[j]<<32|b.a[j]>>32
	}
}

// bsRound is one round X0 ⊕= L(sboxCore(X1 ⊕ X2 ⊕ X3 ⊕ k)) on planes, with
// k the round key already combined with the circuit's constants (see
// encrypt).
func bsRound(k uint32, x0, x1, x2, x3 *[32]uint64) {
	var s, u [32]uint64
	for q := 0; q < 32; q += 8 {
		// Planes q..q+7 are byte q/8 of the word, MSB first; the circuit
		// takes bit 0 first. k<<i>>31 sign-extended is the mask of key bit
		// 31−i.
		a := (*[8]uint64)(x1[q : q+8])
		b := (*[8]uint64)(x2[q : q+8])
		c := (*[8]uint64)(x3[q : q+8])
		kq := k << q
		m := func(i uint) uint64 { return uint64(int64(int32(kq<<i)) >> 63) }
		y0, y1, y2, y3, y4, y5, y6, y7 := sboxCore(
			a[7]^b[7]^c[7]^m(7), a[6]^b[6]^c[6]^m(6), a[5]^b[5]^c[5]^m(5), a[4]^b[4]^c[4]^m(4),
			a[3]^b[3]^c[3]^m(3), a[2]^b[2]^c[2]^m(2), a[1]^b[1]^c[1]^m(1), a[0]^b[0]^c[0]^m(0))
		o := (*[8]uint64)(s[q : q+8])
		o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7] = y7, y6, y5, y4, y3, y2, y1, y0
	}
	for i := range 32 {
		u[i] = s[i] ^ s[(i+8)&31]
	}
	for i := range 32 {
		x0[i] ^= u[(i+2)&31] ^ u[(i+24)&31] ^ s[(i+18)&31]
	}
}
