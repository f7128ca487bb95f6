package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ----------------------------------------------------------------------------
// The 16-lane AVX-512 tier (F/BW/VL, VBMI, VBMI2, GFNI).
//
// The GFNI emission runs all 16 lanes as one group in ZMM registers
// (x16Variant.zmm, 2026-12-07). On the Zen 5 it was measured on ("Oxide
// Virtual Turin-like Processor", AMD family 26) ZMM µops run at the YMM
// rate: 4 per cycle for VPADDD/VPTERNLOGD/VPBLENDMB/VPMAXSD, 2 for
// rotates, VPSHLDD, VPSHUFB, GFNI and VPERMT2B, the same for ZMM as for
// YMM (/tmp microbenchmarks of independent chains; latencies 2 cycles,
// GFNI 3, VPERMT2B ≈5, a mask from VPMOVB2M ≈6 before a blend can use it).
// So one ZMM group does the work of the former two YMM groups in half the
// µops, and is bound by the latency of the R1/R2 recurrence through F
// instead. Three changes shorten that recurrence:
//
//   - S0 is one 256-byte table in four ZMM registers: two VPERMT2B (index
//     bits 0–6, 128-byte halves) and a blend on bit 7 (VPMOVB2M) instead of
//     the three VPSHUFB nibble layers (9 µops and ≈14 cycles → 6 µops, two
//     of them register copies, and ≈8 cycles). A permute of registers
//     reads no memory: its timing does not depend on the index.
//   - L1 and L2 take four independent rotations and two VPTERNLOGD (6 µops,
//     6 cycles) instead of the three-rotation form (5 µops, 8 cycles).
//   - The LFSR additions form a tree (lfsrTree) with the s15 term last.
//
// RoundCost (taskset -c 1 go test -run '^$' -bench 'RoundCost/x16-AVX-512\+GFNI'
// ./kernels/zuc/), µs per 1024 rounds of 16 lanes: two YMM groups 12.8
// (keystream), 14.1 (XOR); one ZMM group with the nibble S0 11.1, 11.9; with
// the permute S0 9.5, 10.4; with the tree and four rotations 9.3, 9.7 (the
// last two steps are within this host's minute-to-minute drift). The
// zuc-256 suite (gmtun bench, 1420 B, 64 packets): seal 828–854 → 670–706
// ns per packet, open 856–962 → 686–696.
//
// The paired kernels (genKeyStreamPair16, genXORKeyStreamPair16) run two
// states as two such ZMM groups, interleaved (newPairZMM2: the three-
// rotation L1/L2 and the LFSR's chain of additions, which take fewer
// registers; each group's latency is hidden by the other's work).
// BenchmarkInitKeyStreamPair: 2 × 16 lanes × 1420 bytes in 5.7 µs against
// 7.6 µs for two InitKeyStream calls (1.34×), 1.25× at 8192 bytes; the
// zuc-256 suite (ciphers ZUC256Suite/tso) seals 2304–2337 → 2795–2819
// cpu-MB/s and opens 2205–2219 → 2571–2619 (five alternations). So two
// groups come to ≈52 cycles per 32-lane round where the µops would allow
// ≈30: neither the latency nor the pipes alone bind them (no hardware
// counters in this guest to say what does).
//
// The earlier notes of this generator (the two YMM groups below, still the
// AES-NI emission) were measured on a host whose ZMM µops ran at half rate
// (2 ZMM or 4 YMM per cycle), where one 16-lane ZMM group took ≈47 cycles a
// round against ≈43 for two interleaved YMM groups. On such a CPU (Zen 4)
// the ZMM emission is expected to cost about what the YMM one did, and on
// Intel AVX-512 cores (ZMM on two ports, YMM on three) less; neither is
// measured here.
//
// The YMM notes (the AES-NI emission, and the GFNI emission before the
// change above), on a half-rate host: shifts/rotates/GFNI and VPSHUFB on 2
// of the 4 pipes; VPADDD/VPTERNLOGD/VPBLENDMB latency 1, VPROLD/VPSHLDD/
// VPSHUFB 2, GFNI 3; unaligned ZMM loads at ~0.6 per cycle, aligned at 1:
//
//   - A single 16-lane ZMM group whose LFSR lives in registers runs a round
//     in ≈47 cycles although its µops would take ≈37: the R1/R2 recurrence
//     through F (≈21–26 cycles of latency) keeps too little independent work
//     in the scheduler (dependent ZMM µops need ≈12 independent chains to
//     reach full rate here, YMM µops 4). The old memory-ring kernel: ≈58.
//   - So the round kernels ran two independent groups of 8 lanes in YMM
//     registers (lanes 0–7 and 8–15, the two halves of every state row)
//     and interleave their instruction streams; in work mode each group is
//     also software-pipelined, the F part of round i (whose only
//     cross-round inputs are R1 and R2) mixed with the LFSR step of round
//     i−1. ≈43 cycles per 16-lane round in a loop, for µops worth ≈33 (65
//     vector µops per group and round). Two ZMM groups (32 lanes) measured
//     the same per lane; skewing the two streams changed nothing.
//   - L1 and L2 then went from four rotations to three (2026-12-07:
//     t = x ⊕ x<<<8, then t ⊕ t<<<b ⊕ x<<<d; two cycles more on the R1/R2
//     recurrence, which the two interleaved groups hide): shift-port µops
//     (shifts, rotates, VPSHUFB, GFNI) per group and round 25 → 23, all
//     vector µops 65 → 63. Keystream mode 13.45–13.58 → 12.93–13.01 µs per
//     1024 rounds (RoundCost, three alternations), the AES-NI emission
//     19.25–19.47 → 18.72–18.86; the zuc-256 suite +3 % (seal and open of
//     a 64 KiB TSO burst, six alternations). Feeding L1 u<<<16 as a word
//     blend of W1 and W2 instead of a funnel shift (one shift-port µop
//     fewer, R1 rotated back by 24) made the kernels alone 0.7 % faster
//     but the suite 2 % slower (ten alternations), and was not kept.
//   - The LFSR rows live in a 64-byte-aligned frame copy (a ring: row
//     (j+off) mod 16 holds s_j after off rounds of a 16-round block), next
//     to a second ring holding 2·s_j, so that bit reorganisation and the
//     multiplications by 2^k read their doubled operand from memory instead
//     of spending an addition on it. (Both emissions.)
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
//
// The AES-NI emission (x16Variant; AVX-512 F/BW/VL/DQ + AES-NI, for
// Skylake-SP and Cascade Lake) runs the same kernels with S1 as VEX
// AESENCLAST between nibble-table maps and without VPSHLDD: 94
// instructions per group and round in work mode (GFNI emission: 75; the
// 8-lane AES-NI kernels: 130 per 8-lane round, 22 of them plain loads and
// stores). Measured on a Zen 4 (EPYC, 2 vCPUs, under cpu.SkylakeSP), in
// keystream mode: ≈19.5 ns per 16-lane round against ≈16 ns per 8-lane
// round of the 8-lane AES-NI kernels (≈1.6× per lane), ≈17.5 ns for the
// GFNI emission. Without S1 the round takes ≈18 % less, about its share of
// the instructions: the emission is bound by throughput, not by the
// latency of the longer S1 in the R1/R2 recurrence.

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

