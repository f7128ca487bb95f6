package sm4

import (
	"encoding/binary"
	"math/bits"
)

// The reference SM4 block functions: the key schedule and single blocks.
// In their own file so that assembly versions can be substituted next to
// them. They contain no table: the S-box is the circuit of sbox_circuit.go,
// evaluated here on the four bytes of one word at once (SWAR: bit i of
// every byte is one bit plane, kept in place under the mask lanes), so no
// memory address and no branch depends on the key or the data.

// lanes marks bit 0 of each byte of a 64-bit word: plane i of a word x is
// x>>i & lanes.
const lanes = 0x0101010101010101

// tauSWAR applies τ (GB/T 32907-2016 §6.2) to each of the eight bytes of x
// through the S-box circuit; constant time.
func tauSWAR(x uint64) uint64 {
	x ^= sboxInD * lanes
	y0, y1, y2, y3, y4, y5, y6, y7 := sboxCore(x&lanes, x>>1&lanes, x>>2&lanes, x>>3&lanes,
		x>>4&lanes, x>>5&lanes, x>>6&lanes, x>>7&lanes)
	// The circuit maps lane bits to lane bits, so the planes need no mask.
	return (y0 | y1<<1 | y2<<2 | y3<<3 | y4<<4 | y5<<5 | y6<<6 | y7<<7) ^ sboxOutE*lanes
}

// tRound is the round transformation T = L∘τ of §6.2 with
// L(B) = B ⊕ (B <<< 2) ⊕ (B <<< 10) ⊕ (B <<< 18) ⊕ (B <<< 24).
func tRound(x uint32) uint32 {
	b := uint32(tauSWAR(uint64(x)))
	return b ^ bits.RotateLeft32(b, 2) ^ bits.RotateLeft32(b, 10) ^ bits.RotateLeft32(b, 18) ^ bits.RotateLeft32(b, 24)
}

// tKey is the key-schedule transformation T' = L'∘τ of §7.3, with
// L'(B) = B ⊕ (B <<< 13) ⊕ (B <<< 23).
func tKey(x uint32) uint32 {
	b := uint32(tauSWAR(uint64(x)))
	return b ^ bits.RotateLeft32(b, 13) ^ bits.RotateLeft32(b, 23)
}

// expandKeyGeneric computes the encryption round keys rk_0..rk_31 of
// GB/T 32907-2016 §7.3 into enc and the same keys in reverse order (the
// decryption schedule, §7.2) into dec. len(key) must be KeySize. It is
// the key schedule of every tier (scalar Go through the S-box circuit, so
// constant time on all of them).
func expandKeyGeneric(key []byte, enc, dec *[32]uint32) {
	_ = key[15]
	k0 := binary.BigEndian.Uint32(key[0:4]) ^ fk[0]
	k1 := binary.BigEndian.Uint32(key[4:8]) ^ fk[1]
	k2 := binary.BigEndian.Uint32(key[8:12]) ^ fk[2]
	k3 := binary.BigEndian.Uint32(key[12:16]) ^ fk[3]
	for i := 0; i < 32; i += 4 {
		k0 ^= tKey(k1 ^ k2 ^ k3 ^ ck[i])
		k1 ^= tKey(k2 ^ k3 ^ k0 ^ ck[i+1])
		k2 ^= tKey(k3 ^ k0 ^ k1 ^ ck[i+2])
		k3 ^= tKey(k0 ^ k1 ^ k2 ^ ck[i+3])
		enc[i], enc[i+1], enc[i+2], enc[i+3] = k0, k1, k2, k3
	}
	for i := range 32 {
		dec[i] = enc[31-i]
	}
}

// cryptWordsGeneric runs the 32 rounds of GB/T 32907-2016 §7.1 on a block
// given as four big-endian words and returns the output words in order
// (the reverse transformation R already applied).
func cryptWordsGeneric(rk *[32]uint32, x0, x1, x2, x3 uint32) (y0, y1, y2, y3 uint32) {
	for i := 0; i < 32; i += 4 {
		x0 ^= tRound(x1 ^ x2 ^ x3 ^ rk[i])
		x1 ^= tRound(x2 ^ x3 ^ x0 ^ rk[i+1])
		x2 ^= tRound(x3 ^ x0 ^ x1 ^ rk[i+2])
		x3 ^= tRound(x0 ^ x1 ^ x2 ^ rk[i+3])
	}
	return x3, x2, x1, x0
}

// rotl32x2 rotates each 32-bit half of x left by r (0 < r < 32).
func rotl32x2(x uint64, r uint) uint64 {
	lo := uint64(1)<<r - 1
	lo *= 0x0000000100000001
	return x<<r&^lo | x>>(32-r)&lo
}

