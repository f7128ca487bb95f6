package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The 16-lane vector key loading (loadZUC128Lanes16AVX512,
// loadZUC256Lanes16AVX512).

// genLoad128x16: the ZUC-128 key/IV load of all 16 lanes (State16's
// LoadZUC128Lanes). Cell i of lane c is key_i<<23 | d_i<<8 | iv_c,i
// (GB/T 33133.1 §3.5.1): one vector per lane (cells in dwords, the key
// part of its lane half ORed to the zero-extended IV bytes), transposed
// in registers into the 16 state rows; R1 = R2 = 0.
func genLoad128x16() {
	TEXT("loadZUC128Lanes16AVX512", NOSPLIT, "func(st *[544]uint32, keyLo, keyHi *[16]byte, ivs *[16][16]byte)")
	Pragma("noescape")
	Doc("loadZUC128Lanes16AVX512 loads lanes 0–7 of st with keyLo, lanes 8–15 with",
		"keyHi, lane c with ivs[c] (ZUC-128), and clears R1 and R2.")
	st := Load(Param("st"), GP64())
	klo := Load(Param("keyLo"), GP64())
	khi := Load(Param("keyHi"), GP64())
	ivs := Load(Param("ivs"), GP64())
	in := [16]Register{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15}
	kd := [2]Register{Z16, Z17}
	t := pool{Z31, Z30, Z29, Z28, Z27, Z26, Z25, Z24, Z23, Z22, Z21, Z20, Z19, Z18}
	Comment("Key and constant parts of the cells, per lane half.")
	for h, k := range []Register{klo, khi} {
		VPMOVZXBD(Mem{Base: k}, kd[h])
		VPSLLD(U8(23), kd[h], kd[h])
		VPORD(consts.Offset(cD128), kd[h], kd[h])
	}
	Comment("Lane c's cells in in[c].")
	for c := range in {
		VPMOVZXBD(Mem{Base: ivs, Disp: 16 * c}, in[c])
		VPORD(kd[c/8], in[c], in[c])
	}
	storeStateRows16(st, in, &t)
}

// genLoad256x16: the ZUC-256 key/IV load of all 16 lanes (State16's
// LoadZUC256Lanes). The cells of lane c are the key and constant part of
// its lane half (kp, computed in Go) ORed with its IV fields, which are
// byte shuffles of the IV (bytes 0–15 and 16–22 each broadcast to every
// 128-bit lane, the 23-byte IVs read exactly: bytes 16–22 by a masked
// load), the 8-bit fields at bit 23 shifted down by one and the 6-bit
// symbols by a per-cell shift and mask; then transposed into the rows
// (storeStateRows16); R1 = R2 = 0.
func genLoad256x16() {
	TEXT("loadZUC256Lanes16AVX512", NOSPLIT, "func(st *[544]uint32, kp *[2][16]uint32, ivs *[16][23]byte)")
	Pragma("noescape")
	Doc("loadZUC256Lanes16AVX512 loads lane c of st with the cells kp[c/8] | the IV",
		"fields of ivs[c] (ZUC-256, 2018 layout), and clears R1 and R2.")
	st := Load(Param("st"), GP64())
	kp := Load(Param("kp"), GP64())
	ivs := Load(Param("ivs"), GP64())
	in := [16]Register{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15}
	kd := [2]Register{Z16, Z17}
	a0, a1, b0, s1, sh, sm := Z18, Z19, Z20, Z21, Z22, Z23
	t := pool{Z31, Z30, Z29, Z28, Z27, Z26, Z25, Z24}
	VMOVDQU32(Mem{Base: kp}, kd[0])
	VMOVDQU32(Mem{Base: kp, Disp: 64}, kd[1])
	for i, r := range []Register{a0, a1, b0, s1, sh, sm} {
		VMOVDQU32(consts.Offset([]int{cL256A0, cL256A1, cL256B0, cL256S1, cL256Sh, cL256Sm}[i]), r)
	}
	m := GP64()
	MOVQ(U32(0x7f), m)
	k7 := K()
	KMOVQ(m, k7)
	Comment("Lane c's cells in in[c].")
	for c := range in {
		lo, hi, x := t.get(), t.get(), t.get()
		VBROADCASTI32X4(Mem{Base: ivs, Disp: 23 * c}, lo)
		VMOVDQU8_Z(Mem{Base: ivs, Disp: 23*c + 16}, k7, hi.(VecPhysical).AsX())
		VSHUFI32X4(U8(0), hi, hi, hi)
		VPSHUFB(s1, hi, x)
		VPSRLVD(sh, x, x)
		VPTERNLOGD(U8(ternImm(func(a, b, c bool) bool { return a && c || b })), sm, kd[c/8], x) // x&sm | kp
		VPSHUFB(a1, hi, hi)
		VPSHUFB(b0, lo, in[c])
		VPSRLD(U8(1), in[c], in[c])
		VPSHUFB(a0, lo, lo)
		VPTERNLOGD(U8(ternImm(func(a, b, c bool) bool { return a || b || c })), lo, hi, in[c])
		VPORD(x, in[c], in[c])
		t.put(lo, hi, x)
	}
	storeStateRows16(st, in, &t)
}

// storeStateRows16 transposes the 16 lanes' cells, in[c] = the cells of
// lane c (cell j in dword j), into the LFSR rows of st (row j = cell j of
// every lane), clears R1 and R2 and returns. t supplies 8 temporaries.
func storeStateRows16(st Register, in [16]Register, t *pool) {
	Comment("Transpose: 4×4 dwords inside 128-bit lanes, then 4×4 lanes; row j = cell j of every lane.")
	for g := 0; g < 4; g++ {
		r := in[4*g : 4*g+4]
		t0, t1, t2, t3 := t.get(), t.get(), t.get(), t.get()
		transposeDwords4(r, t0, t1, t2, t3)
		t.put(t0, t1, t2, t3)
	}
	row := func(j int) Mem { return Mem{Base: st, Disp: j * x16Row} }
	for k := 0; k < 4; k++ {
		a, b, c, d := in[k], in[4+k], in[8+k], in[12+k]
		p, q, r, s := t.get(), t.get(), t.get(), t.get()
		transposeLanes4(a, b, c, d, p, q, r, s)
		// Each row as two 32-byte halves: the round kernels read the rows
		// by halves (one per lane group), and a half read from a 64-byte
		// store that has not retired does not forward.
		for i, v := range []Register{a, b, c, d} {
			hi := Mem{Base: st, Disp: (4*i+k)*x16Row + 32}
			VMOVDQU32(v.(VecPhysical).AsY(), row(4*i+k))
			VEXTRACTI64X4(U8(1), v, hi)
		}
		t.put(p, q, r, s)
	}
	Comment("R1 = R2 = 0.")
	z := t.get()
	VPXORD(z, z, z)
	for _, j := range []int{rowR1, rowR2} {
		VMOVDQU32(z.(VecPhysical).AsY(), row(j))
		VMOVDQU32(z.(VecPhysical).AsY(), Mem{Base: st, Disp: j*x16Row + 32})
	}
	VZEROUPPER()
	RET()
}