// x16Variant is one emission of the 16-lane kernels. The GFNI emission
// (AVX-512 F/BW/VL, VBMI2, GFNI) computes S1 with two GFNI affine
// instructions and the funnel shifts (X1, X2, X3, the multiplications by
// 2^k) with VPSHLDD; the AES-NI emission (AVX-512 F/BW/VL/DQ and 128-bit
// AES-NI only: Skylake-SP, Cascade Lake) computes S1 as AESENCLAST between
// two nibble-table affine maps (as the 8-lane AES-NI kernels), VEX
// AESENCLAST on the XMM halves of each group (VEX encodes only X0–X15, so
// those operands come from the low registers; the EVEX form would need
// VAES), and the funnel shifts as two shifts and an OR or VPTERNLOGD. It
// needs no ring of doubled cells: s_j>>15 (the H half of a cell) and
// x>>(31−k) are shifts of the cell itself.
type x16Variant struct {
	suffix string // of every TEXT name: "16AVX512", "16AESNI"
	aesni  bool
	zmm    bool // one group of 16 lanes in ZMM registers
}

var (
	x16GFNI  = &x16Variant{suffix: "16AVX512", zmm: true}
	x16AESNI = &x16Variant{suffix: "16AESNI", aesni: true}
)

// xv is the emission being generated (genX16 sets it).
var xv = x16GFNI

