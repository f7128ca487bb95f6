package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The ECB and CTR kernels (the pieces kernel is in pieces.go).

func variantDoc(wide bool) (string, int) {
	if wide {
		return "uBlock-256/256 (24 rounds)", 32
	}
	return "uBlock-128/128 or 128/256 (16 or 24 rounds)", 16
}

func genECB(a *isa, wide, dec bool) {
	op, verb := "encrypt", "encrypts"
	if dec {
		op, verb = "decrypt", "decrypts"
	}
	variant, bb := variantDoc(wide)
	name := fmt.Sprintf("%s%d%s", op, 8*bb, a.name)
	TEXT(name, NOSPLIT, "func(rk *byte, rounds int, dst, src *byte, nblocks int)")
	Pragma("noescape")
	g := newKern(a, name, wide, dec)
	Doc(fmt.Sprintf("%s %s nblocks %d-byte blocks from src to dst (%s) with the round-key table rk (kernels/ublock.Schedule layout), using %s. nblocks must be a multiple of %d (a pair); full passes of %d pairs run first. dst and src are equal or do not overlap.",
		name, verb, bb, variant, a.doc, g.pairBlocks, a.pairs))
	rk := Load(Param("rk"), GP64()).(GPVirtual)
	dst := Load(Param("dst"), GP64()).(GPVirtual)
	src := Load(Param("src"), GP64()).(GPVirtual)
	n := Load(Param("nblocks"), GP64()).(GPVirtual)
	g.passLoop(n, g.pairBlocks, func(c int) { g.ecbPass(c, rk, dst, src, n) })
}

// ecbPass emits one ECB pass of c pairs from src to dst and advances src,
// dst and n (blocks) past it.
func (g *kern) ecbPass(c int, rk, dst, src, n GPVirtual) {
	a := g.a
	A, B := g.pairs(c)
	for p := 0; p < c; p++ {
		g.loadPair(Mem{Base: src, Disp: p * 2 * a.width}, A[p], B[p])
	}
	r := Load(Param("rounds"), GP64()).(GPVirtual)
	g.rounds(A, B, rk, r)
	for p := 0; p < c; p++ {
		g.storePair(A[p], B[p], Mem{Base: dst, Disp: p * 2 * a.width}, nil)
	}
	ADDQ(U32(c*2*a.width), src)
	ADDQ(U32(c*2*a.width), dst)
	SUBQ(U32(c*g.pairBlocks), n)
}

func genCTR(a *isa) {
	name := "ctr128" + a.name
	TEXT(name, NOSPLIT, "func(rk *byte, rounds int, ctr *[16]byte, dst, src *byte, nblocks int)")
	Pragma("noescape")
	g := newKern(a, name, false, false)
	Doc(fmt.Sprintf("%s XORs src with the uBlock keystream (16-byte blocks, 16 or 24 rounds) of the counter blocks ctr, inc32(ctr), … (NIST SP 800-38D §6.5 GCTR, §6.2 inc32) for nblocks whole blocks and writes dst, with the round-key table rk (kernels/ublock.Schedule layout), using %s. nblocks must be a multiple of %d; ctr is not updated.",
		name, a.doc, g.pairBlocks))
	rk := Load(Param("rk"), GP64()).(GPVirtual)
	ctrp := Load(Param("ctr"), GP64()).(GPVirtual)
	dst := Load(Param("dst"), GP64()).(GPVirtual)
	src := Load(Param("src"), GP64()).(GPVirtual)
	n := Load(Param("nblocks"), GP64()).(GPVirtual)
	Comment("X0 of every counter block is ctr[0:8]; X1 is ctr[8:12] and the inc32 word, plus the slot's block offset.")
	head, cb, inc := a.vec(), a.vec(), a.vec()
	VPBROADCASTQ(Mem{Base: ctrp}, head)
	VPSHUFB(g.bswap, head, head)
	VPBROADCASTQ(Mem{Base: ctrp, Disp: 8}, cb)
	VPSHUFB(g.bswap, cb, cb)
	VPADDD(a.c.ctrOff[a.zmm], cb, cb)
	a.mov(a.c.incPair[a.zmm], inc)
	g.passLoop(n, g.pairBlocks, func(c int) {
		A, B := g.pairs(c)
		g.counters(A, B, head, cb, inc)
		r := Load(Param("rounds"), GP64()).(GPVirtual)
		g.rounds(A, B, rk, r)
		for p := 0; p < c; p++ {
			x := Mem{Base: src, Disp: p * 2 * a.width}
			g.storePair(A[p], B[p], Mem{Base: dst, Disp: p * 2 * a.width}, &x)
		}
		ADDQ(U32(c*2*a.width), src)
		ADDQ(U32(c*2*a.width), dst)
		SUBQ(U32(c*g.pairBlocks), n)
	})
}

// counters fills the pairs with counter blocks: A = head, B = cb + p·inc,
// and advances cb past them (VPADDD wraps modulo 2^32 like inc32).
func (g *kern) counters(A, B []VecVirtual, head, cb, inc VecVirtual) {
	for p := range A {
		if g.a.zmm {
			VMOVDQA64(head, A[p])
		} else {
			VMOVDQA(head, A[p])
		}
		if p == 0 {
			VPADDD(g.zero(), cb, B[p])
		} else {
			VPADDD(inc, B[p-1], B[p])
		}
	}
	VPADDD(inc, B[len(B)-1], cb)
}
