package main

import (
	"fmt"

	"github.com/gmtun/gmtun/kernels/_gen/internal/frame"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The byte-sliced kernel of the AVX512GFNI tier (bs.go): one generated
// function's state, its group masks and split round keys, the S-box and
// the rounds, the passes, and the ECB and CTR TEXT functions.

// bsKernel emits one byte-sliced function.
type bsKernel struct {
	c        *consts
	b        *bsConsts
	name     string
	ctr      bool
	rk       GPVirtual // round keys (param)
	dst, src GPVirtual
	n        GPVirtual
	ctrp     GPVirtual // counter block (CTR)
	ctrLo    GPVirtual // native inc32 word of the current pass (CTR)
	ctrM     Mem       // M applied to the bytes of the counter block (CTR)
	rkTab    Mem       // split round keys: [j][i] dwords, 4×128 bytes
	masks    Mem       // 16 opmask bytes of the current pass (2 bits per block)
	narrow   bool      // emitting the 32-block YMM pass
	full     bool      // emitting a pass known to be whole: no masks
}

// vec allocates a vector register of the pass being emitted: ZMM for the
// 64-block pass, YMM for the 32-block one.
func (g *bsKernel) vec() VecVirtual {
	if g.narrow {
		return YMM()
	}
	return ZMM()
}

// groupBytes is the size of one load group: a whole register, four blocks
// (ZMM) or two (YMM).
func (g *bsKernel) groupBytes() int {
	if g.narrow {
		return 32
	}
	return 64
}

// groupMask loads the opmask of load group grp of the current pass.
func (g *bsKernel) groupMask(grp int) Op {
	kr := K()
	if g.narrow {
		// One qword of 2 bits per block for the whole pass; group grp
		// covers blocks 2grp, 2grp+1.
		KMOVQ(g.masks, kr)
		if grp > 0 {
			KSHIFTRQ(U8(4*grp), kr, kr)
		}
		return kr
	}
	KMOVB(g.masks.Offset(grp), kr)
	return kr
}

// narrowMask stores the opmask qword of a 32-block pass of min(n, 32)
// blocks: two bits per block.
func (g *bsKernel) narrowMask() {
	m, bits := GP64(), GP64()
	MOVQ(g.n, m)
	SHLQ(U8(1), m)
	MOVQ(I32(-1), bits)
	BZHIQ(m, bits, bits)
	MOVQ(bits, g.masks)
}

// splitKeys stores the round keys as byte-replicated dwords: dword i of
// row j is pre(byte j (big-endian) of rk_i) four times, the key's share of
// the S-box input in the M domain.
func (g *bsKernel) splitKeys() {
	lo, hi, pat := ZMM(), ZMM(), ZMM()
	VMOVDQU64(Mem{Base: g.rk}, lo)
	VMOVDQU64(Mem{Base: g.rk, Disp: 64}, hi)
	for j := 0; j < 4; j++ {
		for h, v := range []VecVirtual{lo, hi} {
			VPSHUFB(g.b.rkSplit.Offset(64*j), v, pat)
			VGF2P8AFFINEQB_BCST(U8(g.c.sb.pre.c), g.c.preMat, pat, pat)
			VMOVDQU64(pat, g.rkTab.Offset(128*j+64*h))
		}
	}
}

// passMasks stores the opmask bytes of min(n, total) blocks: two qword
// bits per block, group g (blocks 4g…4g+3 of the pass) in byte g.
func (g *bsKernel) passMasks(total int) {
	m, idx, bits, zero, sixtyfour := GP64(), GP64(), GP64(), GP64(), GP64()
	MOVQ(U32(total), m)
	CMPQ(g.n, m)
	CMOVQLT(g.n, m)
	XORQ(zero, zero)
	MOVQ(U32(64), sixtyfour)
	for q := 0; q < total/32; q++ {
		// idx = clamp(2m - 64q, 0, 64); BZHI keeps all ones from 64 on.
		LEAQ(Mem{Base: m, Index: m, Scale: 1, Disp: -64 * q}, idx)
		CMPQ(idx, sixtyfour)
		CMOVQGT(sixtyfour, idx)
		TESTQ(idx, idx)
		CMOVQLT(zero, idx)
		MOVQ(I32(-1), bits)
		BZHIQ(idx, bits, bits)
		MOVQ(bits, g.masks.Offset(8*q))
	}
}

// sbox computes, for the S-box input t = pre(x) of one byte position
// (already in the M domain), M∘A0∘τ(x) (into a new register) and M∘A3∘τ(x)
// (in place of t).
func (g *bsKernel) sbox(t VecVirtual) (p0, p3 VecVirtual) {
	p0 = g.vec()
	VGF2P8AFFINEINVQB_BCST(U8(g.b.p0.c), g.b.p0m, t, p0)
	VGF2P8AFFINEINVQB_BCST(U8(g.b.p3.c), g.b.p3m, t, t)
	return p0, t
}

// round emits round r (mod 4) on the state x. Even rounds compute
// X_{i+2} ⊕ X_{i+3} into s for the odd round after them.
func (g *bsKernel) round(x *[16]VecVirtual, s *[4]VecVirtual, r int, rkp GPVirtual) {
	X := func(w, j int) VecVirtual { return x[((r+w)%4)*4+j] }
	var p0, p3 [4]VecVirtual
	for j := 0; j < 4; j++ {
		key := Mem{Base: rkp, Disp: 128*j + 4*r}
		var t VecVirtual
		if r%2 == 0 {
			s[j] = g.vec()
			VPXORD(X(2, j), X(3, j), s[j])
			t = g.vec()
			VMOVDQA64(s[j], t)
			VPTERNLOGD_BCST(U8(0x96), key, X(1, j), t)
		} else {
			t = s[j]
			VPTERNLOGD_BCST(U8(0x96), key, X(3, j), t)
		}
		p0[j], p3[j] = g.sbox(t)
	}
	// X_{i+4} byte j = x0_j ⊕ P0_j ⊕ P0_{j+1} ⊕ P3_{j+1} ⊕ P0_{j+2} ⊕
	// P3_{j+2} ⊕ P3_{j+3}; the terms are folded in the order their bytes
	// were computed, so only the last VPTERNLOGD waits for byte 3.
	for j := 0; j < 4; j++ {
		var terms []VecVirtual
		for b := 0; b < 4; b++ {
			switch (b - j + 4) % 4 {
			case 0:
				terms = append(terms, p0[b])
			case 1, 2:
				terms = append(terms, p0[b], p3[b])
			case 3:
				terms = append(terms, p3[b])
			}
		}
		x0 := X(0, j)
		for i := 0; i < 6; i += 2 {
			VPTERNLOGD(U8(0x96), terms[i], terms[i+1], x0)
		}
	}
}

// rounds emits the 32 rounds on the state x, four per loop iteration so
// that the register roles come back to where they started.
func (g *bsKernel) rounds(x *[16]VecVirtual, label string) {
	rkp, cnt := GP64(), GP64()
	LEAQ(g.rkTab, rkp)
	MOVQ(U32(8), cnt)
	Label(label)
	var s [4]VecVirtual
	for r := 0; r < 4; r++ {
		g.round(x, &s, r, rkp)
	}
	ADDQ(U8(16), rkp)
	DECQ(cnt)
	JNZ(LabelRef(label))
}

// body emits the pass loop: 64-block ZMM passes (the last one masked)
// while more than 32 blocks remain, then at most one 32-block YMM pass
// (masked). The YMM pass costs about half a ZMM one on a CPU that runs
// ZMM instructions at half rate, so a tail of 1 to 32 blocks (a short
// packet, a long packet's leftovers) takes half the time it would in a
// ZMM pass.
func (g *bsKernel) body() {
	g.rkTab = AllocLocal(512)
	g.masks = AllocLocal(16)
	g.splitKeys()
	g.passes()
	frame.Zero(g.rkTab, 512, true, g.c.zero)
	VZEROUPPER()
	RET()
}

// passes emits the pass loop of body (round keys already split); it
// advances src, dst and n (and the counter) and falls through at the end.
func (g *bsKernel) passes() {
	Label(g.name + "_loop")
	TESTQ(g.n, g.n)
	JLE(LabelRef(g.name + "_done"))
	CMPQ(g.n, U8(32))
	JLE(LabelRef(g.name + "_narrow"))
	g.passMasks(64)
	x := g.input()
	g.rounds(&x, g.name+"_rounds")
	g.output(x)
	ADDQ(U32(g.b.passBytes), g.src)
	ADDQ(U32(g.b.passBytes), g.dst)
	if g.ctr {
		ADDL(U8(64), g.ctrLo.As32())
	}
	SUBQ(U8(64), g.n)
	JMP(LabelRef(g.name + "_loop"))

	Label(g.name + "_narrow")
	Comment("1 to 32 blocks left: one 32-block pass on YMM registers.")
	g.narrow = true
	g.narrowMask()
	x = g.input()
	g.rounds(&x, g.name+"_rounds_narrow")
	g.output(x)
	g.narrow = false
	Label(g.name + "_done")
}

const bsDoc = "AVX-512 (F, BW, VL) and GFNI on ZMM registers, 64 blocks per pass in byte-sliced form"

func genBSEncryptBlocks(c *consts, b *bsConsts) {
	name := "encryptBlocksAVX512GFNI"
	// Not NOSPLIT: the frame (round keys, masks, the stack-resident set)
	// is larger than the no-split limit.
	TEXT(name, 0, "func(rk *[32]uint32, dst, src *byte, nblocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s encrypts nblocks 16-byte blocks from src to dst (SM4, GB/T 32907-2016 §7.1) with round keys rk, using %s.", name, bsDoc))
	g := &bsKernel{c: c, b: b, name: name}
	g.rk = Load(Param("rk"), GP64()).(GPVirtual)
	g.dst = Load(Param("dst"), GP64()).(GPVirtual)
	g.src = Load(Param("src"), GP64()).(GPVirtual)
	g.n = Load(Param("nblocks"), GP64()).(GPVirtual)
	g.body()
}

