package sm4

import (
	"encoding/binary"
	"math/bits"
)

// The reference SM4 block functions. In their own file so that assembly
// versions can be substituted next to them; they are the oracle every
// kernel is tested against.

// tTable is the round transformation T = L∘τ of GB/T 32907-2016 §6.2 through
// the merged tables (variable-time: four secret-indexed loads).
func tTable(x uint32) uint32 {
	return tTables[0][x>>24] ^ tTables[1][byte(x>>16)] ^ tTables[2][byte(x>>8)] ^ tTables[3][byte(x)]
}

// tSbox is T = L∘τ computed from the S-box (§6.2): four S-box loads, then L.
// It is kept as the definition TestTables checks the merged tables
// against. Measured on the Zen 5 dev VM (thread CPU time, one block, 32
// rounds): 163 ns with tSbox, 116 ns with tTable, so the rounds use
// tTable.
func tSbox(x uint32) uint32 {
	b := uint32(sbox[x>>24])<<24 | uint32(sbox[byte(x>>16)])<<16 | uint32(sbox[byte(x>>8)])<<8 | uint32(sbox[byte(x)])
	return b ^ bits.RotateLeft32(b, 2) ^ bits.RotateLeft32(b, 10) ^ bits.RotateLeft32(b, 18) ^ bits.RotateLeft32(b, 24)
}

// tKey is the key-schedule transformation T' = L'∘τ of §7.3, with
// L'(B) = B ⊕ (B <<< 13) ⊕ (B <<< 23).
func tKey(x uint32) uint32 {
	b := uint32(sbox[x>>24])<<24 | uint32(sbox[byte(x>>16)])<<16 | uint32(sbox[byte(x>>8)])<<8 | uint32(sbox[byte(x)])
	return b ^ bits.RotateLeft32(b, 13) ^ bits.RotateLeft32(b, 23)
}

// expandKeyGeneric computes the encryption round keys rk_0..rk_31 of
// GB/T 32907-2016 §7.3 into enc and the same keys in reverse order (the
// decryption schedule, §7.2) into dec. len(key) must be KeySize.
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

// cryptBlockGeneric applies the 32 rounds of GB/T 32907-2016 §7.1 with
// round keys rk to one block from src into dst (encryption with the
// encryption schedule, decryption with the reversed one). dst and src may
// overlap exactly.
func cryptBlockGeneric(rk *[32]uint32, dst, src []byte) {
	_ = src[15]
	x0 := binary.BigEndian.Uint32(src[0:4])
	x1 := binary.BigEndian.Uint32(src[4:8])
	x2 := binary.BigEndian.Uint32(src[8:12])
	x3 := binary.BigEndian.Uint32(src[12:16])
	for i := 0; i < 32; i += 4 {
		x0 ^= tTable(x1 ^ x2 ^ x3 ^ rk[i])
		x1 ^= tTable(x2 ^ x3 ^ x0 ^ rk[i+1])
		x2 ^= tTable(x3 ^ x0 ^ x1 ^ rk[i+2])
		x3 ^= tTable(x0 ^ x1 ^ x2 ^ rk[i+3])
	}
	// The reverse transformation R of §7.1.
	_ = dst[15]
	binary.BigEndian.PutUint32(dst[0:4], x3)
	binary.BigEndian.PutUint32(dst[4:8], x2)
	binary.BigEndian.PutUint32(dst[8:12], x1)
	binary.BigEndian.PutUint32(dst[12:16], x0)
}

// cryptBlocksGeneric applies cryptBlockGeneric to each 16-byte block of
// src. len(src) must be a multiple of 16 and len(dst) ≥ len(src); dst and
// src may overlap exactly.
func cryptBlocksGeneric(rk *[32]uint32, dst, src []byte) {
	be := binary.BigEndian
	for len(src) >= 4*BlockSize {
		_, _ = src[63], dst[63]
		a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3 := cryptWords4Generic(rk,
			be.Uint32(src[0:]), be.Uint32(src[4:]), be.Uint32(src[8:]), be.Uint32(src[12:]),
			be.Uint32(src[16:]), be.Uint32(src[20:]), be.Uint32(src[24:]), be.Uint32(src[28:]),
			be.Uint32(src[32:]), be.Uint32(src[36:]), be.Uint32(src[40:]), be.Uint32(src[44:]),
			be.Uint32(src[48:]), be.Uint32(src[52:]), be.Uint32(src[56:]), be.Uint32(src[60:]))
		for i, w := range [16]uint32{a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3} {
			be.PutUint32(dst[4*i:], w)
		}
		dst, src = dst[4*BlockSize:], src[4*BlockSize:]
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
