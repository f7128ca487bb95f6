package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// wordConsts are the tables of the YMM (word-sliced) tiers' M-domain
// round (see sm4Round): the same maps as the byte-sliced tier, as 32-byte
// GF2P8AFFINE matrix rows (VEX encodings take no broadcast operand) and as
// VPSHUFB nibble tables for the AES-NI tier.
type wordConsts struct {
	lin, linInv affine // M, M⁻¹
	p0, p3      affine // M∘A0∘post, M∘A3∘post (after an AES-field inversion)
	p0A, p3A    affine // M∘A0∘postAES, M∘A3∘postAES (after AES SubBytes)

	linM, linInvM, p0M, p3M Mem // 32-byte matrix tables (GFNI)

	linLo, linHi, linInvLo, linInvHi Mem // nibble tables (AES-NI)
	p0Lo, p0Hi, p3Lo, p3Hi           Mem
	zero                             Mem // zero bytes (the AESENCLAST round key; consts.zero)

	isr          [4]Mem // the YMM AES-NI tiers' fold patterns (see sm4Round)
	invShiftRows Mem    // aesInvShiftRows, 64 bytes (the ZMM AES-NI tier)
}

func newWordConsts(sb sboxTransforms, b *bsConsts, zero Mem) *wordConsts {
	w := &wordConsts{lin: b.lin, linInv: b.linInv, p0: b.p0, p3: b.p3, zero: zero}
	w.p0A = composeLinear("M∘A0∘postAES", func(x byte) byte { return b.lin.apply(b.a0(x)) }, sb.postAES)
	w.p3A = composeLinear("M∘A3∘postAES", func(x byte) byte { return b.lin.apply(b.a3(x)) }, sb.postAES)
	w.check(sb)

	mat := func(name string, a affine) Mem {
		m := GLOBL(name, RODATA|NOPTR)
		for i := 0; i < 4; i++ {
			DATA(8*i, U64(a.matrix()))
		}
		return m
	}
	w.linM = mat("sm4WordLin", w.lin)
	w.linInvM = mat("sm4WordLinInv", w.linInv)
	w.p0M = mat("sm4WordPost0", w.p0)
	w.p3M = mat("sm4WordPost3", w.p3)

	nib := func(name string, a affine) (lo, hi Mem) {
		l, h := nibbleTables(a)
		return bytesTable(name+"Lo", l, 64), bytesTable(name+"Hi", h, 64)
	}
	w.linLo, w.linHi = nib("sm4WordNibLin", w.lin)
	w.linInvLo, w.linInvHi = nib("sm4WordNibLinInv", w.linInv)
	w.p0Lo, w.p0Hi = nib("sm4WordNibPost0", w.p0A)
	w.p3Lo, w.p3Hi = nib("sm4WordNibPost3", w.p3A)

	// Fold patterns of the AES-NI tier: the inverse ShiftRows, then the
	// rotation (VPSHUFB: out[i] = in[pat[i]], so composing "first isr,
	// then rot" gives isr[rot[i]]).
	isr := aesInvShiftRows()
	w.invShiftRows = bytesTable("sm4AESInvShiftRows", isr, 64)
	rotl := func(n int) [16]byte { return wordShuffle(func(k int) int { return (k + 4 - n) % 4 }) }
	for f, n := range []int{0, 3, 1, 2} { // P0, rotl24 P3, rotl8 Q, rotl16 Q
		r := rotl(n)
		var comp [16]byte
		for i := range comp {
			comp[i] = isr[r[i]]
		}
		w.isr[f] = bytesTable(fmt.Sprintf("sm4WordFoldISR%d", 8*n), comp, 64)
	}
	return w
}

// aesInvShiftRows is the VPSHUFB pattern undoing AESENCLAST's ShiftRows
// (FIPS 197 §5.1.2, applied before SubBytes): the state is column-major
// (byte r+4c is row r, column c), so undoing it moves byte
// r+4((c-r) mod 4) back to r+4c.
func aesInvShiftRows() (isr [16]byte) {
	for r := 0; r < 4; r++ {
		for col := 0; col < 4; col++ {
			isr[r+4*col] = byte(r + 4*((col-r+4)%4))
		}
	}
	return isr
}

// check verifies the M-domain word round of both YMM tiers against the
// word-level T = L∘τ on sample words, with the instruction models: the
// GFNI S-box (two GF2P8AFFINEINVQB) and the AES-NI one (SubBytes between
// nibble tables), then the rotations of the fold.
func (w *wordConsts) check(sb sboxTransforms) {
	tau := func(x uint32) uint32 {
		return uint32(sm4SBox[x>>24])<<24 | uint32(sm4SBox[x>>16&0xff])<<16 |
			uint32(sm4SBox[x>>8&0xff])<<8 | uint32(sm4SBox[x&0xff])
	}
	rol := func(x uint32, n uint) uint32 { return x<<n | x>>(32-n) }
	lin := func(x uint32) uint32 { return x ^ rol(x, 2) ^ rol(x, 10) ^ rol(x, 18) ^ rol(x, 24) }
	bytewise := func(x uint32, f func(byte) byte) uint32 {
		var y uint32
		for k := 0; k < 32; k += 8 {
			y |= uint32(f(byte(x>>k))) << k
		}
		return y
	}
	p0Lo, p0Hi := nibbleTables(w.p0A)
	p3Lo, p3Hi := nibbleTables(w.p3A)
	x := uint32(0x89abcdef)
	for trial := 0; trial < 4096; trial++ {
		x = x*1664525 + 1013904223
		want := lin(tau(x))
		u := bytewise(x, sb.pre.apply) // the S-box input in the M domain
		for _, aes := range []bool{false, true} {
			var p0, p3 uint32
			if aes {
				s := bytewise(u, aesSubByte)
				p0 = bytewise(s, func(y byte) byte { return p0Lo[y&15] ^ p0Hi[y>>4] })
				p3 = bytewise(s, func(y byte) byte { return p3Lo[y&15] ^ p3Hi[y>>4] })
			} else {
				p0 = bytewise(u, func(y byte) byte { return gf2p8affineinvqb(y, w.p0.matrix(), w.p0.c) })
				p3 = bytewise(u, func(y byte) byte { return gf2p8affineinvqb(y, w.p3.matrix(), w.p3.c) })
			}
			q := p0 ^ p3
			got := bytewise(p0^rol(p3, 24)^rol(q, 8)^rol(q, 16), func(y byte) byte {
				return gf2p8affineqb(y, w.linInv.matrix(), 0)
			})
			if got != want {
				panic(fmt.Sprintf("sm4 gen: word round (AES-NI %v) wrong for %#08x: %#08x, want %#08x", aes, x, got, want))
			}
		}
	}
}
