// Command ublock generates gmtun's uBlock kernels (WU, ZHANG, ZHENG, LI,
// "The block cipher uBlock", Journal of Cryptologic Research 2019, 6(6):
// 690–703): ECB encryption and decryption of the 128-bit block
// (uBlock-128/128, 128/256) and of the 256-bit block (uBlock-256/256), the
// CTR keystream XOR of GCM's GCTR (NIST SP 800-38D §6.5, inc32) under one
// key, and the gathered pass of many runs under one key (pieces.go), in
// three tiers:
//
//   - AVX512VBMI: as AVX512, with the S-box through VPERMB and the last XOR
//     of the linear layer folded into the next round key (vbmiRound);
//     encryption only (decryption runs the AVX512 kernels).
//   - AVX512: AVX-512 F/BW on ZMM registers, VPROLD for the word
//     rotations, VPTERNLOGD to fold the round key and the nibble masks into
//     one instruction and to merge XOR chains.
//   - AVX2: the same on YMM registers; rotations by 8 are a VPSHUFB, by 4
//     and 20 two shifts and an OR.
//
// Layout ("packed-byte", half-sliced): a register pair (A, B) holds the
// left halves X0 of several blocks in A and their right halves X1 in B,
// each 32-bit word byte-swapped so the word rotations <<<_32 are native
// dword rotations. For the 128-bit block every 128-bit lane holds the
// halves of two blocks (a ZMM pair: 8 blocks); for the 256-bit block a
// lane holds one 16-byte half (a ZMM pair: 4 blocks). So the round is the
// same instruction sequence for both block sizes and only the permutation
// controls differ:
//
//	S layer    lo = (x ⊕ k) ∧ 0f, hi = ((x ≫ 4) ⊕ (k ≫ 4)) ∧ 0f (k ≫ 4 is
//	           stored with the round key), VPSHUFB into S and S·16
//	linear     the 2-branch XOR/rotate network of the specification
//	PL, PR     one VPSHUFB per half
//
// The S-box is an in-register 16-entry shuffle (no memory lookup), so the
// kernels are constant time. Round keys come from the caller in the
// kernels' layout (kernels/ublock.Schedule): per round four vectors of 64
// bytes, k(X0), k(X1), k(X0)≫4, k(X1)≫4, each the half key repeated.
//
// Files: main.go, main and the constant tables; tier.go, the tiers and
// the state of one generated function; rounds.go, the rounds; modes.go,
// the ECB and CTR kernels; pieces.go, the gathered pieces kernel; spec.go,
// the specification's tables.
//
// Run: go run ./ublock -out ../ublock/ublock_amd64.s -stubs ../ublock/stubs_amd64.go -pkg ublock
package main

import (
	"fmt"
	"os"

	"github.com/gmtun/gmtun/kernels/_gen/internal/ctrpieces"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// recordBytes is the size of one round's record in the round-key table:
// k(X0), k(X1), k(X0)≫4, k(X1)≫4 and PL⁻¹(k(X0)), 64 bytes each.
const recordBytes = 320

func main() {
	// The generated file targets amd64 whatever the host (avo issue #450).
	os.Setenv("GOOS", "linux")
	os.Setenv("GOARCH", "amd64")
	checkInverses()

	ConstraintExpr("amd64,gc,!purego")
	c := emitConstants()
	for _, a := range []*isa{
		{name: "AVX512VBMI", doc: "AVX-512 F/BW and VBMI (VPERMB) on ZMM registers", zmm: true, vbmi: true, width: 64, pairs: 4, c: c},
		{name: "AVX512", doc: "AVX-512 F/BW on ZMM registers", zmm: true, width: 64, pairs: 4, c: c},
		{name: "AVX2", doc: "AVX2 on YMM registers", width: 32, pairs: 4, c: c},
	} {
		for _, wide := range []bool{false, true} {
			genECB(a, wide, false)
			if !a.vbmi { // decryption is not on the hot path: AVX512VBMI uses AVX512's
				genECB(a, wide, true)
			}
		}
		genCTR(a)
		genXORPieces(a)
	}
	Generate()
}

// consts are the read-only tables of the kernels: 16-byte patterns
// repeated over 64 bytes (a ZMM register; the YMM tier reads the first 32).
type consts struct {
	mask0f, sLo, sHi, sInvLo, sInvHi, bswap, rot8 Mem
	perm                                          map[string]Mem
	ctrOff                                        map[bool]Mem // slot offsets of the counter word, by zmm
	incPair                                       map[bool]Mem // blocks per pair in the counter word, by zmm
	incOne                                        Mem
	pieces                                        ctrpieces.Tables // counter-block builder of the pieces kernel (pieces.go)
}

func bytesTable(name string, pattern [16]byte) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for off := 0; off < 64; off++ {
		DATA(off, U8(pattern[off%16]))
	}
	return m
}

