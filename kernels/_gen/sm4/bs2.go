package main

import (
	"fmt"

	"github.com/gmtun/gmtun/kernels/_gen/internal/frame"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The two-set byte-sliced CTR kernel: two independent 64-block passes
// (two counter runs, say the direct parts of two packets) interleaved
// round by round. One byte-sliced set's round is a chain (every byte of
// the next round depends on every byte of this one), and on its own it
// leaves part of the vector pipes idle; a second, independent set fills
// them.
//
// Two sets of sixteen registers do not fit with the round's temporaries,
// so each set keeps its oldest word on the stack (as the YMM tiers'
// slotSet): round i reads X_i only as the base the new word X_{i+4} is
// folded into, so it is loaded into the register of X_{i+1} once that
// word has fed the S-box input and been stored as the next round's X_i.
// Two sets then hold 24 registers, and a round's eight S-box outputs the
// other eight. The S-box input is computed afresh each round (no pair
// sharing of X_{i+2} ⊕ X_{i+3}, which would need four more registers per
// set).

// bs2Set is one set of the two-set kernel.
type bs2Set struct {
	r    [3][4]VecVirtual // words X_{i+1}, X_{i+2}, X_{i+3} (roles rotate)
	slot [2]Mem           // four 64-byte byte registers each; slot i%2 holds X_i
	ctrM Mem              // bytes 0-11 of the counter block in the M domain
	lo   GPVirtual        // native inc32 word of the pass
}

// round2 emits round i (mod 4) of set s.
func (g *bsKernel) round2(s *bs2Set, i int, rkp GPVirtual) {
	x1, x2, x3 := &s.r[i%3], &s.r[(i+1)%3], &s.r[(i+2)%3]
	var p0, p3 [4]VecVirtual
	for j := 0; j < 4; j++ {
		key := Mem{Base: rkp, Disp: 128*j + 4*i}
		t := ZMM()
		VPXORD(x1[j], x2[j], t)
		VPTERNLOGD_BCST(U8(0x96), key, x3[j], t)
		VMOVDQU64(x1[j], s.slot[(i+1)%2].Offset(64*j))
		p0[j], p3[j] = g.sbox(t)
	}
	// X_{i+4} byte j = X_i byte j ⊕ P0_j ⊕ P0_{j+1} ⊕ P3_{j+1} ⊕ P0_{j+2} ⊕
	// P3_{j+2} ⊕ P3_{j+3}, built in X_{i+1}'s registers.
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
		x0 := x1[j] // X_{i+1} is in its slot now
		VMOVDQU64(s.slot[i%2].Offset(64*j), x0)
		for k := 0; k < 6; k += 2 {
			VPTERNLOGD(U8(0x96), terms[k], terms[k+1], x0)
		}
	}
}

// counters2 builds set s's 64 counter blocks: word 0 straight into its
// slot, words 1-3 into registers.
func (g *bsKernel) counters2(s *bs2Set) {
	cv := ZMM()
	VPBROADCASTD(s.lo.As32(), cv)
	var d [4]VecVirtual
	for h := range d {
		d[h] = ZMM()
		VPADDD(g.b.ctrIdx.Offset(64*h), cv, d[h])
		VPSHUFB(g.b.ctrBytes, d[h], d[h])
	}
	for j := 12; j < 16; j++ {
		nb := 15 - j
		a, b := ZMM(), ZMM()
		VMOVDQU64(g.b.ctrPerm.Offset(64*nb), a)
		VPERMI2D(d[1], d[0], a)
		VMOVDQU64(g.b.ctrPerm.Offset(64*nb), b)
		VPERMI2D(d[3], d[2], b)
		x := ZMM()
		VSHUFI64X2(U8(0x44), b, a, x)
		g.toDomain(x)
		s.r[2][j-12] = x
	}
	for j := 0; j < 4; j++ {
		v := ZMM()
		VPBROADCASTB(s.ctrM.Offset(j), v)
		VMOVDQU64(v, s.slot[0].Offset(64*j))
	}
	for j := 4; j < 12; j++ {
		v := ZMM()
		VPBROADCASTB(s.ctrM.Offset(j), v)
		s.r[j/4-1][j%4] = v
	}
}

