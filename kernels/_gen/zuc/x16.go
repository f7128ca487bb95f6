package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ----------------------------------------------------------------------------
// The 16-lane AVX-512 tier (F/BW/VL, VBMI2, GFNI).
//
// Measurements on the Zen 5 this was tuned on (ZMM at half rate: 2 ZMM or
// 4 YMM vector µops per cycle, shifts/rotates/GFNI and VPSHUFB on 2 of the
// 4 pipes; VPADDD/VPTERNLOGD/VPBLENDMB latency 1, VPROLD/VPSHLDD/VPSHUFB 2,
// GFNI 3; unaligned ZMM loads at ~0.6 per cycle, aligned at 1):
//
//   - A single 16-lane ZMM group whose LFSR lives in registers runs a round
//     in ≈47 cycles although its µops would take ≈37: the R1/R2 recurrence
//     through F (≈21–26 cycles of latency) keeps too little independent work
//     in the scheduler (dependent ZMM µops need ≈12 independent chains to
//     reach full rate here, YMM µops 4). The old memory-ring kernel: ≈58.
//   - So the round kernels run two independent groups of 8 lanes in YMM
//     registers (lanes 0–7 and 8–15, the two halves of every state row)
//     and interleave their instruction streams; in work mode each group is
//     also software-pipelined, the F part of round i (whose only
//     cross-round inputs are R1 and R2) mixed with the LFSR step of round
//     i−1. ≈43 cycles per 16-lane round in a loop, for µops worth ≈33 (65
//     vector µops per group and round). Two ZMM groups (32 lanes) measured
//     the same per lane; skewing the two streams changed nothing.
//   - The LFSR rows live in a 64-byte-aligned frame copy (a ring: row
//     (j+off) mod 16 holds s_j after off rounds of a 16-round block), next
//     to a second ring holding 2·s_j, so that bit reorganisation and the
//     multiplications by 2^k read their doubled operand from memory instead
//     of spending an addition on it.
//
// Per round and group (GB/T 33133.1 §3.3): additions mod 2^31−1 as
// max_signed(t, t−p) with t = a+b (no shift; see lfsr); multiplications by
// 2^k as VPSHLDD(k, 2x, x) & p; L1 computed rotated by 8 bits
// (L1(x)<<<8 = x ⊕ x<<<8 ⊕ x<<<10 ⊕ x<<<18 ⊕ x<<<26), which puts the S0
// bytes of L1 and L2 at opposite byte parities, so two byte blends gather
// every S0 input into one register and every S1 input into another, and two
// blends and one rotation put the outputs back (no shuffles).
//
// initKeyStream16AVX512 and initXORKeyStream16AVX512 fuse the
// initialisation with whole blocks of output and leave the state behind
// (one call per batch, no tail rounds, per-lane lengths through masked
// loads and stores). The short tails of the general API (rows16AVX512,
// 1..16 rounds) keep a simpler single group: the 16 LFSR rows in Z0–Z15.

// State layout (shared with kernels/zuc): rows 0..15 the LFSR cells
// in logical order, row 16 R1, row 17 R2, rows 18..33 keystream scratch
// for the tails; a row is 16 dwords, lane c in dword c.
const (
	x16Row     = 64 // bytes per state row
	rowR1      = 16
	rowR2      = 17
	rowScratch = 18
	stateRows  = 34
)

func x16StateRow(st Register, j int) Mem { return Mem{Base: st, Disp: j * x16Row} }

func x16Sig(params string) string {
	return fmt.Sprintf("func(st *[%d]uint32%s)", stateRows*16, params)
}

var xor3 = ternImm(func(a, b, c bool) bool { return a != b != c })

// tern0x6c is VPTERNLOGD's (A & C) ⊕ B: q = (q & 0x0f) ⊕ P1[x2] in S0.
var tern0x6c = ternImm(func(a, b, c bool) bool { return (a && c) != b })

// pool is a set of temporary vector registers, assigned by hand: avo's
// allocator gives up at the register pressure of these kernels.
type pool []Register

func (p *pool) get() Register {
	if len(*p) == 0 {
		panic("zuc: out of temporary vector registers")
	}
	r := (*p)[len(*p)-1]
	*p = (*p)[:len(*p)-1]
	return r
}

func (p *pool) put(rs ...Register) {
	for _, r := range rs {
		for _, f := range *p {
			if f == r {
				panic("zuc: temporary register returned twice")
			}
		}
		*p = append(*p, r)
	}
}

func zmm(r Register) Register { return r.(VecPhysical).AsZ() }

// ----------------------------------------------------------------------------
// Two interleaved groups of 8 lanes (initRounds, keyStream, xorKeyStream).

// Frame layout (bytes from the aligned base): the ring of LFSR rows, the
// ring of doubled rows, then the keystream rows of the current block (row
// i = word i of every lane). Group h uses bytes 32h..32h+31 of every row.
const (
	frRing   = 0
	frDouble = 16 * x16Row
	frZ      = 32 * x16Row
	frSize   = 48*x16Row + 64 // + alignment slack
)

// seq is a list of instructions still to emit; the two groups' lists are
// merged before emission.
type seq []func()

func (s *seq) add(f func()) { *s = append(*s, f) }

// mix returns the instructions of a and b alternately.
func mix(a, b seq) seq {
	out := make(seq, 0, len(a)+len(b))
	for i := 0; i < max(len(a), len(b)); i++ {
		if i < len(a) {
			out = append(out, a[i])
		}
		if i < len(b) {
			out = append(out, b[i])
		}
	}
	return out
}

func (s seq) emit() {
	for _, f := range s {
		f()
	}
}

// pair holds the registers and frame both groups share.
//
//	Y0      p = 2^31−1 in every dword (AND mask and modulus)
//	Y1–Y3   S0 nibble tables P1, P2, T (VPSHUFB tables must be registers)
//	Y4–Y17  group 0: R1, R2, s15, 2·s15, 7 F and 3 LFSR temporaries
//	Y18–Y31 group 1, the same
//	kOdd    opmask of the odd bytes (bytes 1, 3 of every dword)
//	kLoW    opmask of the low words of the dwords
type pair struct {
	base       Register // 64-byte aligned frame
	p          Register
	p1, p2, tt Register
	kOdd, kLoW OpmaskVirtual
	g          [2]*group
}