func dwordTable(name string, v [16]uint32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, x := range v {
		DATA(4*i, U32(x))
	}
	return m
}

func emitConstants() *consts {
	c := &consts{perm: map[string]Mem{}, ctrOff: map[bool]Mem{}, incPair: map[bool]Mem{}}
	var f, lo, hi, ilo, ihi, bs, r8 [16]byte
	inv := invSBox()
	for i := range f {
		f[i] = 0x0f
		lo[i] = sbox[i]
		hi[i] = sbox[i] << 4
		ilo[i] = inv[i]
		ihi[i] = inv[i] << 4
		bs[i] = byte(i&^3 + 3 - i&3)
		// On little-endian dwords, rotl(x, 8) moves byte k-1 to byte k.
		r8[i] = byte(i&^3 + (i+3)&3)
	}
	c.mask0f = bytesTable("ublockMask0f", f)
	c.sLo = bytesTable("ublockSLo", lo)
	c.sHi = bytesTable("ublockSHi", hi)
	c.sInvLo = bytesTable("ublockSInvLo", ilo)
	c.sInvHi = bytesTable("ublockSInvHi", ihi)
	c.bswap = bytesTable("ublockBswap", bs)
	c.rot8 = bytesTable("ublockRotl8", r8)
	// A fixed order (not a map's): the output must be reproducible.
	for _, e := range []struct {
		name string
		p    []int
	}{{"PL128", pl128}, {"PR128", pr128}, {"PL256", pl256}, {"PR256", pr256}} {
		c.perm[e.name] = bytesTable("ublock"+e.name, permIndex(e.p))
		c.perm[e.name+"inv"] = bytesTable("ublock"+e.name+"inv", permIndex(invPerm(e.p)))
	}
	// Counter word of slot (lane j, qword q) in a pair of the 128-bit
	// layout: block j + lanes·q of the pair (see loadPair).
	for _, zmm := range []bool{false, true} {
		lanes := 2
		if zmm {
			lanes = 4
		}
		var off, inc [16]uint32
		for j := 0; j < 4; j++ {
			off[4*j+1] = uint32(j % lanes)
			off[4*j+3] = uint32(j%lanes + lanes)
			inc[4*j+1] = uint32(2 * lanes)
			inc[4*j+3] = uint32(2 * lanes)
		}
		c.ctrOff[zmm] = dwordTable(fmt.Sprintf("ublockCtrOff%d", lanes), off)
		c.incPair[zmm] = dwordTable(fmt.Sprintf("ublockInc%d", 2*lanes), inc)
	}
	var one [16]uint32
	for j := 0; j < 4; j++ {
		one[4*j+1], one[4*j+3] = 1, 1
	}
	c.incOne = dwordTable("ublockIncOne", one)
	c.pieces = ctrpieces.EmitTables("ublock", 2, 4) // 2 blocks per store in a YMM register, 4 in a ZMM one
	return c
}
