package reftables

// The constant tables of uBlock (WU, ZHANG, ZHENG, LI, "The block cipher
// uBlock", Journal of Cryptologic Research 2019, 6(6): 690–703), as
// summarised in docs/ublock-notes.md of the project material (§3–§5).
// Permutations are gathers, out[i] = in[P[i]], index 0 the most
// significant byte (PL, PR) or nibble (PK).

// UBlockS is uBlock's 4-bit S-box S (§3).
var UBlockS = [16]byte{0x7, 0x4, 0x9, 0xc, 0xb, 0xa, 0xd, 0x8, 0xf, 0xe, 0x1, 0x6, 0x0, 0x3, 0x2, 0x5}

// UBlockSInv is S⁻¹ as the notes publish it (§3).
var UBlockSInv = [16]byte{0xc, 0xa, 0xe, 0xd, 0x1, 0xf, 0xb, 0x0, 0x7, 0x2, 0x5, 0x4, 0x3, 0x6, 0x9, 0x8}

// The byte permutations PL and PR of the left and right halves of the
// 128-bit block (§4.1), and their published inverses.
var (
	UBlockPL128    = [8]int{1, 3, 4, 6, 0, 2, 7, 5}
	UBlockPR128    = [8]int{2, 7, 5, 0, 1, 6, 4, 3}
	UBlockPLInv128 = [8]int{4, 0, 5, 1, 2, 7, 3, 6}
	UBlockPRInv128 = [8]int{3, 4, 0, 7, 6, 2, 5, 1}
)

// The byte permutations PL and PR of the halves of the 256-bit block
// (§4.1), and their published inverses.
var (
	UBlockPL256    = [16]int{2, 7, 8, 13, 3, 6, 9, 12, 1, 4, 15, 10, 14, 11, 5, 0}
	UBlockPR256    = [16]int{6, 11, 1, 12, 9, 4, 2, 15, 7, 0, 13, 10, 14, 3, 8, 5}
	UBlockPLInv256 = [16]int{15, 8, 0, 4, 9, 14, 5, 1, 2, 6, 11, 13, 7, 3, 12, 10}
	UBlockPRInv256 = [16]int{9, 2, 6, 13, 5, 15, 0, 8, 14, 4, 11, 1, 3, 10, 12, 7}
)

// The nibble permutations PK of the key schedule (§5): for uBlock-128/128
// on the 16 nibbles of K0‖K1 (32-bit words), for uBlock-128/256 and
// uBlock-256/256 on the 32 nibbles of K0‖K1 (64-bit words), where the
// second 16 entries only swap the two 32-bit halves of K1.
var (
	UBlockPK128128 = [16]int{6, 0, 8, 13, 1, 15, 5, 10, 4, 9, 12, 2, 11, 3, 7, 14}
	UBlockPK128256 = [32]int{10, 5, 15, 0, 2, 7, 8, 13, 14, 6, 4, 12, 1, 3, 11, 9, 24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19, 20, 21, 22, 23}
	UBlockPK256256 = [32]int{10, 5, 15, 0, 2, 7, 8, 13, 1, 14, 4, 12, 9, 11, 3, 6, 24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19, 20, 21, 22, 23}
)

// UBlockRC are the round constants RC_1..RC_24 of the key schedule (§5):
// the top 32 bits of K0 in round i are XORed with RC_i; 128/128 uses the
// first 16.
var UBlockRC = [24]uint32{
	0x988cc9dd, 0xf0e4a1b5, 0x21357064, 0x8397d2c6, 0xc7d39682, 0x4f5b1e0a, 0x5e4a0f1b, 0x7c682d39,
	0x392d687c, 0xb3a7e2f6, 0xa7b3f6e2, 0x8e9adfcb, 0xdcc88d99, 0x786c293d, 0x30246175, 0xa1b5f0e4,
	0x8296d3c7, 0xc5d19480, 0x4a5e1b0f, 0x55410410, 0x6b7f3a2e, 0x17034652, 0xeffbbeaa, 0x1f0b4e5a,
}