// group is one group of 8 lanes. s15 and d15 keep the newest LFSR cell
// and its double in registers for the next round (the rings in memory
// hold them too).
type group struct {
	h        int
	c        *pair
	r1, r2   Register
	s15, d15 Register
	f, l     pool // temporaries of the F part and of the LFSR step
}

func newPair() *pair {
	c := &pair{p: Y0, p1: Y1, p2: Y2, tt: Y3}
	regs := []Register{Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15,
		Y16, Y17, Y18, Y19, Y20, Y21, Y22, Y23, Y24, Y25, Y26, Y27, Y28, Y29, Y30, Y31}
	for h := range c.g {
		r := regs[14*h : 14*h+14]
		c.g[h] = &group{h: h, c: c, r1: r[0], r2: r[1], s15: r[2], d15: r[3],
			f: append(pool(nil), r[4:11]...), l: append(pool(nil), r[11:14]...)}
	}
	return c
}

// temps returns ZMM temporaries for code outside the rounds: group 0's
// registers that hold no pinned value.
func (c *pair) temps() pool {
	var t pool
	for _, r := range append(append(pool(nil), c.g[0].f...), c.g[0].l...) {
		t = append(t, zmm(r))
	}
	return t
}

// allTemps returns the ZMM temporaries of both groups (20): enough for
// transpose16 to hold all 16 lanes' blocks at once.
func (c *pair) allTemps() pool {
	var t pool
	for _, g := range c.g {
		for _, r := range append(append(pool(nil), g.f...), g.l...) {
			t = append(t, zmm(r))
		}
	}
	return t
}

func (g *group) cell(j, off int) Mem {
	return Mem{Base: g.c.base, Disp: frRing + ((j+off)&15)*x16Row + 32*g.h}
}

func (g *group) dcell(j, off int) Mem {
	return Mem{Base: g.c.base, Disp: frDouble + ((j+off)&15)*x16Row + 32*g.h}
}

func (g *group) zrow(i int) Mem { return Mem{Base: g.c.base, Disp: frZ + i*x16Row + 32*g.h} }

// prologue reserves the aligned frame, loads the constants and copies the
// LFSR of st into the rings, R1 and R2 into registers.
func (c *pair) prologue(st Register) {
	local := AllocLocal(frSize)
	c.base = GP64()
	LEAQ(local, c.base)
	ADDQ(U8(63), c.base)
	ANDQ(I32(-64), c.base)
	Comment("Constants: p = 2^31−1, the S0 tables, the byte and word masks.")
	VMOVDQU32(consts.Offset(cMask31), c.p)
	VMOVDQU32(consts.Offset(cP1), c.p1)
	VMOVDQU32(consts.Offset(cP2), c.p2)
	VMOVDQU32(consts.Offset(cT), c.tt)
	g := GP64()
	c.kOdd, c.kLoW = K(), K()
	MOVQ(U64(0xaaaaaaaaaaaaaaaa), g)
	KMOVQ(g, c.kOdd)
	MOVQ(U64(0x5555555555555555), g)
	KMOVQ(g, c.kLoW)
	Comment("Copy the LFSR into the aligned rings (s_j and 2·s_j); R1, R2.")
	t := c.temps()
	a, b := t.get(), t.get()
	for j := 0; j < 16; j++ {
		VMOVDQU32(x16StateRow(st, j), a)
		VMOVDQA64(a, Mem{Base: c.base, Disp: frRing + j*x16Row})
		VPADDD(a, a, b)
		VMOVDQA64(b, Mem{Base: c.base, Disp: frDouble + j*x16Row})
	}
	for _, g := range c.g {
		VMOVDQU32(Mem{Base: st, Disp: rowR1*x16Row + 32*g.h}, g.r1)
		VMOVDQU32(Mem{Base: st, Disp: rowR2*x16Row + 32*g.h}, g.r2)
		VMOVDQA64(g.cell(15, 0), g.s15)
		VMOVDQA64(g.dcell(15, 0), g.d15)
	}
}

// epilogue copies the rings back into st in logical order (ring offset
// off: s_j in ring row (j+off) mod 16), with R1 and R2.
func (c *pair) epilogue(st Register, off int) {
	t := c.temps()
	a := t.get()
	for j := 0; j < 16; j++ {
		VMOVDQA64(Mem{Base: c.base, Disp: frRing + ((j+off)&15)*x16Row}, a)
		VMOVDQU32(a, x16StateRow(st, j))
	}
	for _, g := range c.g {
		VMOVDQU32(g.r1, Mem{Base: st, Disp: rowR1*x16Row + 32*g.h})
		VMOVDQU32(g.r2, Mem{Base: st, Disp: rowR2*x16Row + 32*g.h})
	}
	VZEROUPPER()
	RET()
}