// fn returns the TEXT name of kernel base in the current emission.
func fn(base string) string { return base + xv.suffix }

// orAnd is VPTERNLOGD's (A | B) & C: ((x << k) | (x >> (31−k))) & p.
var orAnd = ternImm(func(a, b, c bool) bool { return (a || b) && c })

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
// The round kernels' groups (initRounds, keyStream, xorKeyStream): two
// interleaved YMM groups of 8 lanes, or one ZMM group of 16.

// Frame layout (bytes from the aligned base): the ring of LFSR rows, the
// ring of doubled rows, then the keystream rows of the current block (row
// i = word i of every lane). Group h uses bytes 32h..32h+31 of every row.
const (
	frRing   = 0
	frDouble = 16 * x16Row
	frZ      = 32 * x16Row
	frFrame  = 48 * x16Row // one group's (or one state's) frame
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

// pair holds the registers and frame the groups of a kernel share: two
// YMM groups of 8 lanes (the AES-NI emission), or one ZMM group of 16 (the
// GFNI emission, x16Variant.zmm: Z0 p, Z1–Z3 and Z18 the S0 table, Z4–Z7
// R1, R2, s15, 2·s15, Z8–Z14 F and Z15–Z17, Z19, Z20 LFSR temporaries,
// Z21–Z31 spare for the output transposition). The YMM assignment:
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
	s0t        [4]Register // S0 as a 256-byte table (ZMM emission)
	frames     int         // 1, or 2 for two groups with their own states
	g          []*group
	spare      pool // registers no group uses (the ZMM emission)
	// The AES-NI emission's S1 tables (affine maps M and G, nibble
	// halves), reloaded at the top of every block loop: the output
	// transposition may use them as temporaries.
	mLo, mHi, gLo, gHi Register
}

// group is one group of lanes (8 in YMM, 16 in ZMM registers). s15 and
// d15 keep the newest LFSR cell and its double in registers for the next
// round (the rings in memory hold them too).
type group struct {
	h        int
	fr       int           // byte offset of the group's frame (ring, doubled ring, keystream rows)
	tree     bool          // LFSR additions as a tree (lfsrTree)
	kS0      OpmaskVirtual // S0 inputs ≥ 0x80 (ZMM groups)
	c        *pair
	r1, r2   Register
	s15, d15 Register
	f, l     pool // temporaries of the F part and of the LFSR step
}

func newPair() *pair {
	if xv.aesni {
		return newPairAESNI()
	}
	if xv.zmm {
		c := &pair{p: Z0, s0t: [4]Register{Z1, Z2, Z3, Z18}}
		c.g = []*group{{c: c, tree: true, r1: Z4, r2: Z5, s15: Z6, d15: Z7,
			f: pool{Z8, Z9, Z10, Z11, Z12, Z13, Z14}, l: pool{Z15, Z16, Z17, Z19, Z20}}}
		c.spare = pool{Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}
		return c
	}
	c := &pair{p: Y0, p1: Y1, p2: Y2, tt: Y3, g: make([]*group, 2)}
	regs := []Register{Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15,
		Y16, Y17, Y18, Y19, Y20, Y21, Y22, Y23, Y24, Y25, Y26, Y27, Y28, Y29, Y30, Y31}
	for h := range c.g {
		r := regs[14*h : 14*h+14]
		c.g[h] = &group{h: h, c: c, r1: r[0], r2: r[1], s15: r[2], d15: r[3],
			f: append(pool(nil), r[4:11]...), l: append(pool(nil), r[11:14]...)}
	}
	return c
}

// loadS1Tables loads the AES-NI emission's S1 tables (nothing in the
// GFNI emission).
func (c *pair) loadS1Tables() {
	if !xv.aesni {
		return
	}
	VMOVDQU32(consts.Offset(cMLo), c.mLo)
	VMOVDQU32(consts.Offset(cMHi), c.mHi)
	VMOVDQU32(consts.Offset(cGLo), c.gLo)
	VMOVDQU32(consts.Offset(cGHi), c.gHi)
}

