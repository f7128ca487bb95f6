// Command ghash generates gmtun's GHASH kernels (NIST SP 800-38D §6.4):
// Y ← (Y ⊕ X_1)·H^n ⊕ X_2·H^(n-1) ⊕ … ⊕ X_n·H over whole blocks, with one
// reduction per group of blocks, in three tiers:
//
//   - PCLMULQDQ: 128-bit carry-less multiplies, groups of 16 blocks;
//   - AVX2VPCLMULQDQ: VEX VPCLMULQDQ on YMM (two blocks per register),
//     groups of 16 (ymm.go);
//   - AVX512: VPCLMULQDQ on ZMM (four blocks per register), groups of 32,
//     then 16; it is bound by the throughput of VPCLMULQDQ (measured: the
//     chain between groups costs nothing), so the larger group pays by
//     saving a multiply of the state and a reduction. The tail of the
//     first run and a second run of at most 16 - tail blocks share one
//     reduction (a packet's last blocks and its length block).
//
// Every kernel takes two runs of blocks (blocks, then blocks2) so that a
// message's body and its padded last block plus length block cost one
// call.
//
// Representation (as in Intel's GCM white paper and Go's gcm_amd64): each
// block is byte-reversed, so coefficient x^0 of the GCM polynomial is bit
// 127 of the register. A carry-less product of two such values is the
// reflected product times x; the key table therefore holds H^i·x^-1 (the
// "H<<1" form), computed in Go by ghash.NewKey. The 256-bit product
// [hi:lo] is reduced modulo x^128 + x^7 + x^2 + x + 1 by two 64-bit folds
// with the reflected constant 0xC2 << 56.
//
// Products are Karatsuba (three carry-less multiplies per block instead of
// four): for a = a1·x^64 + a0 and h = h1·x^64 + h0, the middle term
// a1·h0 + a0·h1 is (a1+a0)·(h1+h0) + a1·h1 + a0·h0. The sums h1+h0 are
// precomputed; the correction by the outer products is applied once per
// reduction, on the accumulated sums (it is linear).
//
// Table layout: entry k (16 bytes, k = 0…15) is H^(16-k)·x^-1; a group of
// r blocks multiplies block i by entry 16-r+i. Entry 16+k holds h1+h0 of
// entry k in both qwords. Entries 32+k and 48+k (byte 512 on) are the same
// for H^(32-k), read only by the AVX512 tier's 32-block groups.
//
// Run: go run ./ghash -out ../ghash/ghash_amd64.s -stubs ../ghash/stubs_amd64.go -pkg ghash
package main

