package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// genVPCLMUL256 emits the AVX2VPCLMULQDQ tier: VEX-encoded VPCLMULQDQ on
// YMM registers, two blocks per register, for CPUs that have it without
// AVX-512 (AMD Zen 3, Intel Alder Lake). Groups of 16 blocks read the
// powers of H as memory operands; between groups the state stays in lane
// form (two reduced halves), multiplied by H^16 at the next group, as in
// the AVX512 tier. The tail takes two blocks per step with VPMASKMOVQ
// loads, so nothing is read past the input or the table.
func genVPCLMUL256() {
	TEXT("updateAVX2VPCLMULQDQ", NOSPLIT, "func(table *[1024]byte, y *[16]byte, blocks *byte, nblocks int, blocks2 *byte, nblocks2 int)")
	Pragma("noescape")
	Doc("updateAVX2VPCLMULQDQ absorbs nblocks 16-byte blocks, then nblocks2 blocks from blocks2, into the GHASH state y (NIST SP 800-38D §6.4) with VEX-encoded VPCLMULQDQ on YMM registers, sixteen blocks per reduction.")
	tab := Load(Param("table"), GP64())
	yp := Load(Param("y"), GP64())
	p := Load(Param("blocks"), GP64())
	n := Load(Param("nblocks"), GP64())
	p2 := Load(Param("blocks2"), GP64())
	n2 := Load(Param("nblocks2"), GP64())

	rev := YMM()
	VMOVDQU(byteReverse, rev)
	acc := XMM()
	VMOVDQU(Mem{Base: yp}, acc)
	VPSHUFB(rev.AsX(), acc, acc)
	lo, mid, hi, x, t0, t1 := YMM(), YMM(), YMM(), YMM(), YMM(), YMM()

	// mulAcc adds the lane-wise Karatsuba products v·h to lo, mid, hi
	// (hk: h1+h0 per lane; mid lacks the lo and hi correction).
	mulAcc := func(v VecVirtual, h, hk Op) {
		VPCLMULQDQ(U8(0x00), h, v, t0)
		VPXOR(t0, lo, lo)
		VPCLMULQDQ(U8(0x11), h, v, t0)
		VPXOR(t0, hi, hi)
		VPSHUFD(U8(0x4e), v, t1)
		VPXOR(v, t1, t1)
		VPCLMULQDQ(U8(0x00), hk, t1, t0)
		VPXOR(t0, mid, mid)
	}
	// middle folds the corrected middle sum into [hi:lo] per lane.
	middle := func() {
		VPXOR(lo, mid, mid)
		VPXOR(hi, mid, mid)
		VPSLLDQ(U8(8), mid, t0)
		VPXOR(t0, lo, lo)
		VPSRLDQ(U8(8), mid, mid)
		VPXOR(mid, hi, hi)
	}
	reduce := func(l, h, poly, t, dst VecVirtual) {
		for i := 0; i < 2; i++ {
			VPCLMULQDQ(U8(0x00), poly, l, t)
			VPSHUFD(U8(0x4e), l, l)
			VPXOR(t, l, l)
		}
		VPXOR(h, l, dst)
	}

	Label("ymm_segment")
	CMPQ(n, U8(16))
	JB(LabelRef("ymm_tail"))
	acc2 := acc.AsY().(VecVirtual)
	h16, h16k, poly2 := YMM(), YMM(), YMM()
	VBROADCASTI128(Mem{Base: tab}, h16)
	VBROADCASTI128(Mem{Base: tab, Disp: 256}, h16k)
	VBROADCASTI128(reduceConst, poly2)
	Label("ymm_loop16")
	for j := 0; j < 8; j++ {
		VMOVDQU(Mem{Base: p, Disp: 32 * j}, x)
		VPSHUFB(rev, x, x)
		h, hk := Mem{Base: tab, Disp: 32 * j}, Mem{Base: tab, Disp: 256 + 32*j}
		if j == 0 {
			VPCLMULQDQ(U8(0x00), h, x, lo)
			VPCLMULQDQ(U8(0x11), h, x, hi)
			VPSHUFD(U8(0x4e), x, t1)
			VPXOR(x, t1, t1)
			VPCLMULQDQ(U8(0x00), hk, t1, mid)
			continue
		}
		mulAcc(x, h, hk)
	}
	mulAcc(acc2, h16, h16k)
	middle()
	reduce(lo, hi, poly2, t0, acc2)
	ADDQ(U32(256), p)
	SUBQ(U8(16), n)
	CMPQ(n, U8(16))
	JAE(LabelRef("ymm_loop16"))
	VEXTRACTI128(U8(1), acc2, t0.AsX())
	VPXOR(t0.AsX(), acc, acc)

	Label("ymm_tail")
	Comment("1 to 15 blocks left, two per step; block i of r uses entry 16-r+i.")
	TESTQ(n, n)
	JZ(LabelRef("ymm_next"))
	tp := GP64()
	MOVQ(n, tp)
	NEGQ(tp)
	SHLQ(U8(4), tp)
	LEAQ(Mem{Base: tab, Index: tp, Scale: 1, Disp: 256}, tp)
	VPXOR(lo, lo, lo)
	VPXOR(mid, mid, mid)
	VPXOR(hi, hi, hi)
	xa, mask, hv, hkv := YMM(), YMM(), YMM(), YMM()
	VMOVDQU(acc.AsY(), xa) // upper half zero (VEX writes of acc)
	Label("ymm_tail_loop")
	Comment("Load mask: both blocks, or only the first when one is left.")
	c, two := GP64(), GP64()
	MOVQ(n, c)
	MOVQ(U32(2), two)
	CMPQ(c, two)
	CMOVQGT(two, c)
	NEGQ(c)
	SHLQ(U8(4), c)
	LEAQ(tailMask.Offset(32), two)
	VMOVDQU(Mem{Base: two, Index: c, Scale: 1}, mask)
	VPMASKMOVQ(Mem{Base: p}, mask, x)
	VPSHUFB(rev, x, x)
	VPXOR(xa, x, x)
	VPMASKMOVQ(Mem{Base: tp}, mask, hv)
	VPMASKMOVQ(Mem{Base: tp, Disp: 256}, mask, hkv)
	mulAcc(x, hv, hkv)
	VPXOR(xa, xa, xa)
	ADDQ(U8(32), p)
	ADDQ(U8(32), tp)
	SUBQ(U8(2), n)
	JG(LabelRef("ymm_tail_loop"))
	middle()
	Comment("Fold the two lanes, then reduce.")
	VEXTRACTI128(U8(1), lo, t0.AsX())
	VPXOR(t0.AsX(), lo.AsX(), lo.AsX())
	VEXTRACTI128(U8(1), hi, t0.AsX())
	VPXOR(t0.AsX(), hi.AsX(), hi.AsX())
	poly := t1.AsX().(VecVirtual)
	VMOVDQU(reduceConst, poly)
	reduce(lo.AsX().(VecVirtual), hi.AsX().(VecVirtual), poly, t0.AsX().(VecVirtual), acc)

	nextSegment("ymm", p, n, p2, n2)
	Label("ymm_done")
	VPSHUFB(rev.AsX(), acc, acc)
	VMOVDQU(acc, Mem{Base: yp})
	VZEROUPPER()
	RET()
}