// getLow takes a temporary among X0–X15 (for VEX instructions).
func (p *pool) getLow() Register {
	for i := len(*p) - 1; i >= 0; i-- {
		if r := (*p)[i]; r.(VecPhysical).AsX().(Physical).PhysicalIndex() < 16 {
			*p = append((*p)[:i:i], (*p)[i+1:]...)
			return r
		}
	}
	panic("zuc: out of low temporary vector registers")
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
	t = append(t, c.spare...)
	if xv.aesni { // 18 group temporaries: add the S1 tables (reloaded per block)
		t = append(t, zmm(c.mLo), zmm(c.mHi), zmm(c.gLo), zmm(c.gHi))
	}
	return t
}

func (g *group) cell(j, off int) Mem {
	return Mem{Base: g.c.base, Disp: g.fr + frRing + ((j+off)&15)*x16Row + 32*g.h}
}

func (g *group) dcell(j, off int) Mem {
	return Mem{Base: g.c.base, Disp: g.fr + frDouble + ((j+off)&15)*x16Row + 32*g.h}
}

func (g *group) zrow(i int) Mem { return Mem{Base: g.c.base, Disp: g.fr + frZ + i*x16Row + 32*g.h} }

// prologue reserves the aligned frame, loads the constants and copies the
// LFSR of st into the rings, R1 and R2 into registers.
func (c *pair) prologue(st Register) {
	c.frames = 1
	c.constants()
	Comment("Copy the LFSR into the aligned rings (s_j and 2·s_j); R1, R2.")
	t := c.temps()
	a, b := t.get(), t.get()
	for j := 0; j < 16; j++ {
		VMOVDQU32(x16StateRow(st, j), a)
		VMOVDQA64(a, Mem{Base: c.base, Disp: frRing + j*x16Row})
		if xv.aesni {
			continue
		}
		VPADDD(a, a, b)
		VMOVDQA64(b, Mem{Base: c.base, Disp: frDouble + j*x16Row})
	}
	for _, g := range c.g {
		VMOVDQU32(Mem{Base: st, Disp: rowR1*x16Row + 32*g.h}, g.r1)
		VMOVDQU32(Mem{Base: st, Disp: rowR2*x16Row + 32*g.h}, g.r2)
		VMOVDQA64(g.cell(15, 0), g.s15)
		if !xv.aesni {
			VMOVDQA64(g.dcell(15, 0), g.d15)
		}
	}
}

// prologuePair is prologue for two ZMM groups (newPairZMM2), group h on
// the 16 lanes of state sts[h], each with its own frame.
func (c *pair) prologuePair(sts [2]Register) {
	c.frames = 2
	c.constants()
	Comment("Copy each state's LFSR into its group's rings (s_j and 2·s_j); R1, R2.")
	t := c.temps()
	a, b := t.get(), t.get()
	for h, g := range c.g {
		st := sts[h]
		for j := 0; j < 16; j++ {
			VMOVDQU32(x16StateRow(st, j), a)
			VMOVDQA64(a, Mem{Base: c.base, Disp: g.fr + frRing + j*x16Row})
			VPADDD(a, a, b)
			VMOVDQA64(b, Mem{Base: c.base, Disp: g.fr + frDouble + j*x16Row})
		}
		VMOVDQU32(x16StateRow(st, rowR1), g.r1)
		VMOVDQU32(x16StateRow(st, rowR2), g.r2)
		VMOVDQA64(g.cell(15, 0), g.s15)
		VMOVDQA64(g.dcell(15, 0), g.d15)
	}
}