func genBSXORKeyStream(c *consts, b *bsConsts) {
	name := "xorKeyStreamAVX512GFNI"
	TEXT(name, 0, "func(rk *[32]uint32, ctr *[16]byte, dst, src *byte, nblocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs src with the SM4 keystream of the counter blocks ctr, inc32(ctr), … (NIST SP 800-38D §6.5 GCTR, §6.2 inc32) for nblocks whole blocks and writes dst, using %s. ctr is not updated.", name, bsDoc))
	g := &bsKernel{c: c, b: b, name: name, ctr: true}
	g.rk = Load(Param("rk"), GP64()).(GPVirtual)
	g.ctrp = Load(Param("ctr"), GP64()).(GPVirtual)
	g.dst = Load(Param("dst"), GP64()).(GPVirtual)
	g.src = Load(Param("src"), GP64()).(GPVirtual)
	g.n = Load(Param("nblocks"), GP64()).(GPVirtual)
	g.ctrLo = GP64()
	MOVL(Mem{Base: g.ctrp, Disp: 12}, g.ctrLo.As32())
	BSWAPL(g.ctrLo.As32())
	Comment("Bytes 0-11 of every counter block are fixed: take them into the M domain once.")
	g.ctrM = AllocLocal(16)
	cm := XMM()
	VMOVDQU(Mem{Base: g.ctrp}, cm)
	VGF2P8AFFINEQB_BCST(U8(0), g.c.preMat, cm, cm)
	VMOVDQU(cm, g.ctrM)
	g.body()
}
