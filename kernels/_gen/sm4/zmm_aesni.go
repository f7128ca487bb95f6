package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// zmmSets is the number of 16-block sets of a full ZMM pass.
const zmmSets = 6

// avx512AESNI: the AVX2AESNI round on ZMM registers, 16 blocks per set,
// for AVX-512 CPUs without GFNI or VAES (Skylake-SP, Cascade Lake). The
// linear work (XORs, nibble lookups, the folds) runs on whole ZMM
// registers; the inversion is AESENCLAST on each 128-bit quarter. Without
// VAES only the VEX encoding of AESENCLAST exists, which reaches X0-X15
// alone, so the quarters go through the fixed registers X0-X3 (the
// register allocator keeps every virtual register clear of them while
// they are live). The four nibble tables of the post-inversion maps stay
// in registers for the whole call (the table is VPSHUFB's register
// operand); the fold patterns, the 0x0f mask and the round keys are
// memory operands.
//
// The last set of a pass is loaded and stored under dword masks: register
// m of a set holds blocks 4m … 4m+3 (ctrOffsets), so its mask is bits
// 16m … 16m+15 of the mask of the set's first r blocks, 4r ones.
func avx512AESNI(c *consts, w *wordConsts) *tier {
	t := &tier{
		name: "AVX512AESNI", doc: "AVX-512 and AES-NI (AESENCLAST on the four 128-bit quarters of ZMM)",
		width: 16, c: c, regBytes: 64,
		vec:    func() VecVirtual { return ZMM() },
		xor:    func(a, b, dst Op) { VPXORD(a, b, dst) },
		and:    func(a, b, dst Op) { VPANDD(a, b, dst) },
		xor3:   func(a, b, dst Op) { VPTERNLOGD(U8(0x96), a, b, dst) },
		mov:    func(src, dst Op) { VMOVDQU64(src, dst) },
		ctrOff: c.ctrOff16,
	}
	t.maxSets = zmmSets
	t.rkBytes = 4
	t.bcstKeys = true
	t.rk = func(m Mem) Op { return m }
	t.temps = 4
	var p0Lo, p0Hi, p3Lo, p3Hi VecVirtual
	t.setup = func() {
		p0Lo, p0Hi, p3Lo, p3Hi = ZMM(), ZMM(), ZMM(), ZMM()
		VMOVDQU64(w.p0Lo, p0Lo)
		VMOVDQU64(w.p0Hi, p0Hi)
		VMOVDQU64(w.p3Lo, p3Lo)
		VMOVDQU64(w.p3Hi, p3Hi)
	}
	quarters := []VecPhysical{X0, X1, X2, X3}
	t.sboxL = func(x VecVirtual, s []VecVirtual) (p0, p3 VecVirtual) {
		a, b, p := s[0], s[1], s[2]
		VMOVDQA64(x.AsX(), X0)
		for q := 1; q < 4; q++ {
			VEXTRACTI32X4(U8(q), x, quarters[q])
		}
		for _, r := range quarters {
			VAESENCLAST(w.zero, r, r) // VEX: zeroes Z0's upper quarters
		}
		for q := 1; q < 4; q++ {
			VINSERTI32X4(U8(q), quarters[q], Z0, Z0)
		}
		// Undo ShiftRows once, so that the folds are plain rotations.
		VPSHUFB(w.invShiftRows, Z0, Z0)
		t.nibbles(Z0, a, b)
		// P0 into x, P3 into p; a is last read by the P3 low lookup, so
		// it serves as the scratch of the high one.
		VPSHUFB(a, p0Lo, x)
		VPSHUFB(b, p0Hi, p)
		VPXORD(p, x, x)
		VPSHUFB(a, p3Lo, p)
		VPSHUFB(b, p3Hi, a)
		VPXORD(a, p, p)
		return x, p
	}
	t.foldInto = func(x0 Mem, x1, p0, p3 VecVirtual, free []VecVirtual) {
		sc, sc2 := free[0], free[1]
		VPROLD(U8(24), p3, sc)
		VPTERNLOGD(U8(0x96), x0, p0, sc) // sc = X_i ⊕ P0 ⊕ rotl24(P3)
		VPXORD(p0, p3, p3)               // Q
		VPROLD(U8(8), p3, x1)
		VPROLD(U8(16), p3, sc2)
		VPTERNLOGD(U8(0x96), sc, sc2, x1)
	}
	t.toDomain = t.nibbleAffine(w.linLo, w.linHi)
	t.fromDom = t.nibbleAffine(w.linInvLo, w.linInvHi)
	t.keyPre = t.nibbleAffine(c.preLo, c.preHi)

	var maskBits Mem // the dword mask of the last set's blocks (4r ones)
	kmask := func(m int) Register {
		bits := GP64()
		MOVQ(maskBits, bits)
		SHRQ(U8(16*m), bits)
		k := K()
		KMOVW(bits.As32(), k)
		return k
	}
	t.tail = tailOps{
		prepare: func(n GPVirtual) {
			maskBits = AllocLocal(8)
			ones, cnt := GP64(), GP64()
			MOVQ(I32(-1), ones)
			MOVQ(n, cnt)
			SHLQ(U8(2), cnt)
			BZHIQ(cnt, ones, ones)
			MOVQ(ones, maskBits)
		},
		load: func(m int, src Mem, dst VecVirtual) {
			VMOVDQU32_Z(src, kmask(m), dst)
		},
		store: func(m int, src VecVirtual, dst Mem) {
			VMOVDQU32(src, kmask(m), dst)
		},
		xorStore: func(m int, src Mem, v VecVirtual, dst Mem) {
			k := kmask(m)
			s := ZMM()
			VMOVDQU32_Z(src, k, s)
			VPXORD(s, v, v)
			VMOVDQU32(v, k, dst)
		},
	}
	return t
}
