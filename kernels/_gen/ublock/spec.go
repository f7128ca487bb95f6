package main

import (
	"fmt"

	"github.com/gmtun/gmtun/internal/reftables"
)

// The constant tables of uBlock (WU, ZHANG, ZHENG, LI, "The block cipher
// uBlock", Journal of Cryptologic Research 2019, 6(6): 690–703), from
// internal/reftables: the 4-bit S-box (§3) and the byte permutations PL
// and PR of each half (§4.1, as gathers: out[i] = in[P[i]], index 0 the
// most significant byte).
var (
	sbox = reftables.UBlockS

	pl128 = reftables.UBlockPL128[:]
	pr128 = reftables.UBlockPR128[:]
	pl256 = reftables.UBlockPL256[:]
	pr256 = reftables.UBlockPR256[:]
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

// checkInverses checks the inverses it computes against the ones
// published in the notes (§3, §4.1, internal/reftables), so a
// transcription error in either fails the generator.
func checkInverses() {
	if invSBox() != reftables.UBlockSInv {
		panic("ublock: S⁻¹ does not match the published table")
	}
	want := map[string][2][]int{
		"PL128": {pl128, reftables.UBlockPLInv128[:]},
		"PR128": {pr128, reftables.UBlockPRInv128[:]},
		"PL256": {pl256, reftables.UBlockPLInv256[:]},
		"PR256": {pr256, reftables.UBlockPRInv256[:]},
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
