package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ----------------------------------------------------------------------------
// Single 16-lane group, LFSR in Z0–Z15 (rows16AVX512, the S-box hook).

// ring is the register assignment of the single-group code: Z0–Z15 the
// LFSR ring (Z((j+off) mod 16) holds s_j after off rounds), Z16/Z17 R1/R2,
// Z18 p, Z19–Z21 the S0 tables, Z22–Z31 temporaries.
type ring struct {
	s          [16]Register
	r1, r2     Register
	p          Register
	p1, p2, tt Register
	kOdd       OpmaskVirtual
	t          pool
}

func newRing() *ring {
	if xv.aesni {
		// The AES-NI emission: the ring in Z16–Z31 and the temporaries in
		// Z0–Z9, so that the VEX AESENCLAST operands (X0–X15) are
		// temporaries; the S1 tables are loaded when used.
		return &ring{
			s:  [16]Register{Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31},
			r1: Z10, r2: Z11, p: Z12, p1: Z13, p2: Z14, tt: Z15,
			t: pool{Z9, Z8, Z7, Z6, Z5, Z4, Z3, Z2, Z1, Z0},
		}
	}
	return &ring{
		s:  [16]Register{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15},
		r1: Z16, r2: Z17, p: Z18, p1: Z19, p2: Z20, tt: Z21,
		t: pool{Z31, Z30, Z29, Z28, Z27, Z26, Z25, Z24, Z23, Z22},
	}
}

func (x *ring) loadTables() {
	VMOVDQU32(consts.Offset(cP1), x.p1)
	VMOVDQU32(consts.Offset(cP2), x.p2)
	VMOVDQU32(consts.Offset(cT), x.tt)
}

// s0 returns S0 of every byte of in (as in group.f1).
func (x *ring) s0(in Register) Register {
	nib := consts.Offset(cNibble)
	lo, q, r := x.t.get(), x.t.get(), x.t.get()
	VPANDD_BCST(nib, in, lo)
	VPSRLD(U8(4), in, q)
	VPSHUFB(lo, x.p1, r)
	VPTERNLOGD_BCST(tern0x6c, nib, r, q)
	VPSHUFB(q, x.p2, r)
	VPXORD(lo, r, r)
	VPSHUFB(r, x.tt, lo)
	VPADDB(q, q, q)
	VPXORD(q, lo, lo)
	x.t.put(q, r)
	return lo
}

// s1 returns S1 of every byte of in.
func (x *ring) s1(in Register) Register {
	if xv.aesni {
		return x.s1AESNI(in)
	}
	a, o := x.t.get(), x.t.get()
	VGF2P8AFFINEQB(U8(0), consts.Offset(cS1M), in, a)
	VGF2P8AFFINEINVQB(U8(0x55), consts.Offset(cS1L), a, o)
	x.t.put(a)
	return o
}

// s1AESNI returns S1 of every byte of in (as s1Group, on the four
// 128-bit lanes of a ZMM register; all temporaries are in Z0–Z9).
func (x *ring) s1AESNI(in Register) Register {
	nib := consts.Offset(cNibble)
	o := x.t.get()
	VMOVDQA64(in, o)
	affine := func(lo, hi int) {
		a, tbl := x.t.get(), x.t.get()
		VPANDD_BCST(nib, o, a)
		VPSRLD(U8(4), o, o)
		VPANDD_BCST(nib, o, o)
		VMOVDQU32(consts.Offset(lo), tbl)
		VPSHUFB(a, tbl, a)
		VMOVDQU32(consts.Offset(hi), tbl)
		VPSHUFB(o, tbl, o)
		VPXORD(a, o, o)
		x.t.put(a, tbl)
	}
	affine(cMLo, cMHi)
	VPSHUFB(consts.Offset(cInvSR), o, o)
	var h [4]Register
	for k := 1; k < 4; k++ {
		h[k] = x.t.get()
		VEXTRACTI32X4(U8(k), o, h[k].(VecPhysical).AsX())
	}
	h[0] = o
	for _, r := range h {
		VAESENCLAST(consts.Offset(cZero), r.(VecPhysical).AsX(), r.(VecPhysical).AsX())
	}
	for k := 1; k < 4; k++ {
		VINSERTI32X4(U8(k), h[k].(VecPhysical).AsX(), o, o)
		x.t.put(h[k])
	}
	affine(cGLo, cGHi)
	return o
}