// constants reserves the aligned frame (c.frames of them) and loads the
// constants and opmasks.
func (c *pair) constants() {
	local := AllocLocal(c.frames*frFrame + 64) // + alignment slack
	c.base = GP64()
	LEAQ(local, c.base)
	ADDQ(U8(63), c.base)
	ANDQ(I32(-64), c.base)
	Comment("Constants: p = 2^31−1, the S0 tables, the byte and word masks.")
	VMOVDQU32(consts.Offset(cMask31), c.p)
	if xv.zmm {
		for i, t := range c.s0t {
			VMOVDQU32(consts.Offset(cS0+64*i), t)
		}
		for _, g := range c.g {
			g.kS0 = K()
		}
	} else {
		VMOVDQU32(consts.Offset(cP1), c.p1)
		VMOVDQU32(consts.Offset(cP2), c.p2)
		VMOVDQU32(consts.Offset(cT), c.tt)
	}
	g := GP64()
	c.kOdd, c.kLoW = K(), K()
	MOVQ(U64(0xaaaaaaaaaaaaaaaa), g)
	KMOVQ(g, c.kOdd)
	MOVQ(U64(0x5555555555555555), g)
	KMOVQ(g, c.kLoW)
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
	c.wipeFrame()
	VZEROUPPER()
	RET()
}

// wipeFrame zeroes the frame's rows (the LFSR rings and the last
// keystream block of every lane, all key-derived) before the kernel
// returns, so that no copy of a lane's state outlives the call in the
// goroutine's stack.
func (c *pair) wipeFrame() {
	Comment("Zero the LFSR rings and keystream rows in the frame.")
	// 32-byte stores, as the rows are read (by halves, see the package
	// doc): a half of a 64-byte store still in flight does not forward,
	// and the next call's frame is this one (≈ 300 ns a call on Zen 5
	// with ZMM stores in the AES-NI kernels).
	z := c.temps()[0]
	VPXORD(z, z, z)
	for off := 0; off < c.frames*frFrame; off += 32 {
		VMOVDQA64(z.(VecPhysical).AsY(), Mem{Base: c.base, Disp: off})
	}
}

// f1 is the F part of round off up to the S-box outputs (§3.3.2, §3.3.3):
// X1 = s11L‖s9H, X2 = s7L‖s5H, W1 = R1 ⊞ X1, W2 = R2 ⊕ X2,
// u = L1(W1L‖W2H)<<<8, v = L2(W2L‖W1H), then o0 = S0 of the S0 bytes of
// u and v (gathered by one blend), o1 = S1 of their S1 bytes.
func (g *group) f1(off int) (ops seq, o0, o1 Register) {
	if xv.aesni {
		return g.f1AESNI(off)
	}
	f := &g.f
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
	ops, lo, i1 := g.linearS0(ops, u, v)
	// S1: two GFNI affine maps around the AES field inversion (s1M, s1L).
	a, o := f.get(), f.get()
	ops.add(func() { VGF2P8AFFINEQB(U8(0), consts.Offset(cS1M), i1, a) })
	ops.add(func() { VGF2P8AFFINEINVQB(U8(0x55), consts.Offset(cS1L), a, o) })
	f.put(a, i1)
	return ops, lo, o
}

