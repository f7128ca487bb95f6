package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ymmBase fills the parts shared by the two YMM tiers: rotations by whole
// bytes are VPSHUFB, rotl 2 a shift pair, and partial sets use VPMASKMOVD.
func ymmBase(c *consts, name, doc string) *tier {
	t := &tier{
		name: name, doc: doc,
		width: 8, c: c, regBytes: 32,
		vec:    func() VecVirtual { return YMM() },
		xor:    func(a, b, dst Op) { VPXOR(a, b, dst) },
		mov:    func(src, dst Op) { VMOVDQU(src, dst) },
		ctrOff: c.ctrOff8,
	}
	t.xor3 = func(a, b, dst Op) {
		VPXOR(a, dst, dst)
		VPXOR(b, dst, dst)
	}
	t.maxSets = 2
	// L(B) = B ⊕ (B <<< 24) ⊕ ((B ⊕ (B <<< 8) ⊕ (B <<< 16)) <<< 2).
	t.linear = func(x, x0, a, b VecVirtual) {
		VPSHUFB(c.rot8, x, a)
		VPXOR(x, a, a)
		VPSHUFB(c.rot16, x, b)
		VPXOR(b, a, a)
		VPXOR(x, x0, x0)
		VPSHUFB(c.rot24, x, b)
		VPXOR(b, x0, x0)
		VPSLLD(U8(2), a, b)
		VPSRLD(U8(30), a, a)
		VPXOR(a, x0, x0)
		VPXOR(b, x0, x0)
	}
	t.rk = func(m Mem) VecVirtual {
		k := YMM()
		VPBROADCASTD(m, k)
		return k
	}
	// Register m of a partial set holds blocks 2m and 2m+1; a dword lane is
	// live when its block index (tailIdx8) is below n. Only the broadcast
	// count stays in a register (YMM registers are scarce); each mask is
	// rebuilt where it is used.
	var nv VecVirtual
	mask := func(m int) VecVirtual {
		k := YMM()
		VPCMPGTD(c.tailIdx8.Offset(32*m), nv, k)
		return k
	}
	t.tail = tailOps{
		prepare: func(n GPVirtual) {
			nx := XMM()
			nv = YMM()
			MOVQ(n, nx)
			VPBROADCASTD(nx, nv)
		},
		load: func(m int, src Mem, dst VecVirtual) {
			VPMASKMOVD(src, mask(m), dst)
		},
		store: func(m int, src VecVirtual, dst Mem) {
			VPMASKMOVD(src, mask(m), dst)
		},
	}
	return t
}

// avx2GFNI: 8 blocks per YMM set with the VEX-encoded GFNI S-box.
func avx2GFNI(c *consts) *tier {
	t := ymmBase(c, "AVX2GFNI", "AVX2 and VEX-encoded GFNI on YMM registers")
	var pre, post VecVirtual
	t.setup = func() {
		pre, post = YMM(), YMM()
		VPBROADCASTQ(c.preMat, pre)
		VPBROADCASTQ(c.postMat, post)
	}
	t.sbox = func(x, _, _ VecVirtual) {
		VGF2P8AFFINEQB(U8(c.sb.pre.c), pre, x, x)
		VGF2P8AFFINEINVQB(U8(c.sb.post.c), post, x, x)
	}
	return t
}

// avx2AESNI: 8 blocks per YMM set; τ(x) = postAES(SubBytes(pre(x))) where
// SubBytes comes from AESENCLAST with a zero round key on each 128-bit half
// (ShiftRows undone by one VPSHUFB) and pre/postAES are affine maps done
// as two 16-entry nibble lookups each.
func avx2AESNI(c *consts) *tier {
	t := ymmBase(c, "AVX2AESNI", "AVX2 and AES-NI (AESENCLAST on 128-bit halves)")
	var mask, zero VecVirtual
	t.setup = func() {
		mask, zero = YMM(), YMM()
		VMOVDQU(c.mask0f, mask)
		VPXOR(zero, zero, zero)
	}
	affine := func(x, a, b VecVirtual, lo, hi Mem) {
		VPSRLW(U8(4), x, b)
		VPAND(mask, b, b)
		VPAND(mask, x, a)
		VMOVDQU(lo, x)
		VPSHUFB(a, x, x)
		VMOVDQU(hi, a)
		VPSHUFB(b, a, a)
		VPXOR(a, x, x)
	}
	t.sbox = func(x, a, b VecVirtual) {
		affine(x, a, b, c.preLo, c.preHi)
		VEXTRACTI128(U8(1), x, a.AsX())
		VAESENCLAST(zero.AsX(), a.AsX(), a.AsX())
		VAESENCLAST(zero.AsX(), x.AsX(), x.AsX())
		VINSERTI128(U8(1), a.AsX(), x, x)
		VPSHUFB(c.invShiftRows, x, x)
		affine(x, a, b, c.postLo, c.postHi)
	}
	return t
}