// round emits one work round at ring offset off, the keystream word to
// out (GB/T 33133.1 §3.3, §3.4; see group for the techniques).
func (x *ring) round(off int, out Mem) {
	t := &x.t
	c := func(j int) Register { return x.s[(j+off)&15] }
	d := func(j int) Register { // 2·s_j
		r := t.get()
		VPADDD(c(j), c(j), r)
		return r
	}
	hiLo := func(a, b int) Register { // s_a L ‖ s_b H
		if xv.aesni {
			r, tb := t.get(), t.get()
			VPSLLD(U8(16), c(a), r)
			VPSRLD(U8(15), c(b), tb)
			VPORD(tb, r, r)
			t.put(tb)
			return r
		}
		tb, r := d(b), t.get()
		VPSHLDD(U8(16), tb, c(a), r)
		t.put(tb)
		return r
	}
	d15, w := d(15), t.get()
	VPBLENDMW(d15, c(14), x.kOdd, w) // X0 = s15H‖s14L
	t.put(d15)
	x1 := hiLo(11, 9)
	x2 := hiLo(7, 5)
	VPXORD(x.r1, w, w)
	VPADDD(x.r2, w, w)
	VPADDD(x.r1, x1, x1)
	VPXORD(x.r2, x2, x2)
	u, v := t.get(), t.get()
	if xv.aesni {
		VPROLD(U8(16), x1, x1)       // W1L‖W1H
		VPROLD(U8(16), x2, x2)       // W2L‖W2H
		VPBLENDMW(x1, x2, x.kOdd, u) // W1L‖W2H
		VPBLENDMW(x2, x1, x.kOdd, v) // W2L‖W1H
	} else {
		VPSHLDD(U8(16), x2, x1, u)
		VPSHLDD(U8(16), x1, x2, v)
	}
	t.put(x1, x2)
	// As linearS0 (x16.go): y ⊕ y<<<a ⊕ y<<<b ⊕ y<<<(a+b) ⊕ y<<<d in
	// three rotations.
	rotXor := func(y Register, a, b, dd int) {
		ra, rd := t.get(), t.get()
		VPROLD(U8(a), y, ra)
		VPROLD(U8(dd), y, rd)
		VPXORD(ra, y, y)
		VPROLD(U8(b), y, ra)
		VPTERNLOGD(xor3, rd, ra, y)
		t.put(ra, rd)
	}
	rotXor(u, 8, 10, 26)
	rotXor(v, 8, 14, 30)
	i0, i1 := t.get(), t.get()
	VPBLENDMB(v, u, x.kOdd, i0)
	VPBLENDMB(u, v, x.kOdd, i1)
	t.put(u, v)
	o0 := x.s0(i0)
	o1 := x.s1(i1)
	t.put(i0, i1)
	VPBLENDMB(o0, o1, x.kOdd, x.r2)
	VPBLENDMB(o1, o0, x.kOdd, o0)
	VPRORD(U8(8), o0, x.r1)
	t.put(o0, o1)
	x3 := hiLo(2, 0)
	VPXORD(x3, w, w) // Z = W ⊕ X3
	VMOVDQU32(w, out)
	t.put(x3, w)

	// LFSR, s16 over s0 (see group.lfsr).
	rot := func(j, k int) Register {
		if xv.aesni {
			r, s := t.get(), t.get()
			VPSLLD(U8(k), c(j), r)
			VPSRLD(U8(31-k), c(j), s)
			VPTERNLOGD(orAnd, x.p, s, r)
			t.put(s)
			return r
		}
		dj, r := d(j), t.get()
		VPSHLDD(U8(k), dj, c(j), r)
		VPANDD(x.p, r, r)
		t.put(dj)
		return r
	}
	addMod := func(acc, b, dst Register) {
		s := t.get()
		VPADDD(b, acc, s)
		VPSUBD(x.p, s, dst)
		VPMAXSD(dst, s, dst)
		t.put(s)
	}
	acc := rot(0, 8)
	addMod(acc, c(0), acc)
	for _, jk := range [][2]int{{4, 20}, {10, 21}, {13, 17}} {
		r := rot(jk[0], jk[1])
		addMod(acc, r, acc)
		t.put(r)
	}
	r := rot(15, 15)
	addMod(acc, r, c(0))
	t.put(r, acc)
}