// f1 is the F part of round off up to the S-box outputs (§3.3.2, §3.3.3):
// X1 = s11L‖s9H, X2 = s7L‖s5H, W1 = R1 ⊞ X1, W2 = R2 ⊕ X2,
// u = L1(W1L‖W2H)<<<8, v = L2(W2L‖W1H), then o0 = S0 of the S0 bytes of
// u and v (gathered by one blend), o1 = S1 of their S1 bytes.
func (g *group) f1(off int) (ops seq, o0, o1 Register) {
	c, f := g.c, &g.f
	x1, x2 := f.get(), f.get()
	m11, d9, m7, d5 := g.cell(11, off), g.dcell(9, off), g.cell(7, off), g.dcell(5, off)
	ops.add(func() { VMOVDQA64(m11, x1) })
	ops.add(func() { VPSHLDD(U8(16), d9, x1, x1) }) // (s11 << 16) | (2·s9 >> 16)
	ops.add(func() { VMOVDQA64(m7, x2) })
	ops.add(func() { VPSHLDD(U8(16), d5, x2, x2) })
	ops.add(func() { VPADDD(g.r1, x1, x1) })
	ops.add(func() { VPXORD(g.r2, x2, x2) })
	u, v := f.get(), f.get()
	ops.add(func() { VPSHLDD(U8(16), x2, x1, u) }) // W1L‖W2H
	ops.add(func() { VPSHLDD(U8(16), x1, x2, v) }) // W2L‖W1H
	f.put(x1, x2)
	// x ⊕ x<<<a ⊕ x<<<b ⊕ x<<<c ⊕ x<<<d with three temporaries.
	rotXor := func(x Register, a, b, cc, d int) {
		ra, rb, rc := f.get(), f.get(), f.get()
		ops.add(func() { VPROLD(U8(a), x, ra) })
		ops.add(func() { VPROLD(U8(b), x, rb) })
		ops.add(func() { VPROLD(U8(cc), x, rc) })
		ops.add(func() { VPTERNLOGD(xor3, rc, rb, ra) })
		ops.add(func() { VPROLD(U8(d), x, rb) })
		ops.add(func() { VPTERNLOGD(xor3, rb, ra, x) })
		f.put(ra, rb, rc)
	}
	rotXor(u, 8, 10, 18, 26) // L1(u)<<<8: its S0 bytes at even positions
	rotXor(v, 8, 14, 22, 30) // L2(v): S0 bytes at odd positions
	i0, i1 := f.get(), f.get()
	ops.add(func() { VPBLENDMB(v, u, c.kOdd, i0) }) // every S0 input
	ops.add(func() { VPBLENDMB(u, v, c.kOdd, i1) }) // every S1 input
	f.put(u, v)
	// S0 (three nibble tables; see s0Tail): q = x1 ⊕ P1[x2],
	// r = x2 ⊕ P2[q], S0 = (q<<1) ⊕ T[r].
	nib := consts.Offset(cNibble) // 0x0f in every byte, broadcast
	lo, q, r := f.get(), f.get(), f.get()
	ops.add(func() { VPANDD_BCST(nib, i0, lo) })
	ops.add(func() { VPSRLD(U8(4), i0, q) })
	ops.add(func() { VPSHUFB(lo, c.p1, r) })
	ops.add(func() { VPTERNLOGD_BCST(tern0x6c, nib, r, q) })
	ops.add(func() { VPSHUFB(q, c.p2, r) })
	ops.add(func() { VPXORD(lo, r, r) })
	ops.add(func() { VPSHUFB(r, c.tt, lo) })
	ops.add(func() { VPADDB(q, q, q) })
	ops.add(func() { VPXORD(q, lo, lo) })
	f.put(q, r, i0)
	// S1: two GFNI affine maps around the AES field inversion (s1M, s1L).
	a, o := f.get(), f.get()
	ops.add(func() { VGF2P8AFFINEQB(U8(0), consts.Offset(cS1M), i1, a) })
	ops.add(func() { VGF2P8AFFINEINVQB(U8(0x55), consts.Offset(cS1L), a, o) })
	f.put(a, i1)
	return ops, lo, o
}

// f2 writes R2 = S(v) and R1 = S(u) from the S-box outputs: R2 takes the
// odd bytes of o0 and the even of o1, R1 the others, rotated back by 8.
func (g *group) f2(o0, o1 Register) (ops seq) {
	c := g.c
	ops.add(func() { VPBLENDMB(o0, o1, c.kOdd, g.r2) })
	ops.add(func() { VPBLENDMB(o1, o0, c.kOdd, o0) })
	ops.add(func() { VPRORD(U8(8), o0, g.r1) })
	g.f.put(o0, o1)
	return ops
}

// wz computes W = (X0 ⊕ R1) ⊞ R2 with X0 = s15H‖s14L (§3.3.3; before f2
// overwrites R1 and R2) and, if out ≥ 0, stores the keystream word
// Z = W ⊕ X3, X3 = s2L‖s0H (§3.4), to keystream row out. It returns W if
// keep is set (initialisation mode), else nil.
func (g *group) wz(off, out int, keep bool) (ops seq, wk Register) {
	c, f := g.c, &g.f
	w := f.get()
	m14 := g.cell(14, off)
	ops.add(func() { VPBLENDMW(m14, g.d15, c.kLoW, w) })
	ops.add(func() { VPXORD(g.r1, w, w) })
	ops.add(func() { VPADDD(g.r2, w, w) })
	if out >= 0 {
		x3 := f.get()
		m2, d0, z := g.cell(2, off), g.dcell(0, off), g.zrow(out)
		ops.add(func() { VMOVDQA64(m2, x3) })
		ops.add(func() { VPSHLDD(U8(16), d0, x3, x3) })
		ops.add(func() { VPXORD(x3, w, w) })
		ops.add(func() { VMOVDQA64(w, z) })
		f.put(x3)
	}
	if !keep {
		f.put(w)
		return ops, nil
	}
	return ops, w
}

