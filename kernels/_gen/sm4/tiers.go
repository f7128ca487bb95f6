package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ymmBase fills the parts shared by the two YMM tiers: the fold
// rotations are VPSHUFB, and partial sets use VPMASKMOVD.
func ymmBase(c *consts, name, doc string) *tier {
	tailSeq := 0
	t := &tier{
		name: name, doc: doc,
		width: 8, c: c, regBytes: 32,
		vec:    func() VecVirtual { return YMM() },
		xor:    func(a, b, dst Op) { VPXOR(a, b, dst) },
		and:    func(a, b, dst Op) { VPAND(a, b, dst) },
		mov:    func(src, dst Op) { VMOVDQU(src, dst) },
		ctrOff: c.ctrOff8,
	}
	t.xor3 = func(a, b, dst Op) {
		VPXOR(a, dst, dst)
		VPXOR(b, dst, dst)
	}
	t.maxSets = ymmSets
	t.rkBytes = 32
	t.rk = func(m Mem) Op { return m }
	// Register m of a partial set holds blocks 2m (low 128-bit lane) and
	// 2m+1 (high lane), so it is moved whole, as its low half or not at
	// all, by branches on the block count (public). VPMASKMOVD would do it
	// without branches, but its stores are microcoded on AMD Zen 3: a
	// masked last set cost about 170 ns a call there (a 31-block
	// xorKeyStreamAVX2VAES 559 ns against 392 ns for 32 blocks). The count
	// is kept on the stack, not in a register.
	var nv Mem
	// moves emits the three-way branch for register m: whole(), then
	// low(), or nothing.
	moves := func(m int, whole, low func()) {
		half := fmt.Sprintf("%s_tail%d_half", name, tailSeq)
		done := fmt.Sprintf("%s_tail%d_done", name, tailSeq)
		tailSeq++
		CMPQ(nv, U8(2*m+2))
		JB(LabelRef(half))
		whole()
		JMP(LabelRef(done))
		Label(half)
		CMPQ(nv, U8(2*m+1))
		JB(LabelRef(done))
		low()
		Label(done)
	}
	t.tail = tailOps{
		prepare: func(n GPVirtual) {
			nv = AllocLocal(8)
			MOVQ(n, nv)
		},
		load: func(m int, src Mem, dst VecVirtual) {
			// dst is defined on every path: blocks past the count are zero.
			VPXOR(dst, dst, dst)
			moves(m, func() { VMOVDQU(src, dst) }, func() { VMOVDQU(src, dst.AsX()) })
		},
		store: func(m int, src VecVirtual, dst Mem) {
			moves(m, func() { VMOVDQU(src, dst) }, func() { VMOVDQU(src.AsX(), dst) })
		},
		xorStore: func(m int, src Mem, v VecVirtual, dst Mem) {
			moves(m, func() {
				VPXOR(src, v, v)
				VMOVDQU(v, dst)
			}, func() {
				VPXOR(src, v.AsX(), v.AsX())
				VMOVDQU(v.AsX(), dst)
			})
		},
	}
	return t
}

// avx2GFNI: 8 blocks per YMM set with the VEX-encoded GFNI S-box: the
// inversion with M∘A0∘post and with M∘A3∘post (two VGF2P8AFFINEINVQB),
// the matrices as memory operands.
func avx2GFNI(c *consts, w *wordConsts) *tier {
	t := ymmBase(c, "AVX2GFNI", "AVX2 and VEX-encoded GFNI on YMM registers")
	t.temps = 3
	t.setup = func() {}
	t.sboxL = func(x VecVirtual, s []VecVirtual) (p0, p3 VecVirtual) {
		VGF2P8AFFINEINVQB(U8(w.p3.c), w.p3M, x, s[0])
		VGF2P8AFFINEINVQB(U8(w.p0.c), w.p0M, x, x)
		return x, s[0]
	}
	t.fold = [4]Mem{{}, c.rot24, c.rot8, c.rot16}
	t.toDomain = func(v, _, _ VecVirtual) { VGF2P8AFFINEQB(U8(0), w.linM, v, v) }
	t.fromDom = func(v, _, _ VecVirtual) { VGF2P8AFFINEQB(U8(0), w.linInvM, v, v) }
	t.keyPre = func(v, _, _ VecVirtual) { VGF2P8AFFINEQB(U8(c.sb.pre.c), w.linM, v, v) }
	return t
}