// genRows16: n ∈ [1,16] single work rounds, word i of every lane to the
// state's scratch row i; after each round the ring registers move back by
// one so that the loop body stays the same.
func genRows16() {
	TEXT(fn("rows"), NOSPLIT, x16Sig(", n int"))
	Pragma("noescape")
	Doc(fn("rows")+" generates n (1..16) keystream words for all 16 lanes;",
		"word i of every lane goes to scratch row i (structure of arrays).")
	st := Load(Param("st"), GP64())
	n := Load(Param("n"), GP64())
	x := newRing()
	VMOVDQU32(consts.Offset(cMask31), x.p)
	x.loadTables()
	g := GP64()
	x.kOdd = K()
	MOVQ(U64(0xaaaaaaaaaaaaaaaa), g)
	KMOVQ(g, x.kOdd)
	for j := range x.s {
		VMOVDQU32(x16StateRow(st, j), x.s[j])
	}
	VMOVDQU32(x16StateRow(st, rowR1), x.r1)
	VMOVDQU32(x16StateRow(st, rowR2), x.r2)
	p := GP64()
	LEAQ(x16StateRow(st, rowScratch), p)
	Label("rows16_loop")
	x.round(0, Mem{Base: p})
	Comment("Move the ring back: s_j to Z_j.")
	s16 := x.t.get()
	VMOVDQA64(x.s[0], s16)
	for j := 0; j < 15; j++ {
		VMOVDQA64(x.s[j+1], x.s[j])
	}
	VMOVDQA64(s16, x.s[15])
	x.t.put(s16)
	ADDQ(U32(x16Row), p)
	DECQ(n)
	JNZ(LabelRef("rows16_loop"))
	for j := range x.s {
		VMOVDQU32(x.s[j], x16StateRow(st, j))
	}
	VMOVDQU32(x.r1, x16StateRow(st, rowR1))
	VMOVDQU32(x.r2, x16StateRow(st, rowR2))
	VZEROUPPER()
	RET()
}

// genSboxes16: test hook applying the kernels' S0 and S1 to every byte.
func genSboxes16() {
	TEXT(fn("sboxes"), NOSPLIT, "func(s0, s1, in *[64]byte)")
	Pragma("noescape")
	Doc(fn("sboxes")+" sets s0[i] = S0(in[i]) and s1[i] = S1(in[i]) with the",
		"kernel's S-box code (a test hook for the exhaustive S-box tests).")
	p0 := Load(Param("s0"), GP64())
	p1 := Load(Param("s1"), GP64())
	pi := Load(Param("in"), GP64())
	x := newRing()
	x.loadTables()
	in := x.t.get()
	VMOVDQU32(Mem{Base: pi}, in)
	VMOVDQU32(x.s0(in), Mem{Base: p0})
	VMOVDQU32(x.s1(in), Mem{Base: p1})
	VZEROUPPER()
	RET()
}

// genX16 emits every 16-lane kernel of emission v; the key loading
// kernels, which use only AVX-512 F/BW, serve both and are emitted once,
// with the GFNI emission.
func genX16(v *x16Variant) {
	xv = v
	genInit16()
	genRows16()
	genKeyStream16()
	genXOR16()
	genKeyStreamInit16()
	genXORInit16()
	if v.zmm {
		genKeyStreamPair16()
		genXORKeyStreamPair16()
	}
	genSboxes16()
	if !v.aesni {
		genLoad128x16()
		genLoad256x16()
	}
}
