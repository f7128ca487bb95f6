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
// src: whole batches of 64 blocks on the bitsliced core, a short rest one
// block at a time when that is cheaper. len(src) must be a multiple of 16
// and len(dst) ≥ len(src); dst and src may overlap exactly.
func cryptBlocksGeneric(rk *[32]uint32, dst, src []byte) {
	var b bsBatch
	for len(src) > bsSingleMax*BlockSize {
		n := min(len(src)/BlockSize, bsLanes)
		for j := range n {
			b.a[j] = binary.BigEndian.Uint64(src[16*j:])
			b.b[j] = binary.BigEndian.Uint64(src[16*j+8:])
		}
		b.encrypt(rk)
		for j := range n {
			binary.BigEndian.PutUint64(dst[16*j:], b.a[j])
			binary.BigEndian.PutUint64(dst[16*j+8:], b.b[j])
		}
		dst, src = dst[n*BlockSize:], src[n*BlockSize:]
	}
	for len(src) >= BlockSize {
		cryptBlockGeneric(rk, dst[:BlockSize], src[:BlockSize])
		dst, src = dst[BlockSize:], src[BlockSize:]
	}
}

// encryptBlocksGeneric encrypts whole blocks of src into dst with the
// encryption schedule rk (the seam the SIMD ECB kernels replace).
func encryptBlocksGeneric(rk *[32]uint32, dst, src []byte) {
	cryptBlocksGeneric(rk, dst, src)
}
