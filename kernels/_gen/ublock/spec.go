package main

import "fmt"

// The constant tables of uBlock (WU, ZHANG, ZHENG, LI, "The block cipher
// uBlock", Journal of Cryptologic Research 2019, 6(6): 690–703), as
// summarised in docs/ublock-notes.md of the project material: the 4-bit
// S-box (§3) and the byte permutations PL and PR of each half (§4.1, as
// gathers: out[i] = in[P[i]], index 0 the most significant byte).
var (
	sbox = [16]byte{0x7, 0x4, 0x9, 0xc, 0xb, 0xa, 0xd, 0x8, 0xf, 0xe, 0x1, 0x6, 0x0, 0x3, 0x2, 0x5}

	pl128 = []int{1, 3, 4, 6, 0, 2, 7, 5}
	pr128 = []int{2, 7, 5, 0, 1, 6, 4, 3}
	pl256 = []int{2, 7, 8, 13, 3, 6, 9, 12, 1, 4, 15, 10, 14, 11, 5, 0}
	pr256 = []int{6, 11, 1, 12, 9, 4, 2, 15, 7, 0, 13, 10, 14, 3, 8, 5}
)

// invSBox returns S⁻¹, checking that S is a permutation.
func invSBox() [16]byte {
	var inv [16]byte
	seen := 0
	for x, y := range sbox {
		inv[y] = byte(x)
		seen |= 1 << y
	}
	if seen != 0xffff {
		panic("ublock: S is not a permutation")
	}
	return inv
}

// invPerm returns the inverse of the gather permutation p
// (out[p[i]] = in[i] as a gather), checking that p is a permutation.
func invPerm(p []int) []int {
	inv := make([]int, len(p))
	seen := make([]bool, len(p))
	for i, v := range p {
		if seen[v] {
			panic(fmt.Sprintf("ublock: %v is not a permutation", p))
		}
		seen[v] = true
		inv[v] = i
	}
	return inv
}

// checkInverses checks the inverse tables against the ones published in
// the notes (§3, §4.1), so a transcription error in either fails the
// generator.
func checkInverses() {
	wantS := [16]byte{0xc, 0xa, 0xe, 0xd, 0x1, 0xf, 0xb, 0x0, 0x7, 0x2, 0x5, 0x4, 0x3, 0x6, 0x9, 0x8}
	if invSBox() != wantS {
		panic("ublock: S⁻¹ does not match the published table")
	}
	want := map[string][2][]int{
		"PL128": {pl128, {4, 0, 5, 1, 2, 7, 3, 6}},
		"PR128": {pr128, {3, 4, 0, 7, 6, 2, 5, 1}},
		"PL256": {pl256, {15, 8, 0, 4, 9, 14, 5, 1, 2, 6, 11, 13, 7, 3, 12, 10}},
		"PR256": {pr256, {9, 2, 6, 13, 5, 15, 0, 8, 14, 4, 11, 1, 3, 10, 12, 7}},
	}
	for name, p := range want {
		got := invPerm(p[0])
		for i := range got {
			if got[i] != p[1][i] {
				panic("ublock: inverse of " + name + " does not match the published table")
			}
		}
	}
}

// regPos is the byte offset, within a half of halfBytes bytes, at which
// the kernels keep byte b of that half (b = 0 the most significant): every
// 32-bit word is byte-swapped on load, so the word rotations <<<_32 of the
// specification are native VPROLD rotations of little-endian dwords.
func regPos(b int) int { return 4*(b/4) + 3 - b%4 }

// permIndex returns the 16-byte VPSHUFB control applying the gather p to
// every half of a 128-bit lane (two 8-byte halves for the 128-bit block,
// one 16-byte half for the 256-bit block), in the byte-swapped layout.
func permIndex(p []int) [16]byte {
	var idx [16]byte
	n := len(p)
	for base := 0; base < 16; base += n {
		for i := range p {
			idx[base+regPos(i)] = byte(base + regPos(p[i]))
		}
	}
	return idx
}