// lfsr is the LFSR step of round off (§3.3.1):
//
//	s16 = 2^15·s15 + 2^17·s13 + 2^21·s10 + 2^20·s4 + (1+2^8)·s0 (+ W>>1)
//
// mod p = 2^31−1, W>>1 only in initialisation mode (w not nil; it goes
// back to the F pool). s16 is written over s0 in the rings and becomes the
// s15 (and d15) registers; the s15 term, the only one that depends on the
// previous round, comes last.
//
// Additions: for a, b in [0, p], t = a+b ≤ 2p fits 32 bits; t ≤ p is
// non-negative as int32 and t−p is not, t ≥ 2^31 is negative and t−p is
// not, so max_signed(t, t−p) is the reduced sum, in [0, p]. It is p, never
// 0, when t ≥ 1 and t ≡ 0: with the nonzero s15 term last, s16 lands in
// [1, p] as §3.3.1 requires (0 is replaced by 2^31−1).
// Multiplication by 2^k is the 31-bit rotation
// ((x << k) | (x >> (31−k))) & p = VPSHLDD(k, 2x, x) & p.
func (g *group) lfsr(off int, w Register) (ops seq) {
	c, l := g.c, &g.l
	addMod := func(a, b, dst Register) {
		t := l.get()
		ops.add(func() { VPADDD(b, a, t) })
		ops.add(func() { VPSUBD(c.p, t, dst) })
		ops.add(func() { VPMAXSD(dst, t, dst) })
		l.put(t)
	}
	s0, acc := l.get(), l.get()
	m0, d0 := g.cell(0, off), g.dcell(0, off)
	ops.add(func() { VMOVDQA64(m0, s0) })
	ops.add(func() { VPSHLDD(U8(8), d0, s0, acc) })
	ops.add(func() { VPANDD(c.p, acc, acc) })
	addMod(acc, s0, acc)
	l.put(s0)
	for _, jk := range [][2]int{{4, 20}, {10, 21}, {13, 17}} {
		r := l.get()
		m, d, k := g.cell(jk[0], off), g.dcell(jk[0], off), jk[1]
		ops.add(func() { VMOVDQA64(m, r) })
		ops.add(func() { VPSHLDD(U8(k), d, r, r) })
		ops.add(func() { VPANDD(c.p, r, r) })
		addMod(acc, r, acc)
		l.put(r)
	}
	if w != nil {
		ops.add(func() { VPSRLD(U8(1), w, w) })
		addMod(acc, w, acc)
		g.f.put(w)
	}
	r15 := l.get()
	ops.add(func() { VPSHLDD(U8(15), g.d15, g.s15, r15) })
	ops.add(func() { VPANDD(c.p, r15, r15) })
	addMod(acc, r15, g.s15)
	l.put(acc, r15)
	ops.add(func() { VPADDD(g.s15, g.s15, g.d15) })
	ops.add(func() { VMOVDQA64(g.s15, m0) })
	ops.add(func() { VMOVDQA64(g.d15, d0) })
	return ops
}

// round is one round in dependency order: initialisation mode (W feeds the
// LFSR), or a lone work round whose output is discarded.
func (g *group) round(off int, init bool) seq {
	f1, o0, o1 := g.f1(off)
	wz, w := g.wz(off, -1, init)
	ops := append(append(f1, wz...), g.f2(o0, o1)...)
	return append(ops, g.lfsr(off, w)...)
}

// workBlock is 16 work rounds from ring offset base writing keystream
// rows 0..15, software-pipelined: the F part of round i (whose only
// cross-round inputs are R1 and R2; X1 and X2 read cells at least four
// rounds old) is mixed with the LFSR step of round i−1.
func (g *group) workBlock(base int) seq {
	var ops, prev seq
	for i := 0; i < 16; i++ {
		off := base + i
		f1, o0, o1 := g.f1(off)
		ops = append(ops, mix(f1, prev)...)
		wz, _ := g.wz(off, i, false)
		ops = append(ops, wz...)
		ops = append(ops, g.f2(o0, o1)...)
		prev = g.lfsr(off, nil)
	}
	return append(ops, prev...)
}

func (c *pair) round(off int, init bool) {
	mix(c.g[0].round(off, init), c.g[1].round(off, init)).emit()
}

func (c *pair) workBlock(base int) {
	mix(c.g[0].workBlock(base), c.g[1].workBlock(base)).emit()
}

// initRounds emits the 32 initialisation rounds and the discarded first
// work round (§3.5), leaving the ring at offset 1; loop names the label.
func (c *pair) initRounds(loop string) {
	n := GP64()
	MOVQ(U32(2), n)
	Label(loop)
	for i := 0; i < 16; i++ {
		Commentf("Initialisation round %d (mod 16), both groups.", i)
		c.round(i, true)
	}
	DECQ(n)
	JNZ(LabelRef(loop))
	Comment("First work round, output discarded.")
	c.round(0, false)
}

// output transposes keystream rows 0..15 into per-lane vectors (ZMM) and
// hands each lane's words to emit.
func (c *pair) output(emit emitter) {
	t := c.temps()
	scr := GP64()
	LEAQ(Mem{Base: c.base, Disp: frZ}, scr)
	transpose16(&t, scr, nil, emit)
}

// genInit16: the 32 initialisation rounds and the discarded first work
// round; the ring ends at offset 1, which the epilogue undoes for free.
func genInit16() {
	TEXT("initRounds16AVX512", 0, x16Sig(""))
	Pragma("noescape")
	Doc("initRounds16AVX512 runs the ZUC initialisation of all 16 lanes of st:",
		"32 rounds in initialisation mode, then one work-mode round whose output",
		"is discarded (GB/T 33133.1 §3.5). The LFSR rows and R1 = R2 = 0 must be loaded.")
	st := Load(Param("st"), GP64())
	c := newPair()
	c.prologue(st)
	c.initRounds("init16_loop")
	c.epilogue(st, 1)
}

// genKeyStream16: nblocks × 16 words per lane, lane c's words at
// ks[c*stride + 16*block ...].
func genKeyStream16() {
	TEXT("keyStream16AVX512", 0, x16Sig(", ks *uint32, stride int, nblocks int"))
	Pragma("noescape")
	Doc("keyStream16AVX512 writes nblocks×16 keystream words of each of the 16 lanes:",
		"lane c's words go to ks[c*stride:], in generation order. nblocks must be > 0.")
	st := Load(Param("st"), GP64())
	ks := Load(Param("ks"), GP64())
	stride := Load(Param("stride"), GP64())
	SHLQ(U8(2), stride)
	n := Load(Param("nblocks"), GP64())
	c := newPair()
	c.prologue(st)
	Label("ks16_loop")
	Comment("16 work rounds, both groups.")
	c.workBlock(0)
	c.output(func(lane int, v Register, disp int) {
		a := GP64()
		IMUL3Q(U32(lane), stride, a)
		VMOVDQU32(v, Mem{Base: ks, Index: a, Scale: 1, Disp: disp})
	})
	ADDQ(U8(64), ks)
	DECQ(n)
	JNZ(LabelRef("ks16_loop"))
	c.epilogue(st, 0)
}