// tRound2 is tRound on the two words packed in x (high and low half), with
// L(B) = (U <<< 2) ⊕ (U <<< 24) ⊕ (B <<< 18) for U = B ⊕ (B <<< 8).
func tRound2(x uint64) uint64 {
	b := tauSWAR(x)
	u := b ^ rotl32x2(b, 8)
	return rotl32x2(u, 2) ^ rotl32x2(u, 24) ^ rotl32x2(b, 18)
}

// cryptWords2Generic is cryptWordsGeneric on two blocks at once: word i of
// block A in the high half of xi, of block B in the low half. One circuit
// evaluation serves both blocks, so two blocks cost about one.
func cryptWords2Generic(rk *[32]uint32, x0, x1, x2, x3 uint64) (y0, y1, y2, y3 uint64) {
	for i := 0; i < 32; i += 4 {
		x0 ^= tRound2(x1 ^ x2 ^ x3 ^ uint64(rk[i])*0x0000000100000001)
		x1 ^= tRound2(x2 ^ x3 ^ x0 ^ uint64(rk[i+1])*0x0000000100000001)
		x2 ^= tRound2(x3 ^ x0 ^ x1 ^ uint64(rk[i+2])*0x0000000100000001)
		x3 ^= tRound2(x0 ^ x1 ^ x2 ^ uint64(rk[i+3])*0x0000000100000001)
	}
	return x3, x2, x1, x0
}

// encryptLanes encrypts the first n blocks of b in place (0 ≤ n ≤
// bsLanes): up to bsSingleMax two at a time through cryptWords2Generic,
// more as one bitsliced batch. Both are constant time; the choice depends
// only on the public n.
func encryptLanes(rk *[32]uint32, b *bsBatch, n int) {
	if n > bsSingleMax {
		b.encrypt(rk)
		return
	}
	for j := 0; j < n; j += 2 {
		// Lane j+1 may be unused; it is computed and ignored.
		a, c := b.a[j], b.b[j]
		a2, c2 := b.a[(j+1)&(bsLanes-1)], b.b[(j+1)&(bsLanes-1)]
		y0, y1, y2, y3 := cryptWords2Generic(rk,
			a&^0xffffffff|a2>>32, a<<32|a2&0xffffffff,
			c&^0xffffffff|c2>>32, c<<32|c2&0xffffffff)
		b.a[j] = y0&^0xffffffff | y1>>32
		b.b[j] = y2&^0xffffffff | y3>>32
		b.a[(j+1)&(bsLanes-1)] = y0<<32 | y1&0xffffffff
		b.b[(j+1)&(bsLanes-1)] = y2<<32 | y3&0xffffffff
	}
}

// cryptBlockGeneric applies the 32 rounds of GB/T 32907-2016 §7.1 with
// round keys rk to one block from src into dst (encryption with the
// encryption schedule, decryption with the reversed one). dst and src may
// overlap exactly.
func cryptBlockGeneric(rk *[32]uint32, dst, src []byte) {
	_ = src[15]
	y0, y1, y2, y3 := cryptWordsGeneric(rk,
		binary.BigEndian.Uint32(src[0:4]), binary.BigEndian.Uint32(src[4:8]),
		binary.BigEndian.Uint32(src[8:12]), binary.BigEndian.Uint32(src[12:16]))
	_ = dst[15]
	binary.BigEndian.PutUint32(dst[0:4], y0)
	binary.BigEndian.PutUint32(dst[4:8], y1)
	binary.BigEndian.PutUint32(dst[8:12], y2)
	binary.BigEndian.PutUint32(dst[12:16], y3)
}

// cryptBlocksGeneric applies cryptBlockGeneric to each 16-byte block of
// src, in groups of up to 64 blocks (encryptLanes). len(src) must be a
// multiple of 16 and len(dst) ≥ len(src); dst and src may overlap exactly.
func cryptBlocksGeneric(rk *[32]uint32, dst, src []byte) {
	var b bsBatch
	for len(src) >= BlockSize {
		n := min(len(src)/BlockSize, bsLanes)
		for j := range n {
			b.a[j] = binary.BigEndian.Uint64(src[16*j:])
			b.b[j] = binary.BigEndian.Uint64(src[16*j+8:])
		}
		encryptLanes(rk, &b, n)
		for j := range n {
			binary.BigEndian.PutUint64(dst[16*j:], b.a[j])
			binary.BigEndian.PutUint64(dst[16*j+8:], b.b[j])
		}
		dst, src = dst[n*BlockSize:], src[n*BlockSize:]
	}
}

// encryptBlocksGeneric encrypts whole blocks of src into dst with the
// encryption schedule rk (the seam the SIMD ECB kernels replace).
func encryptBlocksGeneric(rk *[32]uint32, dst, src []byte) {
	cryptBlocksGeneric(rk, dst, src)
}