// linearS0 is the part of f1 both S1 forms (GFNI, AES-NI) share: from
// u = W1L‖W2H and v = W2L‖W1H, L1(u)<<<8 and L2(v), the S0 and S1 inputs
// gathered by two blends, and S0 through the nibble tables. It returns
// S0's output and the S1 input.
func (g *group) linearS0(ops seq, u, v Register) (seq, Register, Register) {
	c, f := g.c, &g.f
	// x ⊕ x<<<a ⊕ x<<<b ⊕ x<<<(a+b) ⊕ x<<<d in three rotations:
	// t = x ⊕ x<<<a, then t ⊕ t<<<b ⊕ x<<<d.
	rotXor := func(x Register, a, b, d int) {
		if g.tree { // four independent rotations: two µops more, two cycles less
			r := [4]Register{f.get(), f.get(), f.get(), f.get()}
			for i, k := range [4]int{a, b, a + b, d} {
				ops.add(func() { VPROLD(U8(k), x, r[i]) })
			}
			ops.add(func() { VPTERNLOGD(xor3, r[0], r[1], x) })
			ops.add(func() { VPTERNLOGD(xor3, r[2], r[3], x) })
			f.put(r[:]...)
			return
		}
		ra, rd := f.get(), f.get()
		ops.add(func() { VPROLD(U8(a), x, ra) })
		ops.add(func() { VPROLD(U8(d), x, rd) })
		ops.add(func() { VPXORD(ra, x, x) })
		ops.add(func() { VPROLD(U8(b), x, ra) })
		ops.add(func() { VPTERNLOGD(xor3, rd, ra, x) })
		f.put(ra, rd)
	}
	rotXor(u, 8, 10, 26) // L1(u)<<<8: its S0 bytes at even positions
	rotXor(v, 8, 14, 30) // L2(v): S0 bytes at odd positions
	i0, i1 := f.get(), f.get()
	ops.add(func() { VPBLENDMB(v, u, c.kOdd, i0) }) // every S0 input
	ops.add(func() { VPBLENDMB(u, v, c.kOdd, i1) }) // every S1 input
	f.put(u, v)
	if xv.zmm {
		// S0 as a 256-byte table: two 128-byte permutes (index bits 0–6)
		// and a blend on bit 7. Registers only: no memory index.
		lo, hi := f.get(), f.get()
		ops.add(func() { VPMOVB2M(i0, g.kS0) })
		ops.add(func() { VMOVDQA64(c.s0t[0], lo) })
		ops.add(func() { VPERMT2B(c.s0t[1], i0, lo) })
		ops.add(func() { VMOVDQA64(c.s0t[2], hi) })
		ops.add(func() { VPERMT2B(c.s0t[3], i0, hi) })
		ops.add(func() { VPBLENDMB(hi, lo, g.kS0, lo) })
		f.put(hi, i0)
		return ops, lo, i1
	}
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
	return ops, lo, i1
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
	if xv.aesni {
		return g.wzAESNI(off, out, keep)
	}
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
	if xv.aesni {
		return g.lfsrAESNI(off, w)
	}
	if g.tree {
		return g.lfsrTree(off, w)
	}
	l := &g.l
	s0, acc := l.get(), l.get()
	ops.add(func() { VMOVDQA64(g.cell(0, off), s0) })
	ops.add(func() { VPSHLDD(U8(8), g.dcell(0, off), s0, acc) })
	ops.add(func() { VPANDD(g.c.p, acc, acc) })
	g.addMod(&ops, acc, s0, acc)
	l.put(s0)
	for _, jk := range [][2]int{{4, 20}, {10, 21}, {13, 17}} {
		r := l.get()
		g.mulRing(&ops, jk[0], off, jk[1], r)
		g.addMod(&ops, acc, r, acc)
		l.put(r)
	}
	r15 := g.lfsrFinish(&ops, off, acc, w, nil)
	l.put(acc, r15)
	return ops
}

// addMod appends dst = a + b mod p (a, b in [0, p]; see lfsr).
func (g *group) addMod(ops *seq, a, b, dst Register) {
	c, l := g.c, &g.l
	t := l.get()
	ops.add(func() { VPADDD(b, a, t) })
	ops.add(func() { VPSUBD(c.p, t, dst) })
	ops.add(func() { VPMAXSD(dst, t, dst) })
	l.put(t)
}

// mulRing appends dst = 2^k·s_j mod p from the rings of round off
// (VPSHLDD(k, 2·s_j, s_j) & p).
func (g *group) mulRing(ops *seq, j, off, k int, dst Register) {
	m, d := g.cell(j, off), g.dcell(j, off)
	ops.add(func() { VMOVDQA64(m, dst) })
	ops.add(func() { VPSHLDD(U8(k), d, dst, dst) })
	ops.add(func() { VPANDD(g.c.p, dst, dst) })
}

// lfsrFinish ends the LFSR step of round off from acc, the sum of every
// term but W>>1 and 2^15·s15: it adds W>>1 (initialisation mode, w not
// nil; w goes back to the F pool), then the s15 term last, and writes s16
// to the s15 and d15 registers and over s0 in the rings. The s15 term goes
// to r15, a free temporary of the caller's, or if nil one taken from the
// LFSR pool and returned, for the caller to put back.
func (g *group) lfsrFinish(ops *seq, off int, acc, w, r15 Register) Register {
	if w != nil {
		ops.add(func() { VPSRLD(U8(1), w, w) })
		g.addMod(ops, acc, w, acc)
		g.f.put(w)
	}
	if r15 == nil {
		r15 = g.l.get()
	}
	ops.add(func() { VPSHLDD(U8(15), g.d15, g.s15, r15) })
	ops.add(func() { VPANDD(g.c.p, r15, r15) })
	g.addMod(ops, acc, r15, g.s15)
	m0, d0 := g.cell(0, off), g.dcell(0, off)
	ops.add(func() { VPADDD(g.s15, g.s15, g.d15) })
	ops.add(func() { VMOVDQA64(g.s15, m0) })
	ops.add(func() { VMOVDQA64(g.d15, d0) })
	return r15
}