// genXOR16: dst[c][off:off+64] = src[c][off:off+64] ⊕ keystream bytes (big
// endian words, as EEA3 §3.5 and the ZUC-256 keystream require); lanes with
// a nil dst pointer are skipped.
func genXOR16() {
	TEXT("xorKeyStream16AVX512", 0, x16Sig(", dst *[16]*byte, src *[16]*byte, nblocks int"))
	Pragma("noescape")
	Doc("xorKeyStream16AVX512 XORs nblocks×64 keystream bytes of each of the 16 lanes",
		"(words big-endian) from src[c] into dst[c]; lanes with dst[c] == nil are skipped.",
		"nblocks must be > 0.")
	st := Load(Param("st"), GP64())
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("nblocks"), GP64())
	off := GP64()
	XORQ(off, off)
	c := newPair()
	c.prologue(st)
	Label("xor16_loop")
	Comment("16 work rounds, both groups.")
	c.workBlock(0)
	c.output(func(lane int, v Register, disp int) {
		d, s := GP64(), GP64()
		skip := fmt.Sprintf("xor16_skip_%d", lane)
		MOVQ(Mem{Base: dst, Disp: 8 * lane}, d)
		TESTQ(d, d)
		JZ(LabelRef(skip))
		MOVQ(Mem{Base: src, Disp: 8 * lane}, s)
		VPSHUFB(consts.Offset(cBswap), v, v)
		VPXORD(Mem{Base: s, Index: off, Scale: 1, Disp: disp}, v, v)
		VMOVDQU32(v, Mem{Base: d, Index: off, Scale: 1, Disp: disp})
		Label(skip)
	})
	ADDQ(U8(64), off)
	DECQ(n)
	JNZ(LabelRef("xor16_loop"))
	c.epilogue(st, 0)
}

// genXORInit16: initialisation, then nblocks×64 keystream bytes XORed into
// every lane, each lane up to its own length (masked loads and stores for
// the last partial block, nothing past the length or for nil lanes). The
// state is consumed: it is not written back.
func genXORInit16() {
	TEXT("initXORKeyStream16AVX512", 0, x16Sig(", dst *[16]*byte, src *[16]*byte, lens *[16]int, full int, nblocks int"))
	Pragma("noescape")
	Doc("initXORKeyStream16AVX512 runs the initialisation of all 16 lanes of st, then",
		"XORs the keystream (words big-endian) from src[c] into dst[c] for lens[c] bytes,",
		"for every lane with dst[c] != nil; nblocks×64 must cover the longest length and",
		"full (a multiple of 64) must not exceed the shortest of those lens[c]: the blocks",
		"below full skip the length checks. st is left undefined.")
	st := Load(Param("st"), GP64())
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	lens := Load(Param("lens"), GP64())
	full := Load(Param("full"), GP64())
	n := Load(Param("nblocks"), GP64())
	off := GP64()
	XORQ(off, off)
	c := newPair()
	c.prologue(st)
	c.initRounds("ixor16_init")
	Label("ixor16_loop")
	Comment("16 work rounds, both groups (ring offset 1 after the initialisation).")
	c.workBlock(1)
	t := c.temps()
	x := t.get()
	scr := GP64()
	LEAQ(Mem{Base: c.base, Disp: frZ}, scr)
	// remaining sets r = lens[lane] − off and jumps to skip when the lane is
	// nil or done, to part when fewer than 64 bytes remain.
	remaining := func(lane int, r Register, skip, part string) {
		d := GP64()
		MOVQ(Mem{Base: dst, Disp: 8 * lane}, d)
		TESTQ(d, d)
		JZ(LabelRef(skip))
		MOVQ(Mem{Base: lens, Disp: 8 * lane}, r)
		SUBQ(off, r)
		JLE(LabelRef(skip))
		CMPQ(r, U8(64))
		JB(LabelRef(part))
	}
	// lowBits sets k to the low r (< 64) bits.
	lowBits := func(r Register, k Op) {
		m := GP64()
		MOVQ(I32(-1), m)
		BZHIQ(r, m, m)
		KMOVQ(m, k)
	}
	load := func(lane int, v Register, disp int) {
		r, s := GP64(), GP64()
		skip, part := fmt.Sprintf("ixor16_lskip_%d", lane), fmt.Sprintf("ixor16_lpart_%d", lane)
		remaining(lane, r, skip, part)
		MOVQ(Mem{Base: src, Disp: 8 * lane}, s)
		VPSHUFB(consts.Offset(cBswap), v, v)
		VPXORD(Mem{Base: s, Index: off, Scale: 1}, v, v)
		JMP(LabelRef(skip))
		Label(part)
		k := K()
		lowBits(r, k)
		MOVQ(Mem{Base: src, Disp: 8 * lane}, s)
		VPSHUFB(consts.Offset(cBswap), v, v)
		VMOVDQU8_Z(Mem{Base: s, Index: off, Scale: 1}, k, x)
		VPXORD(x, v, v)
		Label(skip)
	}
	store := func(lane int, v Register, disp int) {
		r, d := GP64(), GP64()
		skip, part := fmt.Sprintf("ixor16_sskip_%d", lane), fmt.Sprintf("ixor16_spart_%d", lane)
		remaining(lane, r, skip, part)
		MOVQ(Mem{Base: dst, Disp: 8 * lane}, d)
		VMOVDQU32(v, Mem{Base: d, Index: off, Scale: 1})
		JMP(LabelRef(skip))
		Label(part)
		k := K()
		lowBits(r, k)
		MOVQ(Mem{Base: dst, Disp: 8 * lane}, d)
		VMOVDQU8(v, k, Mem{Base: d, Index: off, Scale: 1})
		Label(skip)
	}
	fastLoad := func(lane int, v Register, disp int) {
		d, s := GP64(), GP64()
		skip := fmt.Sprintf("ixor16_flskip_%d", lane)
		MOVQ(Mem{Base: dst, Disp: 8 * lane}, d)
		TESTQ(d, d)
		JZ(LabelRef(skip))
		MOVQ(Mem{Base: src, Disp: 8 * lane}, s)
		VPSHUFB(consts.Offset(cBswap), v, v)
		VPXORD(Mem{Base: s, Index: off, Scale: 1}, v, v)
		Label(skip)
	}
	fastStore := func(lane int, v Register, disp int) {
		d := GP64()
		skip := fmt.Sprintf("ixor16_fsskip_%d", lane)
		MOVQ(Mem{Base: dst, Disp: 8 * lane}, d)
		TESTQ(d, d)
		JZ(LabelRef(skip))
		VMOVDQU32(v, Mem{Base: d, Index: off, Scale: 1})
		Label(skip)
	}
	CMPQ(off, full)
	JAE(LabelRef("ixor16_masked"))
	Comment("Every active lane has a whole block left.")
	t2 := c.allTemps()
	transpose16(&t2, scr, fastLoad, fastStore)
	JMP(LabelRef("ixor16_next"))
	Label("ixor16_masked")
	Comment("Last blocks: lengths checked, partial blocks masked.")
	transpose16(&t, scr, load, store)
	Label("ixor16_next")
	ADDQ(U8(64), off)
	DECQ(n)
	JNZ(LabelRef("ixor16_loop"))
	VZEROUPPER()
	RET()
}

