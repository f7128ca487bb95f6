package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The AES-NI emission of the 16-lane kernels (x16Variant.aesni; AVX-512
// F/BW/VL/DQ and 128-bit AES-NI: Skylake-SP, Cascade Lake): S1 through VEX
// AESENCLAST on XMM halves between nibble-table affine maps, and the funnel
// shifts as shift pairs.

// newPairAESNI assigns the registers of the AES-NI emission:
//
//	Y24–Y31 p, the S0 tables P1, P2, T, the S1 tables MLo, MHi, GLo, GHi
//	Y16–Y18 group 0: R1, R2, s15; Y0–Y8 its 6 F and 3 LFSR temporaries
//	Y19–Y21 group 1: R1, R2, s15; Y9–Y15, Y22, Y23 its temporaries
//
// so that each group has low registers (X0–X15) for the VEX AESENCLAST.
func newPairAESNI() *pair {
	c := &pair{p: Y24, p1: Y25, p2: Y26, tt: Y27, mLo: Y28, mHi: Y29, gLo: Y30, gHi: Y31, g: make([]*group, 2)}
	pinned := [2][3]Register{{Y16, Y17, Y18}, {Y19, Y20, Y21}}
	temps := [2][]Register{
		{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8},
		{Y22, Y23, Y9, Y10, Y11, Y12, Y13, Y14, Y15},
	}
	for h := range c.g {
		r := temps[h]
		c.g[h] = &group{h: h, c: c, r1: pinned[h][0], r2: pinned[h][1], s15: pinned[h][2],
			f: append(pool(nil), r[:6]...), l: append(pool(nil), r[6:]...)}
	}
	return c
}

// f1AESNI is f1 without VBMI2 and GFNI: X1 = s11<<16 + s9>>15 (disjoint
// halves), X2 likewise; u and v from W1 and W2 rotated by 16 and blended
// by words; S1 as AESENCLAST between the nibble-table maps (s1Group).
func (g *group) f1AESNI(off int) (ops seq, o0, o1 Register) {
	c, f := g.c, &g.f
	x1, x2, t := f.get(), f.get(), f.get()
	m11, m9, m7, m5 := g.cell(11, off), g.cell(9, off), g.cell(7, off), g.cell(5, off)
	ops.add(func() { VPSLLD(U8(16), m11, x1) })
	ops.add(func() { VPSRLD(U8(15), m9, t) })
	ops.add(func() { VPADDD(t, x1, x1) }) // X1 = s11L‖s9H
	ops.add(func() { VPSLLD(U8(16), m7, x2) })
	ops.add(func() { VPSRLD(U8(15), m5, t) })
	ops.add(func() { VPADDD(g.r1, x1, x1) })          // W1 = R1 ⊞ X1
	ops.add(func() { VPTERNLOGD(xor3, g.r2, t, x2) }) // W2 = R2 ⊕ X2
	ops.add(func() { VPROLD(U8(16), x1, x1) })        // W1L‖W1H
	ops.add(func() { VPROLD(U8(16), x2, x2) })        // W2L‖W2H
	f.put(t)
	u, v := f.get(), f.get()
	ops.add(func() { VPBLENDMW(x2, x1, c.kLoW, u) }) // W1L‖W2H
	ops.add(func() { VPBLENDMW(x1, x2, c.kLoW, v) }) // W2L‖W1H
	f.put(x1, x2)
	ops, lo, i1 := g.linearS0(ops, u, v)
	return append(ops, s1Group(f, c, i1)...), lo, i1
}

// s1Group applies S1 to every byte of x (a YMM register of f, in place):
// S1(x) = G(SubBytes(M·x)) (consts.go), the maps by nibble tables, the
// inverse ShiftRows before AESENCLAST (zero round key) on each 128-bit
// half in X0–X15.
func s1Group(f *pool, c *pair, x Register) (ops seq) {
	nib := consts.Offset(cNibble)
	affine := func(lo, hi Register) {
		a := f.get()
		ops.add(func() { VPANDD_BCST(nib, x, a) })
		ops.add(func() { VPSRLD(U8(4), x, x) })
		ops.add(func() { VPANDD_BCST(nib, x, x) })
		ops.add(func() { VPSHUFB(a, lo, a) })
		ops.add(func() { VPSHUFB(x, hi, x) })
		ops.add(func() { VPXORD(a, x, x) })
		f.put(a)
	}
	affine(c.mLo, c.mHi)
	a, b := f.getLow(), f.getLow()
	ops.add(func() { VPSHUFB(consts.Offset(cInvSR), x, a) })
	ops.add(func() { VEXTRACTI128(U8(1), a, b.(VecPhysical).AsX()) })
	ops.add(func() { VAESENCLAST(consts.Offset(cZero), a.(VecPhysical).AsX(), a.(VecPhysical).AsX()) })
	ops.add(func() { VAESENCLAST(consts.Offset(cZero), b.(VecPhysical).AsX(), b.(VecPhysical).AsX()) })
	ops.add(func() { VINSERTI128(U8(1), b.(VecPhysical).AsX(), a, x) })
	f.put(a, b)
	affine(c.gLo, c.gHi)
	return ops
}

// wzAESNI is wz without the doubled ring and VPSHLDD: X0 from 2·s15 (an
// addition) and s14, X3 = s2<<16 ⊕ s0>>15.
func (g *group) wzAESNI(off, out int, keep bool) (ops seq, wk Register) {
	c, f := g.c, &g.f
	w := f.get()
	m14 := g.cell(14, off)
	ops.add(func() { VPADDD(g.s15, g.s15, w) })
	ops.add(func() { VPBLENDMW(m14, w, c.kLoW, w) })
	ops.add(func() { VPXORD(g.r1, w, w) })
	ops.add(func() { VPADDD(g.r2, w, w) })
	if out >= 0 {
		x3, t := f.get(), f.get()
		m2, m0, z := g.cell(2, off), g.cell(0, off), g.zrow(out)
		ops.add(func() { VPSLLD(U8(16), m2, x3) })
		ops.add(func() { VPSRLD(U8(15), m0, t) })
		ops.add(func() { VPTERNLOGD(xor3, x3, t, w) })
		ops.add(func() { VMOVDQA64(w, z) })
		f.put(x3, t)
	}
	if !keep {
		f.put(w)
		return ops, nil
	}
	return ops, w
}

// lfsrAESNI is lfsr with the multiplications by 2^k as
// ((x << k) | (x >> (31−k))) & p: two shifts of the cell (from memory)
// and one VPTERNLOGD; s16 goes to the ring and the s15 register only.
func (g *group) lfsrAESNI(off int, w Register) (ops seq) {
	c, l := g.c, &g.l
	addMod := func(a, b, dst Register) { g.addMod(&ops, a, b, dst) }
	mul := func(x Op, k int, dst Register) {
		t := l.get()
		ops.add(func() { VPSLLD(U8(k), x, dst) })
		ops.add(func() { VPSRLD(U8(31-k), x, t) })
		ops.add(func() { VPTERNLOGD(orAnd, c.p, t, dst) })
		l.put(t)
	}
	s0, acc := l.get(), l.get()
	m0 := g.cell(0, off)
	ops.add(func() { VMOVDQA64(m0, s0) })
	mul(s0, 8, acc)
	addMod(acc, s0, acc)
	l.put(s0)
	for _, jk := range [][2]int{{4, 20}, {10, 21}, {13, 17}} {
		r := l.get()
		mul(g.cell(jk[0], off), jk[1], r)
		addMod(acc, r, acc)
		l.put(r)
	}
	if w != nil {
		ops.add(func() { VPSRLD(U8(1), w, w) })
		addMod(acc, w, acc)
		g.f.put(w)
	}
	r15 := l.get()
	mul(g.s15, 15, r15)
	addMod(acc, r15, g.s15)
	l.put(acc, r15)
	ops.add(func() { VMOVDQA64(g.s15, m0) })
	return ops
}
