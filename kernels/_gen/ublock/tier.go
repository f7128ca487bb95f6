package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The instruction-set tiers (isa: register width and the instructions that
// differ between AVX2 and AVX-512) and the state of one generated function
// (kern): its tables in registers or memory, the block pairs' loads, stores
// and byte order, the pass loops and stack areas.

// isa is one instruction-set tier.
type isa struct {
	name, doc string
	zmm       bool
	vbmi      bool // VPERMB S-box, PL folded into the round key (see vbmiRound)
	width     int  // bytes per vector register
	pairs     int  // register pairs per full pass
	c         *consts
}

func (a *isa) vec() VecVirtual {
	if a.zmm {
		return ZMM()
	}
	return YMM()
}

func (a *isa) mov(src, dst Op) {
	if a.zmm {
		VMOVDQU64(src, dst)
	} else {
		VMOVDQU(src, dst)
	}
}

func (a *isa) xor(x, y, dst Op) {
	if a.zmm {
		VPXORQ(x, y, dst)
	} else {
		VPXOR(x, y, dst)
	}
}

func (a *isa) and(x, y, dst Op) {
	if a.zmm {
		VPANDQ(x, y, dst)
	} else {
		VPAND(x, y, dst)
	}
}

// rol sets dst = x <<<_32 s on every dword.
func (a *isa) rol(s int, x, dst VecVirtual) {
	switch {
	case a.zmm:
		VPROLD(U8(s), x, dst)
	case s == 8:
		VPSHUFB(a.c.rot8, x, dst)
	default:
		t := a.vec()
		VPSLLD(U8(s), x, t)
		VPSRLD(U8(32-s), x, dst)
		VPOR(t, dst, dst)
	}
}

// kern holds what one generated function needs while emitting code.
type kern struct {
	a          *isa
	wide       bool // 256-bit blocks
	dec        bool
	name       string
	mask       Op // 0x0f bytes
	tlo, thi   Op // S (or S⁻¹) and S·16 tables
	pl, pr     Op // permutation controls of the direction
	bswap      Op
	pairBlocks int // blocks per register pair
}

func newKern(a *isa, name string, wide, dec bool) *kern {
	g := &kern{a: a, wide: wide, dec: dec, name: name}
	bb := 16
	suffix := "128"
	if wide {
		bb, suffix = 32, "256"
	}
	g.pairBlocks = 2 * a.width / bb
	pl, pr := a.c.perm["PL"+suffix], a.c.perm["PR"+suffix]
	slo, shi := a.c.sLo, a.c.sHi
	if dec {
		pl, pr = a.c.perm["PL"+suffix+"inv"], a.c.perm["PR"+suffix+"inv"]
		slo, shi = a.c.sInvLo, a.c.sInvHi
	}
	// The S-box tables are shuffled, so they live in registers; the rest
	// are registers on AVX-512 (32 of them) and memory operands on AVX2.
	g.tlo, g.thi = g.reg(slo), g.reg(shi)
	if a.zmm {
		g.mask, g.pl, g.pr, g.bswap = g.reg(a.c.mask0f), g.reg(pl), g.reg(pr), g.reg(a.c.bswap)
	} else {
		g.mask, g.pl, g.pr, g.bswap = a.c.mask0f, pl, pr, a.c.bswap
	}
	return g
}

func (g *kern) reg(m Mem) VecVirtual {
	v := g.a.vec()
	g.a.mov(m, v)
	return v
}

// loadPair loads one pair's blocks from m (2·width bytes) into the
// half-sliced layout: for the 128-bit block, qword q of lane j of A (B)
// holds X0 (X1) of block j + lanes·q; for the 256-bit block lane j holds
// X0 (X1) of block j.
func (g *kern) loadPair(m Mem, A, B VecVirtual) {
	a := g.a
	r0, r1 := a.vec(), a.vec()
	a.mov(m, r0)
	a.mov(m.Offset(a.width), r1)
	g.split(r0, r1, A, B)
}

func (g *kern) split(r0, r1, A, B VecVirtual) {
	a := g.a
	switch {
	case !g.wide:
		VPUNPCKLQDQ(r1, r0, A)
		VPUNPCKHQDQ(r1, r0, B)
	case a.zmm:
		VSHUFI64X2(U8(0x88), r1, r0, A)
		VSHUFI64X2(U8(0xdd), r1, r0, B)
	default:
		VPERM2I128(U8(0x20), r1, r0, A)
		VPERM2I128(U8(0x31), r1, r0, B)
	}
	VPSHUFB(g.bswap, A, A)
	VPSHUFB(g.bswap, B, B)
}

// storePair is the inverse of loadPair; with xsrc it XORs the blocks
// with the 2·width bytes at xsrc first.
func (g *kern) storePair(A, B VecVirtual, m Mem, xsrc *Mem) {
	a := g.a
	o0, o1 := a.vec(), a.vec()
	switch {
	case !g.wide:
		VPUNPCKLQDQ(B, A, o0)
		VPUNPCKHQDQ(B, A, o1)
	case a.zmm:
		t0, t1 := a.vec(), a.vec()
		VSHUFI64X2(U8(0x44), B, A, t0)
		VSHUFI64X2(U8(0xee), B, A, t1)
		VSHUFI64X2(U8(0xd8), t0, t0, o0)
		VSHUFI64X2(U8(0xd8), t1, t1, o1)
	default:
		VPERM2I128(U8(0x20), B, A, o0)
		VPERM2I128(U8(0x31), B, A, o1)
	}
	for i, o := range []VecVirtual{o0, o1} {
		VPSHUFB(g.bswap, o, o)
		if xsrc != nil {
			a.xor(xsrc.Offset(i*a.width), o, o)
		}
		a.mov(o, m.Offset(i*a.width))
	}
}

func (g *kern) pairs(n int) (A, B []VecVirtual) {
	for p := 0; p < n; p++ {
		A = append(A, g.a.vec())
		B = append(B, g.a.vec())
	}
	return A, B
}

// zero returns a zeroed register (VPADDD with it is a copy that keeps the
// integer domain).
func (g *kern) zero() VecVirtual {
	z := g.a.vec()
	g.a.xor(z, z, z)
	return z
}

// passLoop emits full passes of a.pairs pairs while n allows, then one
// pass of the pairs left (fewer than a.pairs: a pass of several pairs
// hides the latency of the round's dependency chain, one pair at a time
// would not); pass(c) emits one pass of c pairs and the pointer updates.
// unit is what one pair consumes of n, which must be a multiple of it.
func (g *kern) passLoop(n GPVirtual, unit int, pass func(c int)) {
	g.passLoopThen(n, unit, pass)
	VZEROUPPER()
	RET()
}

// passLoopThen is passLoop falling through to the code after it instead
// of returning.
func (g *kern) passLoopThen(n GPVirtual, unit int, pass func(c int)) {
	full, done := g.name+"_full", g.name+"_done"
	Label(full)
	CMPQ(n, U32(g.a.pairs*unit))
	JB(LabelRef(g.name + "_rest"))
	pass(g.a.pairs)
	JMP(LabelRef(full))
	Label(g.name + "_rest")
	for c := g.a.pairs - 1; c >= 1; c-- {
		CMPQ(n, U32(c*unit))
		JAE(LabelRef(fmt.Sprintf("%s_rest%d", g.name, c)))
	}
	JMP(LabelRef(done))
	for c := g.a.pairs - 1; c >= 1; c-- {
		Label(fmt.Sprintf("%s_rest%d", g.name, c))
		pass(c)
		JMP(LabelRef(done))
	}
	Label(done)
}