import (
	"os"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

var (
	byteReverse Mem // reverses the 16 bytes of every 128-bit lane
	reduceConst Mem // 0xC2 << 56 in the low qword
	tailMask    Mem // qwords -1, -1, -1, -1, 0, 0: VPMASKMOVQ masks for 2 or 1 blocks
)

func main() {
	os.Setenv("GOOS", "linux")
	os.Setenv("GOARCH", "amd64")
	ConstraintExpr("amd64,gc,!purego")

	byteReverse = GLOBL("ghashByteReverse", RODATA|NOPTR)
	for i := 0; i < 64; i++ {
		DATA(i, U8(15-i%16))
	}
	reduceConst = GLOBL("ghashReduce", RODATA|NOPTR)
	DATA(0, U64(0xc200000000000000))
	DATA(8, U64(0))

	tailMask = GLOBL("ghashTailMask", RODATA|NOPTR)
	for i := 0; i < 6; i++ {
		v := uint64(0)
		if i < 4 {
			v = ^v
		}
		DATA(8*i, U64(v))
	}

	genPCLMUL()
	genAVX512()
	genVPCLMUL256()
	Generate()
}

// reduce folds the 256-bit reflected product [hi:lo] to 128 bits modulo
// the GCM polynomial (x^128 ≡ x^7 + x^2 + x + 1): two rounds of "multiply
// the low qword by the reflected constant, swap qwords, add", then add hi.
// Result in lo. Uses SSE encodings (the PCLMULQDQ tier needs no AVX).
func reduce(lo, hi, poly, t VecVirtual) {
	for i := 0; i < 2; i++ {
		MOVOU(lo, t)
		PCLMULQDQ(U8(0x00), poly, t)
		PSHUFD(U8(0x4e), lo, lo)
		PXOR(t, lo)
	}
	PXOR(hi, lo)
}

// mulAcc adds the unreduced Karatsuba product x·p to lo, mid, hi (pk
// holds p1+p0; mid still lacks the lo and hi correction).
func mulAcc(x, p, pk VecVirtual, lo, mid, hi, t VecVirtual) {
	MOVOU(x, t)
	PCLMULQDQ(U8(0x00), p, t)
	PXOR(t, lo)
	MOVOU(x, t)
	PCLMULQDQ(U8(0x11), p, t)
	PXOR(t, hi)
	PSHUFD(U8(0x4e), x, t)
	PXOR(x, t)
	PCLMULQDQ(U8(0x00), pk, t)
	PXOR(t, mid)
}

// foldMid corrects the Karatsuba middle sum (mid += lo + hi) and adds
// mid·x^64 into [hi:lo].
func foldMid(lo, mid, hi, t VecVirtual) {
	PXOR(lo, mid)
	PXOR(hi, mid)
	MOVOU(mid, t)
	PSLLDQ(U8(8), t)
	PXOR(t, lo)
	PSRLDQ(U8(8), mid)
	PXOR(mid, hi)
}

func genPCLMUL() {
	TEXT("updatePCLMULQDQ", NOSPLIT, "func(table *[1024]byte, y *[16]byte, blocks *byte, nblocks int, blocks2 *byte, nblocks2 int)")
	Pragma("noescape")
	Doc("updatePCLMULQDQ absorbs nblocks 16-byte blocks, then nblocks2 blocks from blocks2, into the GHASH state y (NIST SP 800-38D §6.4) with 128-bit PCLMULQDQ, sixteen blocks per reduction.")
	tab := Load(Param("table"), GP64())
	yp := Load(Param("y"), GP64())
	p := Load(Param("blocks"), GP64())
	n := Load(Param("nblocks"), GP64())
	p2 := Load(Param("blocks2"), GP64())
	n2 := Load(Param("nblocks2"), GP64())

	rev, poly, acc := XMM(), XMM(), XMM()
	MOVOU(byteReverse, rev)
	MOVOU(reduceConst, poly)
	MOVOU(Mem{Base: yp}, acc)
	PSHUFB(rev, acc)
	// SSE memory operands must be 16-byte aligned, so the table entries are
	// loaded with MOVOU into h first.
	lo, mid, hi, x, t, h, hk := XMM(), XMM(), XMM(), XMM(), XMM(), XMM(), XMM()

	// Groups of 16 blocks, one reduction each. The block that takes the
	// state (block 0) is multiplied last, so the chain from one group's
	// state to the next is one product and the reduction; the other
	// fifteen products do not wait for it.
	Label("pclmul_segment")
	Label("pclmul_loop16")
	CMPQ(n, U8(16))
	JB(LabelRef("pclmul_tail"))
	PXOR(lo, lo)
	PXOR(mid, mid)
	PXOR(hi, hi)
	for j := 1; j <= 16; j++ {
		i := j % 16
		MOVOU(Mem{Base: p, Disp: 16 * i}, x)
		PSHUFB(rev, x)
		if i == 0 {
			PXOR(acc, x)
		}
		MOVOU(Mem{Base: tab, Disp: 16 * i}, h)
		MOVOU(Mem{Base: tab, Disp: 256 + 16*i}, hk)
		mulAcc(x, h, hk, lo, mid, hi, t)
	}
	foldMid(lo, mid, hi, t)
	reduce(lo, hi, poly, t)
	MOVOU(lo, acc)
	ADDQ(U32(256), p)
	SUBQ(U8(16), n)
	JMP(LabelRef("pclmul_loop16"))

	Label("pclmul_tail")
	Comment("1 to 15 blocks left: block i of r uses entry 16-r+i.")
	TESTQ(n, n)
	JZ(LabelRef("pclmul_next"))
	tp := GP64()
	MOVQ(n, tp)
	NEGQ(tp)
	SHLQ(U8(4), tp)
	LEAQ(Mem{Base: tab, Index: tp, Scale: 1, Disp: 256}, tp)
	PXOR(lo, lo)
	PXOR(mid, mid)
	PXOR(hi, hi)
	MOVOU(acc, x)
	Label("pclmul_tail_loop")
	MOVOU(Mem{Base: p}, t)
	PSHUFB(rev, t)
	PXOR(t, x)
	MOVOU(Mem{Base: tp}, h)
	MOVOU(Mem{Base: tp, Disp: 256}, hk)
	mulAcc(x, h, hk, lo, mid, hi, t)
	PXOR(x, x)
	ADDQ(U8(16), p)
	ADDQ(U8(16), tp)
	DECQ(n)
	JNZ(LabelRef("pclmul_tail_loop"))
	foldMid(lo, mid, hi, t)
	reduce(lo, hi, poly, t)
	MOVOU(lo, acc)

	nextSegment("pclmul", p, n, p2, n2)
	Label("pclmul_done")
	PSHUFB(rev, acc)
	MOVOU(acc, Mem{Base: yp})
	RET()
}

// nextSegment emits the switch to the second segment: with blocks left
// there, continue at prefix_segment with them (the state stays in acc).
func nextSegment(prefix string, p, n, p2, n2 Register) {
	Label(prefix + "_next")
	TESTQ(n2, n2)
	JZ(LabelRef(prefix + "_done"))
	MOVQ(p2, p)
	MOVQ(n2, n)
	XORQ(n2, n2)
	JMP(LabelRef(prefix + "_segment"))
}

// zmmMulAcc adds the lane-wise Karatsuba products x·p to lo, mid, hi (pk
// holds p1+p0 per lane; mid lacks the lo and hi correction).
func zmmMulAcc(x, p, pk VecVirtual, lo, mid, hi, t0, t1 VecVirtual) {
	VPCLMULQDQ(U8(0x00), p, x, t0)
	VPXORD(t0, lo, lo)
	VPCLMULQDQ(U8(0x11), p, x, t0)
	VPXORD(t0, hi, hi)
	VPSHUFD(U8(0x4e), x, t1)
	VPXORD(x, t1, t1)
	VPCLMULQDQ(U8(0x00), pk, t1, t0)
	VPXORD(t0, mid, mid)
}

// foldLanes XORs the four 128-bit lanes of z into its lowest lane.
func foldLanes(z VecVirtual, t VecVirtual) {
	VEXTRACTI64X4(U8(1), z, t.AsY())
	VPXORD(t.AsY(), z.AsY(), z.AsY())
	VEXTRACTI128(U8(1), z.AsY(), t.AsX())
	VPXOR(t.AsX(), z.AsX(), z.AsX())
}

func genAVX512() {
	TEXT("updateAVX512", NOSPLIT, "func(table *[1024]byte, y *[16]byte, blocks *byte, nblocks int, blocks2 *byte, nblocks2 int)")
	Pragma("noescape")
	Doc("updateAVX512 absorbs nblocks 16-byte blocks, then nblocks2 blocks from blocks2, into the GHASH state y (NIST SP 800-38D §6.4) with VPCLMULQDQ on ZMM registers, sixteen blocks per reduction.")
	tab := Load(Param("table"), GP64())
	yp := Load(Param("y"), GP64())
	p := Load(Param("blocks"), GP64())
	n := Load(Param("nblocks"), GP64())
	p2 := Load(Param("blocks2"), GP64())
	n2 := Load(Param("nblocks2"), GP64())

	rev := ZMM()
	VMOVDQU64(byteReverse, rev)
	acc := XMM()
	VMOVDQU(Mem{Base: yp}, acc)
	VPSHUFB(rev.AsX(), acc, acc)
	lo, mid, hi, t0, t1 := ZMM(), ZMM(), ZMM(), ZMM(), ZMM()
	var h, hk [4]VecVirtual
	for j := range h {
		h[j], hk[j] = ZMM(), ZMM()
	}

	// finish folds the lane accumulators and reduces into acc.
	finish := func() {
		VPTERNLOGD(U8(0x96), lo, hi, mid)
		foldLanes(lo, t0)
		foldLanes(mid, t0)
		foldLanes(hi, t0)
		l, m, hh, t, poly := lo.AsX(), mid.AsX(), hi.AsX(), t0.AsX(), t1.AsX()
		VPSLLDQ(U8(8), m, t)
		VPXOR(t, l, l)
		VPSRLDQ(U8(8), m, m)
		VPXOR(m, hh, hh)
		VMOVDQU(reduceConst, poly)
		for i := 0; i < 2; i++ {
			VPCLMULQDQ(U8(0x00), poly, l, t)
			VPSHUFD(U8(0x4e), l, l)
			VPXOR(t, l, l)
		}
		VPXOR(hh, l, acc)
	}

	Comment("Powers H^16…H^1 stay in four registers for the full groups.")
	for j := range h {
		VMOVDQU64(Mem{Base: tab, Disp: 64 * j}, h[j])
		VMOVDQU64(Mem{Base: tab, Disp: 256 + 64*j}, hk[j])
	}
	// Between full groups the state stays in lane form: acc4 holds four
	// reduced 128-bit terms whose sum is the state (lane 0 = y at first,
	// as the VEX load zeroed the rest). Each group multiplies all four by
	// H^16 instead of adding their sum into its first block, so the chain
	// from one group's state to the next is one multiply and one lane-wise
	// reduction, without the lane folding; the lanes are folded once, after
	// the last group.
	acc4 := acc.AsZ().(VecVirtual)
	Label("avx512_segment")
	CMPQ(n, U8(16))
	JB(LabelRef("avx512_tail"))
	h16, h16k, h32, h32k, poly4 := ZMM(), ZMM(), ZMM(), ZMM(), ZMM()
	VSHUFI64X2(U8(0), h[0], h[0], h16)
	VSHUFI64X2(U8(0), hk[0], hk[0], h16k)
	VBROADCASTI32X4(Mem{Base: tab, Disp: 512}, h32)
	VBROADCASTI32X4(Mem{Base: tab, Disp: 768}, h32k)
	VBROADCASTI32X4(reduceConst, poly4)
	x := ZMM()
	// group multiplies the blocks of one group (16 or 32) and the lane
	// state acc4 by their powers, then reduces lane-wise into acc4. The
	// kernel is bound by the throughput of VPCLMULQDQ, so a 32-block
	// group (H^32…H^17 as memory operands) saves the multiply of the
	// state and the reduction of every other 16.
	group := func(blocks int) {
		for j := 0; j < blocks/4; j++ {
			VMOVDQU64(Mem{Base: p, Disp: 64 * j}, x)
			VPSHUFB(rev, x, x)
			var hp, hkp Op = h[j%4], hk[j%4]
			if blocks == 32 && j < 4 {
				hp, hkp = Mem{Base: tab, Disp: 512 + 64*j}, Mem{Base: tab, Disp: 768 + 64*j}
			}
			if j == 0 {
				VPCLMULQDQ(U8(0x00), hp, x, lo)
				VPCLMULQDQ(U8(0x11), hp, x, hi)
				VPSHUFD(U8(0x4e), x, t1)
				VPXORD(x, t1, t1)
				VPCLMULQDQ(U8(0x00), hkp, t1, mid)
				continue
			}
			VPCLMULQDQ(U8(0x00), hp, x, t0)
			VPXORD(t0, lo, lo)
			VPCLMULQDQ(U8(0x11), hp, x, t0)
			VPXORD(t0, hi, hi)
			VPSHUFD(U8(0x4e), x, t1)
			VPXORD(x, t1, t1)
			VPCLMULQDQ(U8(0x00), hkp, t1, t0)
			VPXORD(t0, mid, mid)
		}
		if blocks == 32 {
			zmmMulAcc(acc4, h32, h32k, lo, mid, hi, t0, t1)
		} else {
			zmmMulAcc(acc4, h16, h16k, lo, mid, hi, t0, t1)
		}
		Comment("Lane-wise Karatsuba correction, middle fold and reduction into acc4.")
		VPTERNLOGD(U8(0x96), lo, hi, mid)
		VPSLLDQ(U8(8), mid, t0)
		VPXORD(t0, lo, lo)
		VPSRLDQ(U8(8), mid, mid)
		VPXORD(mid, hi, hi)
		for i := 0; i < 2; i++ {
			VPCLMULQDQ(U8(0x00), poly4, lo, t0)
			VPSHUFD(U8(0x4e), lo, lo)
			VPXORD(t0, lo, lo)
		}
		VPXORD(hi, lo, acc4)
		ADDQ(U32(16*blocks), p)
		SUBQ(U8(blocks), n)
	}
	Label("avx512_loop32")
	CMPQ(n, U8(32))
	JB(LabelRef("avx512_group16"))
	group(32)
	JMP(LabelRef("avx512_loop32"))
	Label("avx512_group16")
	CMPQ(n, U8(16))
	JB(LabelRef("avx512_fold"))
	group(16)
	Label("avx512_fold")
	foldLanes(acc4, t0)

	Label("avx512_tail")
	Comment("0 to 15 blocks left. When the second run fits in the same group (n + nblocks2 ≤ 16), both take one reduction: run 1's blocks use entries 16-(n+nblocks2)+i, run 2's 16-nblocks2+j.")
	tp, tot := GP64(), GP64()
	xa, k := ZMM(), K()
	// setTable points tp at entry 16-r of the table (r in register r).
	setTable := func(r Register) {
		MOVQ(r, tp)
		NEGQ(tp)
		SHLQ(U8(4), tp)
		LEAQ(Mem{Base: tab, Index: tp, Scale: 1, Disp: 256}, tp)
	}
	start := func() {
		VPXORD(lo, lo, lo)
		VPXORD(mid, mid, mid)
		VPXORD(hi, hi, hi)
		VMOVDQA64(acc.AsZ(), xa)
	}
	// tailLoop multiplies the n (≥ 1) blocks at p, four per register, the
	// first with xa added, by the entries at tp into lo, mid, hi.
	tailLoop := func(label string) {
		Label(label)
		Comment("Qword mask for min(n, 4) blocks: (1 << 2·min(n,4)) - 1.")
		c, four, bits, one := GP64(), GP64(), GP64(), GP64()
		MOVQ(n, c)
		MOVQ(U32(4), four)
		CMPQ(c, four)
		CMOVQGT(four, c)
		SHLQ(U8(1), c)
		MOVQ(U32(1), one)
		SHLXQ(c, one, bits)
		DECQ(bits)
		KMOVB(bits.As32(), k)
		VMOVDQU64_Z(Mem{Base: p}, k, x)
		VPSHUFB(rev, x, x)
		VPXORD(xa, x, x)
		hv, hkv := ZMM(), ZMM()
		VMOVDQU64_Z(Mem{Base: tp}, k, hv)
		VMOVDQU64_Z(Mem{Base: tp, Disp: 256}, k, hkv)
		zmmMulAcc(x, hv, hkv, lo, mid, hi, t0, t1)
		VPXORD(xa, xa, xa)
		ADDQ(U8(64), p)
		ADDQ(U8(64), tp)
		SUBQ(U8(4), n)
		JG(LabelRef(label))
	}
	TESTQ(n2, n2)
	JZ(LabelRef("avx512_single"))
	MOVQ(n, tot)
	ADDQ(n2, tot)
	CMPQ(tot, U8(16))
	JA(LabelRef("avx512_single"))
	start()
	TESTQ(n, n)
	JZ(LabelRef("avx512_merged2"))
	setTable(tot)
	tailLoop("avx512_merged1_loop")
	Label("avx512_merged2")
	MOVQ(p2, p)
	MOVQ(n2, n)
	setTable(n)
	tailLoop("avx512_merged2_loop")
	finish()
	JMP(LabelRef("avx512_done"))

	Label("avx512_single")
	TESTQ(n, n)
	JZ(LabelRef("avx512_next"))
	setTable(n)
	start()
	tailLoop("avx512_tail_loop")
	finish()

	nextSegment("avx512", p, n, p2, n2)
	Label("avx512_done")
	VPSHUFB(rev.AsX(), acc, acc)
	VMOVDQU(acc, Mem{Base: yp})
	VZEROUPPER()
	RET()
}