// genKeyStreamInit16: initialisation, then nblocks×16 keystream words of
// every lane to ks[c*stride:]. The state is consumed.
func genKeyStreamInit16() {
	TEXT("initKeyStream16AVX512", 0, x16Sig(", ks *uint32, stride int, nblocks int"))
	Pragma("noescape")
	Doc("initKeyStream16AVX512 runs the initialisation of all 16 lanes of st, then",
		"writes nblocks×16 keystream words of each lane c to ks[c*stride:]. st is left undefined.")
	st := Load(Param("st"), GP64())
	ks := Load(Param("ks"), GP64())
	stride := Load(Param("stride"), GP64())
	SHLQ(U8(2), stride)
	n := Load(Param("nblocks"), GP64())
	c := newPair()
	c.prologue(st)
	c.initRounds("iks16_init")
	Label("iks16_loop")
	Comment("16 work rounds, both groups (ring offset 1 after the initialisation).")
	c.workBlock(1)
	c.output(func(lane int, v Register, disp int) {
		a := GP64()
		IMUL3Q(U32(lane), stride, a)
		VMOVDQU32(v, Mem{Base: ks, Index: a, Scale: 1, Disp: disp})
	})
	ADDQ(U8(64), ks)
	DECQ(n)
	JNZ(LabelRef("iks16_loop"))
	VZEROUPPER()
	RET()
}

// transpose16 transposes the 16 rows at scr (row i = word i of every lane;
// 64-byte aligned) into per-lane vectors and hands each lane's 16 words to
// emit: 4×4 dword transposes inside 128-bit lanes, written back, then 4×4
// transposes of 128-bit lanes. t supplies 8 ZMM temporaries. If load is
// not nil it is called for the four lanes of a group before emit is called
// for them, so that an XOR reads its four source blocks before it writes
// any destination (lane buffers a multiple of 4 KiB apart would otherwise
// make every load wait on the store before it: 4K aliasing).
//
// With 20 temporaries (and a load) all 16 lanes are loaded before any is
// stored: then no load of a block follows a store to the same address
// modulo 4 KiB whatever the lanes' placement.
func transpose16(t *pool, scr Register, load, emit emitter) {
	row := func(i int) Mem { return Mem{Base: scr, Disp: i * x16Row} }
	all := load != nil && len(*t) >= 20
	var held [4][4]Register
	Comment("Transpose 16×16 words: 4×4 inside 128-bit lanes, then 4×4 lanes.")
	for g := 0; g < 4; g++ {
		var r [4]Register
		for i := range r {
			r[i] = t.get()
			VMOVDQA64(row(4*g+i), r[i])
		}
		t0, t1, t2, t3 := t.get(), t.get(), t.get(), t.get()
		VPUNPCKLDQ(r[1], r[0], t0)
		VPUNPCKHDQ(r[1], r[0], t1)
		VPUNPCKLDQ(r[3], r[2], t2)
		VPUNPCKHDQ(r[3], r[2], t3)
		VPUNPCKLQDQ(t2, t0, r[0])
		VPUNPCKHQDQ(t2, t0, r[1])
		VPUNPCKLQDQ(t3, t1, r[2])
		VPUNPCKHQDQ(t3, t1, r[3])
		for i := range r {
			VMOVDQA64(r[i], row(4*g+i))
		}
		t.put(r[0], r[1], r[2], r[3], t0, t1, t2, t3)
	}
	for k := 0; k < 4; k++ {
		a, b, c, d := t.get(), t.get(), t.get(), t.get()
		VMOVDQA64(row(k), a)
		VMOVDQA64(row(4+k), b)
		VMOVDQA64(row(8+k), c)
		VMOVDQA64(row(12+k), d)
		p, q, r, s := t.get(), t.get(), t.get(), t.get()
		VSHUFI32X4(U8(0x88), b, a, p) // A0 A2 B0 B2
		VSHUFI32X4(U8(0xdd), b, a, q) // A1 A3 B1 B3
		VSHUFI32X4(U8(0x88), d, c, r) // C0 C2 D0 D2
		VSHUFI32X4(U8(0xdd), d, c, s) // C1 C3 D1 D3
		VSHUFI32X4(U8(0x88), r, p, a) // lane k
		VSHUFI32X4(U8(0x88), s, q, b) // lane 4+k
		VSHUFI32X4(U8(0xdd), r, p, c) // lane 8+k
		VSHUFI32X4(U8(0xdd), s, q, d) // lane 12+k
		lanes := [4]Register{a, b, c, d}
		if load != nil {
			for i, v := range lanes {
				load(4*i+k, v, 0)
			}
		}
		t.put(p, q, r, s)
		if all {
			held[k] = lanes
			continue
		}
		for i, v := range lanes {
			emit(4*i+k, v, 0)
		}
		t.put(a, b, c, d)
	}
	if all {
		for k := range held {
			for i, v := range held[k] {
				emit(4*i+k, v, 0)
			}
		}
		for k := range held {
			t.put(held[k][:]...)
		}
	}
}

// ----------------------------------------------------------------------------
// Single 16-lane group, LFSR in Z0–Z15 (rows16AVX512, the S-box hook).

