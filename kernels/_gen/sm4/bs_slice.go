package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// How blocks enter and leave the byte-sliced form of the AVX512GFNI tier
// (bs.go): the 16×16 byte transposition, the M domain's maps, the counter
// blocks built in sliced form, and the output with the keystream XOR.

// transpose is the in-lane 16×16 byte transpose network on r (four
// unpack stages); it returns the registers in output order.
func transpose(r [16]VecVirtual, vec func() VecVirtual) [16]VecVirtual {
	type unpack func(a, b, dst Op)
	stages := [][2]unpack{
		{func(a, b, d Op) { VPUNPCKLBW(a, b, d) }, func(a, b, d Op) { VPUNPCKHBW(a, b, d) }},
		{func(a, b, d Op) { VPUNPCKLWD(a, b, d) }, func(a, b, d Op) { VPUNPCKHWD(a, b, d) }},
		{func(a, b, d Op) { VPUNPCKLDQ(a, b, d) }, func(a, b, d Op) { VPUNPCKHDQ(a, b, d) }},
		{func(a, b, d Op) { VPUNPCKLQDQ(a, b, d) }, func(a, b, d Op) { VPUNPCKHQDQ(a, b, d) }},
	}
	for _, st := range stages {
		var next [16]VecVirtual
		for i := 0; i < 8; i++ {
			lo, hi := vec(), vec()
			// Intel operand order unpck(dst, a, b): low elements of a first.
			st[0](r[i+8], r[i], lo)
			st[1](r[i+8], r[i], hi)
			next[2*i], next[2*i+1] = lo, hi
		}
		r = next
	}
	return r
}

// input brings the pass's blocks (source blocks or counter blocks) into
// byte-sliced form.
func (g *bsKernel) input() [16]VecVirtual {
	if g.ctr {
		if g.narrow {
			return g.countersNarrow()
		}
		return g.counters(0)
	}
	var r [16]VecVirtual
	for m := range r {
		grp := g.b.bitrev4[m]
		r[m] = g.vec()
		if g.full {
			VMOVDQU64(Mem{Base: g.src, Disp: g.groupBytes() * grp}, r[m])
			continue
		}
		kr := g.groupMask(grp)
		VMOVDQU64_Z(Mem{Base: g.src, Disp: g.groupBytes() * grp}, kr, r[m])
	}
	r = transpose(r, g.vec)
	for _, v := range r {
		g.toDomain(v)
	}
	return r
}

// toDomain applies M (the linear part of the S-box's input map) to every
// byte of v; fromDomain applies M⁻¹.
func (g *bsKernel) toDomain(v VecVirtual) {
	VGF2P8AFFINEQB_BCST(U8(0), g.c.preMat, v, v)
}

func (g *bsKernel) fromDomain(v VecVirtual) {
	VGF2P8AFFINEQB_BCST(U8(0), g.b.linInvm, v, v)
}

// counters builds set k's counter blocks in byte-sliced form.
func (g *bsKernel) counters(k int) [16]VecVirtual {
	var x [16]VecVirtual
	for j := 0; j < 12; j++ {
		x[j] = ZMM()
		VPBROADCASTB(g.ctrM.Offset(j), x[j])
	}
	lo := g.ctrLo
	if k > 0 {
		lo = GP64()
		LEAL(Mem{Base: g.ctrLo, Disp: 64 * k}, lo.As32())
	}
	cv := ZMM()
	VPBROADCASTD(lo.As32(), cv)
	var d [4]VecVirtual
	for h := range d {
		d[h] = ZMM()
		VPADDD(g.b.ctrIdx.Offset(64*h), cv, d[h])
		VPSHUFB(g.b.ctrBytes, d[h], d[h])
	}
	for j := 12; j < 16; j++ {
		nb := 15 - j // native byte of the dword
		a, b := ZMM(), ZMM()
		VMOVDQU64(g.b.ctrPerm.Offset(64*nb), a)
		VPERMI2D(d[1], d[0], a)
		VMOVDQU64(g.b.ctrPerm.Offset(64*nb), b)
		VPERMI2D(d[3], d[2], b)
		x[j] = ZMM()
		VSHUFI64X2(U8(0x44), b, a, x[j])
		g.toDomain(x[j])
	}
	return x
}

// countersNarrow builds the 32 counter blocks of a YMM pass in
// byte-sliced form: register j, lane L, byte q is byte j of block 2q+L.
// Bytes 12-15 come from the dword counters of each lane truncated to
// bytes (VPMOVDB, AVX-512 F).
func (g *bsKernel) countersNarrow() [16]VecVirtual {
	var x [16]VecVirtual
	for j := 0; j < 12; j++ {
		x[j] = YMM()
		VPBROADCASTB(g.ctrM.Offset(j), x[j])
	}
	cv := ZMM()
	VPBROADCASTD(g.ctrLo.As32(), cv)
	var e [2]VecVirtual
	for l := range e {
		e[l] = ZMM()
		VPADDD(g.b.ctrIdxN.Offset(64*l), cv, e[l])
	}
	for j := 12; j < 16; j++ {
		nb := 15 - j // native byte of the dword
		var half [2]VecVirtual
		for l := range half {
			t := e[l]
			if nb > 0 {
				t = ZMM()
				VPSRLD(U8(8*nb), e[l], t)
			}
			half[l] = XMM()
			VPMOVDB(t, half[l])
		}
		x[j] = YMM()
		VINSERTI32X4(U8(1), half[1], half[0].AsY(), x[j])
		g.toDomain(x[j])
	}
	return x
}

// output applies R (word order reversed, GB/T 32907-2016 §7.1) to the pass,
// transposes it back and writes its groups (XORed with src for CTR).
func (g *bsKernel) output(x [16]VecVirtual) {
	var in [16]VecVirtual
	for m := range in {
		j := g.b.bitrev4[m]
		in[m] = x[(3-j/4)*4+j%4]
		g.fromDomain(in[m])
	}
	out := transpose(in, g.vec)
	for grp, v := range out {
		at := Mem{Base: g.dst, Disp: g.groupBytes() * grp}
		if g.full {
			// A whole pass: plain loads and stores (on AMD Zen a
			// masked store costs more than a plain one even with an
			// all-ones mask).
			if g.ctr {
				VPXORD(Mem{Base: g.src, Disp: g.groupBytes() * grp}, v, v)
			}
			VMOVDQU64(v, at)
			continue
		}
		kr := g.groupMask(grp)
		if g.ctr {
			d := g.vec()
			VMOVDQU64_Z(Mem{Base: g.src, Disp: g.groupBytes() * grp}, kr, d)
			VPXORD(d, v, v)
		}
		VMOVDQU64(v, kr, at)
	}
}