// avx2AESNI: 8 blocks per YMM set; the inversion comes from AESENCLAST
// with a zero round key on each 128-bit half (SubBytes, FIPS 197 §5.1.1),
// and the affine maps M∘A0∘postAES and M∘A3∘postAES after it are two
// 16-entry nibble lookups each (Saarinen's construction, with the
// pre map folded into the state's M domain). The ShiftRows that comes with
// AESENCLAST is undone inside the fold patterns.
//
// With vaes, one VAESENCLAST on the whole YMM register (VAES, AVX2
// encoding) replaces the two 128-bit ones and the extract/insert pair: the
// AVX2VAES tier, for CPUs with VAES but no GFNI (AMD Zen 3).
func avx2AESNI(c *consts, w *wordConsts, vaes bool) *tier {
	t := ymmBase(c, "AVX2AESNI", "AVX2 and AES-NI (AESENCLAST on 128-bit halves)")
	if vaes {
		t = ymmBase(c, "AVX2VAES", "AVX2 and VAES (VAESENCLAST on YMM)")
	}
	t.temps = 4
	t.setup = func() {}
	// lookup sets dst = lo[a] ⊕ hi[b] (tmp: scratch).
	lookup := func(a, b, dst, tmp VecVirtual, lo, hi Mem) {
		VMOVDQU(lo, dst)
		VPSHUFB(a, dst, dst)
		VMOVDQU(hi, tmp)
		VPSHUFB(b, tmp, tmp)
		VPXOR(tmp, dst, dst)
	}
	t.sboxL = func(x VecVirtual, s []VecVirtual) (p0, p3 VecVirtual) {
		a, b, p := s[0], s[1], s[2]
		if vaes {
			VAESENCLAST(w.zero, x, x)
		} else {
			VEXTRACTI128(U8(1), x, a.AsX())
			VAESENCLAST(w.zero, a.AsX(), a.AsX())
			VAESENCLAST(w.zero, x.AsX(), x.AsX())
			VINSERTI128(U8(1), a.AsX(), x, x)
		}
		t.nibbles(x, a, b)
		// P0 into x (free once split), P3 into p; a is last read by the
		// P3 low lookup, so it serves as the scratch of the high one.
		lookup(a, b, x, p, w.p0Lo, w.p0Hi)
		VMOVDQU(w.p3Lo, p)
		VPSHUFB(a, p, p)
		VMOVDQU(w.p3Hi, a)
		VPSHUFB(b, a, a)
		VPXOR(a, p, p)
		return x, p
	}
	t.fold = w.isr
	t.toDomain = t.nibbleAffine(w.linLo, w.linHi)
	t.fromDom = t.nibbleAffine(w.linInvLo, w.linInvHi)
	t.keyPre = t.nibbleAffine(c.preLo, c.preHi)
	return t
}

// nibbles splits x into its low (a) and high (b) nibbles (the AES-NI
// tiers).
func (t *tier) nibbles(x Op, a, b VecVirtual) {
	VPSRLW(U8(4), x, b)
	t.and(t.c.mask0f, b, b)
	t.and(t.c.mask0f, x, a)
}

// nibbleAffine returns v = lo[low nibbles of v] ⊕ hi[high nibbles of v]
// bytewise, an affine map as two VPSHUFB lookups (a, b: scratch).
func (t *tier) nibbleAffine(lo, hi Mem) func(v, a, b VecVirtual) {
	return func(v, a, b VecVirtual) {
		t.nibbles(v, a, b)
		// v is free once split; a is last read by the first VPSHUFB.
		t.mov(lo, v)
		VPSHUFB(a, v, v)
		t.mov(hi, a)
		VPSHUFB(b, a, a)
		t.xor(a, v, v)
	}
}