// ring is the register assignment of the single-group code: Z0–Z15 the
// LFSR ring (Z((j+off) mod 16) holds s_j after off rounds), Z16/Z17 R1/R2,
// Z18 p, Z19–Z21 the S0 tables, Z22–Z31 temporaries.
type ring struct {
	s          [16]Register
	r1, r2     Register
	p          Register
	p1, p2, tt Register
	kOdd       OpmaskVirtual
	t          pool
}

func newRing() *ring {
	return &ring{
		s:  [16]Register{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15},
		r1: Z16, r2: Z17, p: Z18, p1: Z19, p2: Z20, tt: Z21,
		t: pool{Z31, Z30, Z29, Z28, Z27, Z26, Z25, Z24, Z23, Z22},
	}
}

func (x *ring) loadTables() {
	VMOVDQU32(consts.Offset(cP1), x.p1)
	VMOVDQU32(consts.Offset(cP2), x.p2)
	VMOVDQU32(consts.Offset(cT), x.tt)
}

// s0 returns S0 of every byte of in (as in group.f1).
func (x *ring) s0(in Register) Register {
	nib := consts.Offset(cNibble)
	lo, q, r := x.t.get(), x.t.get(), x.t.get()
	VPANDD_BCST(nib, in, lo)
	VPSRLD(U8(4), in, q)
	VPSHUFB(lo, x.p1, r)
	VPTERNLOGD_BCST(tern0x6c, nib, r, q)
	VPSHUFB(q, x.p2, r)
	VPXORD(lo, r, r)
	VPSHUFB(r, x.tt, lo)
	VPADDB(q, q, q)
	VPXORD(q, lo, lo)
	x.t.put(q, r)
	return lo
}

// s1 returns S1 of every byte of in.
func (x *ring) s1(in Register) Register {
	a, o := x.t.get(), x.t.get()
	VGF2P8AFFINEQB(U8(0), consts.Offset(cS1M), in, a)
	VGF2P8AFFINEINVQB(U8(0x55), consts.Offset(cS1L), a, o)
	x.t.put(a)
	return o
}

// round emits one work round at ring offset off, the keystream word to
// out (GB/T 33133.1 §3.3, §3.4; see group for the techniques).
func (x *ring) round(off int, out Mem) {
	t := &x.t
	c := func(j int) Register { return x.s[(j+off)&15] }
	d := func(j int) Register { // 2·s_j
		r := t.get()
		VPADDD(c(j), c(j), r)
		return r
	}
	hiLo := func(a, b int) Register { // s_a L ‖ s_b H
		tb, r := d(b), t.get()
		VPSHLDD(U8(16), tb, c(a), r)
		t.put(tb)
		return r
	}
	d15, w := d(15), t.get()
	VPBLENDMW(d15, c(14), x.kOdd, w) // X0 = s15H‖s14L
	t.put(d15)
	x1 := hiLo(11, 9)
	x2 := hiLo(7, 5)
	VPXORD(x.r1, w, w)
	VPADDD(x.r2, w, w)
	VPADDD(x.r1, x1, x1)
	VPXORD(x.r2, x2, x2)
	u, v := t.get(), t.get()
	VPSHLDD(U8(16), x2, x1, u)
	VPSHLDD(U8(16), x1, x2, v)
	t.put(x1, x2)
	rotXor := func(y Register, a, b, cc, dd int) {
		ra, rb, rc := t.get(), t.get(), t.get()
		VPROLD(U8(a), y, ra)
		VPROLD(U8(b), y, rb)
		VPROLD(U8(cc), y, rc)
		VPTERNLOGD(xor3, rc, rb, ra)
		VPROLD(U8(dd), y, rb)
		VPTERNLOGD(xor3, rb, ra, y)
		t.put(ra, rb, rc)
	}
	rotXor(u, 8, 10, 18, 26)
	rotXor(v, 8, 14, 22, 30)
	i0, i1 := t.get(), t.get()
	VPBLENDMB(v, u, x.kOdd, i0)
	VPBLENDMB(u, v, x.kOdd, i1)
	t.put(u, v)
	o0 := x.s0(i0)
	o1 := x.s1(i1)
	t.put(i0, i1)
	VPBLENDMB(o0, o1, x.kOdd, x.r2)
	VPBLENDMB(o1, o0, x.kOdd, o0)
	VPRORD(U8(8), o0, x.r1)
	t.put(o0, o1)
	x3 := hiLo(2, 0)
	VPXORD(x3, w, w) // Z = W ⊕ X3
	VMOVDQU32(w, out)
	t.put(x3, w)

	// LFSR, s16 over s0 (see group.lfsr).
	rot := func(j, k int) Register {
		dj, r := d(j), t.get()
		VPSHLDD(U8(k), dj, c(j), r)
		VPANDD(x.p, r, r)
		t.put(dj)
		return r
	}
	addMod := func(acc, b, dst Register) {
		s := t.get()
		VPADDD(b, acc, s)
		VPSUBD(x.p, s, dst)
		VPMAXSD(dst, s, dst)
		t.put(s)
	}
	acc := rot(0, 8)
	addMod(acc, c(0), acc)
	for _, jk := range [][2]int{{4, 20}, {10, 21}, {13, 17}} {
		r := rot(jk[0], jk[1])
		addMod(acc, r, acc)
		t.put(r)
	}
	r := rot(15, 15)
	addMod(acc, r, c(0))
	t.put(r, acc)
}