// twoSetRounds emits the 32 rounds of both sets, interleaved round by
// round, four rounds per loop iteration.
func (g *bsKernel) twoSetRounds(sets *[2]*bs2Set) {
	name := g.name
	rkp, cnt := GP64(), GP64()
	LEAQ(g.rkTab, rkp)
	MOVQ(U32(8), cnt)
	Label(name + "_rounds2")
	for i := 0; i < 4; i++ {
		for _, s := range sets {
			g.round2(s, i, rkp)
		}
	}
	Comment("Four rounds moved X_{i+1} from r[0] to r[1]: rotate the roles back.")
	for _, s := range sets {
		for j := 0; j < 4; j++ {
			t := ZMM()
			VMOVDQA64(s.r[0][j], t)
			VMOVDQA64(s.r[1][j], s.r[0][j])
			VMOVDQA64(s.r[2][j], s.r[1][j])
			VMOVDQA64(t, s.r[2][j])
		}
	}
	ADDQ(U8(16), rkp)
	DECQ(cnt)
	JNZ(LabelRef(name + "_rounds2"))
}

// final returns the set's output words X32 … X35 in the byte-register
// order of output (X32 loaded back from its slot).
func (s *bs2Set) final() [16]VecVirtual {
	var x [16]VecVirtual
	for j := 0; j < 4; j++ {
		x[j] = ZMM()
		VMOVDQU64(s.slot[0].Offset(64*j), x[j])
	}
	for w := 0; w < 3; w++ {
		for j := 0; j < 4; j++ {
			x[4+4*w+j] = s.r[w][j]
		}
	}
	return x
}

// newBS2Sets allocates the two sets' slots (one aligned area).
func newBS2Sets() [2]*bs2Set {
	base := frame.AlignedArea(2 * 2 * 4 * 64)
	var sets [2]*bs2Set
	for k := range sets {
		s := &bs2Set{}
		slot := Mem{Base: base, Disp: 512 * k}
		s.slot = [2]Mem{slot, slot.Offset(4 * 64)}
		sets[k] = s
	}
	return sets
}

// enter stores word 0 of a byte-sliced state x in the set's slot 0 and
// keeps words 1-3 in registers.
func (s *bs2Set) enter(x [16]VecVirtual) {
	for j := 0; j < 4; j++ {
		VMOVDQU64(x[j], s.slot[0].Offset(64*j))
	}
	for j := 4; j < 16; j++ {
		s.r[j/4-1][j%4] = x[j]
	}
}

func genBSXORKeyStream2(c *consts, b *bsConsts) {
	name := "xorKeyStream2AVX512GFNI"
	TEXT(name, 0, "func(rk *[32]uint32, ctrA *[16]byte, dstA, srcA *byte, ctrB *[16]byte, dstB, srcB *byte)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs srcA with the SM4 keystream of the 64 counter blocks ctrA, inc32(ctrA), … into dstA, and the same for B, in one pass of two interleaved byte-sliced sets, using %s. The counters are not updated.", name, bsDoc))
	g := &bsKernel{c: c, b: b, name: name, ctr: true}
	g.rk = Load(Param("rk"), GP64()).(GPVirtual)
	g.rkTab = AllocLocal(512)
	g.splitKeys()

	sets := newBS2Sets()
	for k, sfx := range []string{"A", "B"} {
		s := sets[k]
		s.ctrM = AllocLocal(16)
		ctrp := Load(Param("ctr"+sfx), GP64()).(GPVirtual)
		s.lo = GP64()
		MOVL(Mem{Base: ctrp, Disp: 12}, s.lo.As32())
		BSWAPL(s.lo.As32())
		cm := XMM()
		VMOVDQU(Mem{Base: ctrp}, cm)
		VGF2P8AFFINEQB_BCST(U8(0), g.c.preMat, cm, cm)
		VMOVDQU(cm, s.ctrM)
		g.counters2(s)
	}

	g.twoSetRounds(&sets)

	g.full = true
	for k, sfx := range []string{"A", "B"} {
		x := sets[k].final()
		g.dst = Load(Param("dst"+sfx), GP64()).(GPVirtual)
		g.src = Load(Param("src"+sfx), GP64()).(GPVirtual)
		g.output(x)
	}
	g.full = false
	frame.Zero(g.rkTab, 512, true, g.c.zero)
	VZEROUPPER()
	RET()
}