// lfsrTree is lfsr with the additions as a tree, (s0 + 2^8·s0) + (2^20·s4
// + 2^21·s10), then 2^17·s13, (W>>1), and 2^15·s15 last: a shorter chain for
// the scheduler to hold (the ZMM emission). The first two additions are
// written out side by side, each with its own temporary.
func (g *group) lfsrTree(off int, w Register) (ops seq) {
	c, l := g.c, &g.l
	a, b, t, s0 := l.get(), l.get(), l.get(), l.get()
	ops.add(func() { VMOVDQA64(g.cell(0, off), s0) })
	g.mulRing(&ops, 0, off, 8, a)
	g.mulRing(&ops, 4, off, 20, b)
	g.mulRing(&ops, 10, off, 21, t)
	ops.add(func() { VPADDD(s0, a, a) })
	ops.add(func() { VPADDD(t, b, b) })
	ops.add(func() { VPSUBD(c.p, a, s0) })
	ops.add(func() { VPSUBD(c.p, b, t) })
	ops.add(func() { VPMAXSD(s0, a, a) })
	ops.add(func() { VPMAXSD(t, b, b) })
	g.addMod(&ops, a, b, a)
	g.mulRing(&ops, 13, off, 17, b)
	g.addMod(&ops, a, b, a)
	g.lfsrFinish(&ops, off, a, w, b)
	l.put(a, b, t, s0)
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
	var s seq
	for _, g := range c.g {
		s = mix(s, g.round(off, init))
	}
	s.emit()
}

func (c *pair) workBlock(base int) {
	var s seq
	for _, g := range c.g {
		s = mix(s, g.workBlock(base))
	}
	s.emit()
}

// initRounds emits the 32 initialisation rounds and the discarded first
// work round (§3.5), leaving the ring at offset 1; loop names the label.
func (c *pair) initRounds(loop string) {
	c.loadS1Tables()
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

// ----------------------------------------------------------------------------
// The AES-NI emission's round parts (see x16Variant).

// output transposes keystream rows 0..15 into per-lane vectors (ZMM) and
// hands each lane's words to emit.
func (c *pair) output(emit emitter) { c.g[0].output(emit) }

// output is pair.output for the keystream rows of group g's frame (one
// of two ZMM groups with their own states).
func (g *group) output(emit emitter) {
	t := g.c.temps()
	scr := GP64()
	LEAQ(Mem{Base: g.c.base, Disp: g.fr + frZ}, scr)
	transpose16(&t, scr, nil, emit)
}

// newPairZMM2 assigns the registers of two ZMM groups of 16 lanes, each
// on its own state (the paired kernels of the GFNI emission): Z0 p, Z1–Z4
// the S0 table, Z5–Z17 group 0 (R1, R2, s15, 2·s15, 6 F and 3 LFSR
// temporaries: the three-rotation L1/L2 and the LFSR's chain of
// additions, whose latency the other group hides), Z18–Z30 group 1, Z31
// spare.
func newPairZMM2() *pair {
	c := &pair{p: Z0, s0t: [4]Register{Z1, Z2, Z3, Z4}}
	regs := []Register{Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, Z16, Z17,
		Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30}
	for h := 0; h < 2; h++ {
		r := regs[13*h : 13*h+13]
		c.g = append(c.g, &group{c: c, fr: h * frFrame, r1: r[0], r2: r[1], s15: r[2], d15: r[3],
			f: append(pool(nil), r[4:10]...), l: append(pool(nil), r[10:13]...)})
	}
	c.spare = pool{Z31}
	return c
}