// genRows16: n ∈ [1,16] single work rounds, word i of every lane to the
// state's scratch row i; after each round the ring registers move back by
// one so that the loop body stays the same.
func genRows16() {
	TEXT("rows16AVX512", NOSPLIT, x16Sig(", n int"))
	Pragma("noescape")
	Doc("rows16AVX512 generates n (1..16) keystream words for all 16 lanes;",
		"word i of every lane goes to scratch row i (structure of arrays).")
	st := Load(Param("st"), GP64())
	n := Load(Param("n"), GP64())
	x := newRing()
	VMOVDQU32(consts.Offset(cMask31), x.p)
	x.loadTables()
	g := GP64()
	x.kOdd = K()
	MOVQ(U64(0xaaaaaaaaaaaaaaaa), g)
	KMOVQ(g, x.kOdd)
	for j := range x.s {
		VMOVDQU32(x16StateRow(st, j), x.s[j])
	}
	VMOVDQU32(x16StateRow(st, rowR1), x.r1)
	VMOVDQU32(x16StateRow(st, rowR2), x.r2)
	p := GP64()
	LEAQ(x16StateRow(st, rowScratch), p)
	Label("rows16_loop")
	x.round(0, Mem{Base: p})
	Comment("Move the ring back: s_j to Z_j.")
	s16 := x.t.get()
	VMOVDQA64(x.s[0], s16)
	for j := 0; j < 15; j++ {
		VMOVDQA64(x.s[j+1], x.s[j])
	}
	VMOVDQA64(s16, x.s[15])
	x.t.put(s16)
	ADDQ(U32(x16Row), p)
	DECQ(n)
	JNZ(LabelRef("rows16_loop"))
	for j := range x.s {
		VMOVDQU32(x.s[j], x16StateRow(st, j))
	}
	VMOVDQU32(x.r1, x16StateRow(st, rowR1))
	VMOVDQU32(x.r2, x16StateRow(st, rowR2))
	VZEROUPPER()
	RET()
}

// genSboxes16: test hook applying the kernels' S0 and S1 to every byte.
func genSboxes16() {
	TEXT("sboxes16AVX512", NOSPLIT, "func(s0, s1, in *[64]byte)")
	Pragma("noescape")
	Doc("sboxes16AVX512 sets s0[i] = S0(in[i]) and s1[i] = S1(in[i]) with the",
		"kernel's S-box code (a test hook for the exhaustive S-box tests).")
	p0 := Load(Param("s0"), GP64())
	p1 := Load(Param("s1"), GP64())
	pi := Load(Param("in"), GP64())
	x := newRing()
	x.loadTables()
	in := x.t.get()
	VMOVDQU32(Mem{Base: pi}, in)
	VMOVDQU32(x.s0(in), Mem{Base: p0})
	VMOVDQU32(x.s1(in), Mem{Base: p1})
	VZEROUPPER()
	RET()
}

func genX16() {
	genInit16()
	genRows16()
	genKeyStream16()
	genXOR16()
	genKeyStreamInit16()
	genXORInit16()
	genSboxes16()
	genLoad128x16()
	genLoad256x16()
}

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
	Comment("Transpose: 4×4 dwords inside 128-bit lanes, then 4×4 lanes; row j = cell j of every lane.")
	for g := 0; g < 4; g++ {
		r := in[4*g : 4*g+4]
		t0, t1, t2, t3 := t.get(), t.get(), t.get(), t.get()
		VPUNPCKLDQ(r[1], r[0], t0)
		VPUNPCKHDQ(r[1], r[0], t1)
		VPUNPCKLDQ(r[3], r[2], t2)
		VPUNPCKHDQ(r[3], r[2], t3)
		VPUNPCKLQDQ(t2, t0, r[0])
		VPUNPCKHQDQ(t2, t0, r[1])
		VPUNPCKLQDQ(t3, t1, r[2])
		VPUNPCKHQDQ(t3, t1, r[3])
		t.put(t0, t1, t2, t3)
	}
	row := func(j int) Mem { return Mem{Base: st, Disp: j * x16Row} }
	for k := 0; k < 4; k++ {
		a, b, c, d := in[k], in[4+k], in[8+k], in[12+k]
		p, q, r, s := t.get(), t.get(), t.get(), t.get()
		VSHUFI32X4(U8(0x88), b, a, p)
		VSHUFI32X4(U8(0xdd), b, a, q)
		VSHUFI32X4(U8(0x88), d, c, r)
		VSHUFI32X4(U8(0xdd), d, c, s)
		VSHUFI32X4(U8(0x88), r, p, a)
		VSHUFI32X4(U8(0x88), s, q, b)
		VSHUFI32X4(U8(0xdd), r, p, c)
		VSHUFI32X4(U8(0xdd), s, q, d)
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

// genLoad256x16: the ZUC-256 key/IV load of all 16 lanes (State16's
// LoadZUC256Lanes). The cells of lane c are the key and constant part of
// its lane half (kp, computed in Go) ORed with its IV fields, which are
// byte shuffles of the IV (bytes 0–15 and 16–22 each broadcast to every
// 128-bit lane, the 23-byte IVs read exactly: bytes 16–22 by a masked
// load), the 8-bit fields at bit 23 shifted down by one and the 6-bit
// symbols by a per-cell shift and mask; then transposed into the rows as
// in genLoad128x16; R1 = R2 = 0.
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
	Comment("Transpose: 4×4 dwords inside 128-bit lanes, then 4×4 lanes; row j = cell j of every lane.")
	for g := 0; g < 4; g++ {
		r := in[4*g : 4*g+4]
		t0, t1, t2, t3 := t.get(), t.get(), t.get(), t.get()
		VPUNPCKLDQ(r[1], r[0], t0)
		VPUNPCKHDQ(r[1], r[0], t1)
		VPUNPCKLDQ(r[3], r[2], t2)
		VPUNPCKHDQ(r[3], r[2], t3)
		VPUNPCKLQDQ(t2, t0, r[0])
		VPUNPCKHQDQ(t2, t0, r[1])
		VPUNPCKLQDQ(t3, t1, r[2])
		VPUNPCKHQDQ(t3, t1, r[3])
		t.put(t0, t1, t2, t3)
	}
	row := func(j int) Mem { return Mem{Base: st, Disp: j * x16Row} }
	for k := 0; k < 4; k++ {
		a, b, c, d := in[k], in[4+k], in[8+k], in[12+k]
		p, q, r, s := t.get(), t.get(), t.get(), t.get()
		VSHUFI32X4(U8(0x88), b, a, p)
		VSHUFI32X4(U8(0xdd), b, a, q)
		VSHUFI32X4(U8(0x88), d, c, r)
		VSHUFI32X4(U8(0xdd), d, c, s)
		VSHUFI32X4(U8(0x88), r, p, a)
		VSHUFI32X4(U8(0x88), s, q, b)
		VSHUFI32X4(U8(0xdd), r, p, c)
		VSHUFI32X4(U8(0xdd), s, q, d)
		// Rows stored as 32-byte halves, as in genLoad128x16.
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
