// Command ghash generates gmtun's GHASH kernels (NIST SP 800-38D §6.4):
// Y ← (Y ⊕ X_1)·H^n ⊕ X_2·H^(n-1) ⊕ … ⊕ X_n·H over whole blocks, with one
// reduction per group of blocks, in two tiers:
//
//   - PCLMULQDQ: 128-bit carry-less multiplies, groups of 8 blocks;
//   - AVX512: VPCLMULQDQ on ZMM (four blocks per register), groups of 16.
//
// Representation (as in Intel's GCM white paper and Go's gcm_amd64): each
// block is byte-reversed, so coefficient x^0 of the GCM polynomial is bit
// 127 of the register. A carry-less product of two such values is the
// reflected product times x; the key table therefore holds H^i·x^-1 (the
// "H<<1" form), computed in Go by ghash.NewKey. The 256-bit product
// [hi:lo] is reduced modulo x^128 + x^7 + x^2 + x + 1 by two 64-bit folds
// with the reflected constant 0xC2 << 56.
//
// Table layout: entry k (16 bytes, k = 0…15) is H^(16-k)·x^-1; a group of
// r blocks multiplies block i by entry 16-r+i.
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

	genPCLMUL()
	genAVX512()
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

// mulAcc adds the unreduced schoolbook product x·p to lo, mid, hi.
func mulAcc(x, p VecVirtual, lo, mid, hi, t VecVirtual) {
	MOVOU(x, t)
	PCLMULQDQ(U8(0x00), p, t)
	PXOR(t, lo)
	MOVOU(x, t)
	PCLMULQDQ(U8(0x11), p, t)
	PXOR(t, hi)
	MOVOU(x, t)
	PCLMULQDQ(U8(0x01), p, t)
	PXOR(t, mid)
	MOVOU(x, t)
	PCLMULQDQ(U8(0x10), p, t)
	PXOR(t, mid)
}

// foldMid adds the middle product mid·x^64 into [hi:lo].
func foldMid(lo, mid, hi, t VecVirtual) {
	MOVOU(mid, t)
	PSLLDQ(U8(8), t)
	PXOR(t, lo)
	PSRLDQ(U8(8), mid)
	PXOR(mid, hi)
}

func genPCLMUL() {
	TEXT("updatePCLMULQDQ", NOSPLIT, "func(table *[256]byte, y *[16]byte, blocks *byte, nblocks int)")
	Pragma("noescape")
	Doc("updatePCLMULQDQ absorbs nblocks 16-byte blocks into the GHASH state y (NIST SP 800-38D §6.4) with 128-bit PCLMULQDQ, eight blocks per reduction.")
	tab := Load(Param("table"), GP64())
	yp := Load(Param("y"), GP64())
	p := Load(Param("blocks"), GP64())
	n := Load(Param("nblocks"), GP64())

	rev, poly, acc := XMM(), XMM(), XMM()
	MOVOU(byteReverse, rev)
	MOVOU(reduceConst, poly)
	MOVOU(Mem{Base: yp}, acc)
	PSHUFB(rev, acc)
	// SSE memory operands must be 16-byte aligned, so the table entries are
	// loaded with MOVOU into h first.
	lo, mid, hi, x, t, h := XMM(), XMM(), XMM(), XMM(), XMM(), XMM()

	Label("pclmul_loop8")
	CMPQ(n, U8(8))
	JB(LabelRef("pclmul_tail"))
	PXOR(lo, lo)
	PXOR(mid, mid)
	PXOR(hi, hi)
	for i := 0; i < 8; i++ {
		MOVOU(Mem{Base: p, Disp: 16 * i}, x)
		PSHUFB(rev, x)
		if i == 0 {
			PXOR(acc, x)
		}
		MOVOU(Mem{Base: tab, Disp: 16 * (8 + i)}, h)
		mulAcc(x, h, lo, mid, hi, t)
	}
	foldMid(lo, mid, hi, t)
	reduce(lo, hi, poly, t)
	MOVOU(lo, acc)
	ADDQ(U32(128), p)
	SUBQ(U8(8), n)
	JMP(LabelRef("pclmul_loop8"))

	Label("pclmul_tail")
	Comment("1 to 7 blocks left: block i of r uses entry 16-r+i.")
	TESTQ(n, n)
	JZ(LabelRef("pclmul_done"))
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
	mulAcc(x, h, lo, mid, hi, t)
	PXOR(x, x)
	ADDQ(U8(16), p)
	ADDQ(U8(16), tp)
	DECQ(n)
	JNZ(LabelRef("pclmul_tail_loop"))
	foldMid(lo, mid, hi, t)
	reduce(lo, hi, poly, t)
	MOVOU(lo, acc)

	Label("pclmul_done")
	PSHUFB(rev, acc)
	MOVOU(acc, Mem{Base: yp})
	RET()
}

// zmmMulAcc adds the lane-wise schoolbook products x·p to lo, mid, hi
// (VPTERNLOGD 0x96 = three-way XOR).
func zmmMulAcc(x, p VecVirtual, lo, mid, hi, t0, t1 VecVirtual) {
	VPCLMULQDQ(U8(0x00), p, x, t0)
	VPXORD(t0, lo, lo)
	VPCLMULQDQ(U8(0x11), p, x, t0)
	VPXORD(t0, hi, hi)
	VPCLMULQDQ(U8(0x01), p, x, t0)
	VPCLMULQDQ(U8(0x10), p, x, t1)
	VPTERNLOGD(U8(0x96), t0, t1, mid)
}

// foldLanes XORs the four 128-bit lanes of z into its lowest lane.
func foldLanes(z VecVirtual, t VecVirtual) {
	VEXTRACTI64X4(U8(1), z, t.AsY())
	VPXORD(t.AsY(), z.AsY(), z.AsY())
	VEXTRACTI128(U8(1), z.AsY(), t.AsX())
	VPXOR(t.AsX(), z.AsX(), z.AsX())
}

func genAVX512() {
	TEXT("updateAVX512", NOSPLIT, "func(table *[256]byte, y *[16]byte, blocks *byte, nblocks int)")
	Pragma("noescape")
	Doc("updateAVX512 absorbs nblocks 16-byte blocks into the GHASH state y (NIST SP 800-38D §6.4) with VPCLMULQDQ on ZMM registers, sixteen blocks per reduction.")
	tab := Load(Param("table"), GP64())
	yp := Load(Param("y"), GP64())
	p := Load(Param("blocks"), GP64())
	n := Load(Param("nblocks"), GP64())

	rev := ZMM()
	VMOVDQU64(byteReverse, rev)
	acc := XMM()
	VMOVDQU(Mem{Base: yp}, acc)
	VPSHUFB(rev.AsX(), acc, acc)
	lo, mid, hi, t0, t1 := ZMM(), ZMM(), ZMM(), ZMM(), ZMM()
	var h [4]VecVirtual
	for j := range h {
		h[j] = ZMM()
	}

	// finish folds the lane accumulators and reduces into acc.
	finish := func() {
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
	}
	Label("avx512_loop16")
	CMPQ(n, U8(16))
	JB(LabelRef("avx512_tail"))
	x := ZMM()
	for j := 0; j < 4; j++ {
		VMOVDQU64(Mem{Base: p, Disp: 64 * j}, x)
		VPSHUFB(rev, x, x)
		if j == 0 {
			VPXORD(acc.AsZ(), x, x)
			VPCLMULQDQ(U8(0x00), h[j], x, lo)
			VPCLMULQDQ(U8(0x11), h[j], x, hi)
			VPCLMULQDQ(U8(0x01), h[j], x, t0)
			VPCLMULQDQ(U8(0x10), h[j], x, t1)
			VPXORD(t0, t1, mid)
			continue
		}
		zmmMulAcc(x, h[j], lo, mid, hi, t0, t1)
	}
	finish()
	ADDQ(U32(256), p)
	SUBQ(U8(16), n)
	JMP(LabelRef("avx512_loop16"))

	Label("avx512_tail")
	Comment("1 to 15 blocks left, four per register; the last register is masked.")
	TESTQ(n, n)
	JZ(LabelRef("avx512_done"))
	tp := GP64()
	MOVQ(n, tp)
	NEGQ(tp)
	SHLQ(U8(4), tp)
	LEAQ(Mem{Base: tab, Index: tp, Scale: 1, Disp: 256}, tp)
	VPXORD(lo, lo, lo)
	VPXORD(mid, mid, mid)
	VPXORD(hi, hi, hi)
	xa := ZMM()
	VMOVDQA64(acc.AsZ(), xa)
	k := K()
	Label("avx512_tail_loop")
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
	VMOVDQU64_Z(Mem{Base: tp}, k, t1)
	hv := h[0]
	VMOVDQA64(t1, hv)
	zmmMulAcc(x, hv, lo, mid, hi, t0, t1)
	VPXORD(xa, xa, xa)
	ADDQ(U8(64), p)
	ADDQ(U8(64), tp)
	SUBQ(U8(4), n)
	JG(LabelRef("avx512_tail_loop"))
	finish()

	Label("avx512_done")
	VPSHUFB(rev.AsX(), acc, acc)
	VMOVDQU(acc, Mem{Base: yp})
	VZEROUPPER()
	RET()
}
