package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ----------------------------------------------------------------------------
// Tier description: register width, instruction flavour and state layout.

// tier is an AVX2 tier (8 lanes, VEX encoding, Y0–Y15): its LFSR rows
// stay in the state (a ring in memory) and constants are memory operands.
// The two 8-lane kernel sets differ only in s1, the instructions of S1.
type tier struct {
	lanes int
	name  string
	s1    s1Kind
	st    Register // base of the state array
}

// s1Kind selects how the 8-lane kernels compute S1.
type s1Kind int

const (
	s1GFNI  s1Kind = iota // two GFNI affine instructions (AVX2 + GFNI)
	s1AESNI               // AESENCLAST between nibble-table affine maps (AVX2 + AES-NI)
)

// State layout in 32-bit words, W = lanes: rows 0..15 the LFSR cells
// s_0..s_15 (always stored in logical order between calls), row 16 R1,
// row 17 R2, rows 18..33 keystream scratch (row 18+i = word i of all lanes).
func (t *tier) rowBytes() int   { return 4 * t.lanes }
func (t *tier) stateWords() int { return 34 * t.lanes }

// cell returns the memory row holding s_j when the ring has advanced by off
// rounds inside an unrolled 16-round block: row (j+off) mod 16.
func (t *tier) cell(j, off int) Mem { return Mem{Base: t.st, Disp: ((j + off) & 15) * t.rowBytes()} }
func (t *tier) rowR1() Mem          { return Mem{Base: t.st, Disp: 16 * t.rowBytes()} }
func (t *tier) rowR2() Mem          { return Mem{Base: t.st, Disp: 17 * t.rowBytes()} }
func (t *tier) scratch(i int) Mem   { return Mem{Base: t.st, Disp: (18 + i) * t.rowBytes()} }
func (t *tier) vec() VecVirtual     { return YMM() }

// c returns constant number off as a memory operand.
func (t *tier) c(off int) Op { return consts.Offset(off) }

// creg returns constant off in a register (VPSHUFB tables must be registers).
func (t *tier) creg(off int) Op {
	r := t.vec()
	t.mov(consts.Offset(off), r)
	return r
}

func (t *tier) mov(src, dst Op) { VMOVDQU(src, dst) }

func (t *tier) load(m Mem) Register {
	r := t.vec()
	t.mov(m, r)
	return r
}

func (t *tier) xor(a, b, dst Op) { VPXOR(a, b, dst) }

func (t *tier) and(a, b, dst Op) { VPAND(a, b, dst) }

// reg makes x a register: AVX2 shift-by-immediate has no memory form.
func (t *tier) reg(x Op) Op {
	if m, ok := x.(Mem); ok {
		return t.load(m)
	}
	return x
}

// ----------------------------------------------------------------------------
// Arithmetic in GF(2^31−1) (GB/T 33133.1 §3.3.1), all lanes at once.

// addMod returns a + b mod 2^31−1 for a, b in [0, p]: t = a+b ≤ 2p, then
// max_signed(t, t−p) (see group.lfsr in x16.go; no shift, and p, never 0,
// for a nonzero sum ≡ 0). a must be a register, b may be memory.
func (t *tier) addMod(a, b Op) Register {
	s, u := t.vec(), t.vec()
	VPADDD(b, a, s)
	VPSUBD(t.c(cMask31), s, u)
	VPMAXSD(u, s, s)
	return s
}

// mulPow2 returns 2^k·x mod 2^31−1, the 31-bit rotation
// ((x << k) | (x >> (31−k))) & p (not VPROLD, which rotates 32 bits).
func (t *tier) mulPow2(x Op, k int) Register {
	x = t.reg(x)
	a, b := t.vec(), t.vec()
	VPSLLD(U8(k), x, a)
	VPSRLD(U8(31-k), x, b)
	VPOR(b, a, a)
	VPAND(t.c(cMask31), a, a)
	return a
}

// lfsr computes s16 = 2^15·s15 + 2^17·s13 + 2^21·s10 + 2^20·s4 + (1+2^8)·s0
// mod p (§3.3.1), adds u = W>>1 in initialisation mode, and stores s16 into
// the row of s0, which the ring then reads as s15.
func (t *tier) lfsr(off int, w Register) {
	acc := t.addMod(t.mulPow2(t.cell(0, off), 8), t.cell(0, off))
	acc = t.addMod(acc, t.mulPow2(t.cell(4, off), 20))
	acc = t.addMod(acc, t.mulPow2(t.cell(10, off), 21))
	acc = t.addMod(acc, t.mulPow2(t.cell(13, off), 17))
	if w != nil {
		u := t.vec()
		VPSRLD(U8(1), w, u)
		acc = t.addMod(acc, u)
	}
	acc = t.addMod(acc, t.mulPow2(t.cell(15, off), 15))
	t.mov(acc, t.cell(0, off))
}

// ----------------------------------------------------------------------------
// Bit reorganization (§3.3.2).

// bitHiLo returns (a << 16) | (b >> 15) for 31-bit cells a and b, i.e. the
// low 16 bits of a followed by the high 16 of the 31 bits of b
// (X1 = s11L‖s9H, X2 = s7L‖s5H, X3 = s2L‖s0H).
func (t *tier) bitHiLo(a, b Mem) Register {
	hi := t.load(a)
	lo := t.vec()
	t.mov(b, lo)
	VPSLLD(U8(16), hi, hi)
	VPSRLD(U8(15), lo, lo)
	VPOR(lo, hi, hi)
	return hi
}

// x0 returns X0 = s15H‖s14L.
func (t *tier) x0(off int) Register {
	x := t.vec()
	t.mov(t.cell(15, off), x)
	VPSLLD(U8(1), x, x)
	VPBLENDW(U8(0x55), t.cell(14, off), x, x) // even (low) words from s14
	return x
}

// ----------------------------------------------------------------------------
// Nonlinear function F (§3.3.3).

// l1 computes L1(x) = x ⊕ x<<<2 ⊕ x<<<10 ⊕ x<<<18 ⊕ x<<<24 in place.
func (t *tier) l1(x Register) {
	// y = x ⊕ x<<<8 ⊕ x<<<16, then L1 = x ⊕ x<<<24 ⊕ y<<<2.
	y, r, s := YMM(), YMM(), YMM()
	VPSHUFB(t.c(cRol8), x, y)
	VPXOR(x, y, y)
	VPSHUFB(t.c(cRol16), x, r)
	VPXOR(r, y, y)
	VPSHUFB(t.c(cRol24), x, r)
	VPXOR(r, x, x)
	rotl32(y, 2, s)
	VPXOR(y, x, x)
}

// l2 computes L2(x) = x ⊕ x<<<8 ⊕ x<<<14 ⊕ x<<<22 ⊕ x<<<30 in place.
func (t *tier) l2(x Register) {
	// z = x ⊕ x<<<8, y = z ⊕ x<<<16, then L2 = z ⊕ y<<<14
	// (y<<<14 = x<<<14 ⊕ x<<<22 ⊕ x<<<30).
	z, y, s := YMM(), YMM(), YMM()
	VPSHUFB(t.c(cRol8), x, z)
	VPXOR(x, z, z)
	VPSHUFB(t.c(cRol16), x, y)
	VPXOR(z, y, y)
	rotl32(y, 14, s)
	VPXOR(z, y, x)
}

// rotl32 rotates every 32-bit word of y left by k bits in place (AVX2 has
// no VPROLD), through the temporary s.
func rotl32(y Register, k int, s Register) {
	VPSLLD(U8(k), y, s)
	VPSRLD(U8(32-k), y, y)
	VPOR(s, y, y)
}

// s0 applies S0 to every byte of x (three nibble tables, constant time).
func (t *tier) s0(x Register) Register {
	lo, q, r, o := t.vec(), t.vec(), t.vec(), t.vec()
	t.and(t.c(cNibble), x, lo)
	VPSRLD(U8(4), x, q)
	p := t.vec()
	VPSHUFB(lo, t.creg(cP1), p)
	VPAND(t.c(cNibble), q, q)
	VPXOR(p, q, q)
	VPSHUFB(q, t.creg(cP2), r) // r = x2 ⊕ P2[q]
	t.xor(lo, r, r)
	VPSHUFB(r, t.creg(cT), o) // S0 = (q<<1) ⊕ T[r]
	VPADDB(q, q, q)
	t.xor(q, o, o)
	return o
}

// sub1 applies S1 to every byte of x with the tier's instructions.
func (t *tier) sub1(x Register) Register {
	if t.s1 == s1AESNI {
		return t.s1AESNI(x)
	}
	return t.s1GFNI(x)
}

// s1GFNI applies S1 to every byte of x: two GFNI affine maps around
// inversion.
func (t *tier) s1GFNI(x Register) Register {
	a, o := t.vec(), t.vec()
	VGF2P8AFFINEQB(U8(0), consts.Offset(cS1M), x, a)
	VGF2P8AFFINEINVQB(U8(0x55), consts.Offset(cS1L), a, o)
	return o
}

// affine applies the map with nibble tables lo, hi to every byte of x in
// place: lo[x & 15] ⊕ hi[x >> 4]. It uses few virtual registers: avo's
// greedy allocator must fit the round into Y0–Y15 (VEX encoding).
func (t *tier) affine(x VecVirtual, lo, hi int) {
	a, tbl := t.vec(), t.vec()
	t.and(t.c(cNibble), x, a)
	VPSRLD(U8(4), x, x)
	VPAND(t.c(cNibble), x, x)
	t.mov(t.c(lo), tbl)
	VPSHUFB(a, tbl, a)
	t.mov(t.c(hi), tbl)
	VPSHUFB(x, tbl, x)
	VPXOR(a, x, x)
}

// s1AESNI applies S1 to every byte of x: S1(x) = G(SubBytes(M·x))
// (consts.go), SubBytes by AESENCLAST with a zero key on each 128-bit half
// after an inverse ShiftRows shuffle (VEX AESENCLAST on XMM zeroes the
// upper half, which VINSERTI128 then refills; without VAES there is no
// 256-bit form).
func (t *tier) s1AESNI(in Register) Register {
	x := t.vec()
	t.mov(in, x)
	t.affine(x, cMLo, cMHi)
	VPSHUFB(t.c(cInvSR), x, x)
	hi := XMM()
	VEXTRACTI128(U8(1), x, hi)
	VAESENCLAST(t.c(cZero), x.AsX(), x.AsX())
	VAESENCLAST(t.c(cZero), hi, hi)
	VINSERTI128(U8(1), hi, x, x)
	t.affine(x, cGLo, cGHi)
	return x
}

// sbox computes R1 = S(u), R2 = S(v) where S = (S0, S1, S0, S1) on the bytes
// from most to least significant: the S0 bytes of u and v are gathered into
// one register and the S1 bytes into another, so each box runs once.
func (t *tier) sbox(u, v, r1, r2 Register) {
	a, b := t.vec(), t.vec()
	VPSHUFB(t.c(cGather), u, a)
	VPSHUFB(t.c(cGather), v, b)
	i0, i1 := t.vec(), t.vec()
	VPUNPCKLQDQ(b, a, i0)
	VPUNPCKHQDQ(b, a, i1)
	o0 := t.s0(i0)
	o1 := t.sub1(i1)
	VPUNPCKLQDQ(o1, o0, a)
	VPUNPCKHQDQ(o1, o0, b)
	VPSHUFB(t.c(cScatter), a, r1)
	VPSHUFB(t.c(cScatter), b, r2)
}

// f runs F(X0, X1, X2) and returns W = (X0 ⊕ R1) ⊞ R2, updating R1 and R2.
func (t *tier) f(x0, x1, x2, r1, r2 Register) Register {
	w := t.vec()
	t.xor(x0, r1, w)
	VPADDD(r2, w, w)
	VPADDD(r1, x1, x1) // W1 = R1 ⊞ X1
	t.xor(r2, x2, x2)  // W2 = R2 ⊕ X2
	u, v := t.vec(), t.vec()
	a, b := YMM(), YMM()
	VPSHUFB(t.c(cRol16), x1, a)
	VPSHUFB(t.c(cRol16), x2, b)
	VPBLENDW(U8(0x55), b, a, u) // W1L‖W2H
	VPBLENDW(U8(0x55), a, b, v) // W2L‖W1H
	t.l1(u)
	t.l2(v)
	t.sbox(u, v, r1, r2)
	return w
}

// round emits one ZUC round at ring offset off. In initialisation mode
// (init) W>>1 feeds the LFSR; in work mode the keystream word Z = W ⊕ X3 is
// stored to out when out is not nil (§3.4).
func (t *tier) round(off int, init bool, out *Mem, r1, r2 Register) {
	x0 := t.x0(off)
	x1 := t.bitHiLo(t.cell(11, off), t.cell(9, off))
	x2 := t.bitHiLo(t.cell(7, off), t.cell(5, off))
	w := t.f(x0, x1, x2, r1, r2)
	if out != nil {
		x3 := t.bitHiLo(t.cell(2, off), t.cell(0, off))
		t.xor(x3, w, w)
		t.mov(w, *out)
	}
	if init {
		t.lfsr(off, w)
	} else {
		t.lfsr(off, nil)
	}
}

// shiftRows moves the ring back to logical order after a single round at
// offset 0: s_j ← row j+1, s_15 ← row 0 (which holds the new s16).
func (t *tier) shiftRows() {
	s16 := t.load(t.cell(0, 0))
	for j := 0; j < 15; j++ {
		t.mov(t.load(t.cell(j+1, 0)), t.cell(j, 0))
	}
	t.mov(s16, t.cell(15, 0))
}

// transpose4 transposes dwords inside every 128-bit lane of scratch rows
// base..base+3 and writes the result back: afterwards scratch row base+k,
// 128-bit lane b, holds column 4b+k of the four rows.
func (t *tier) transpose4(base int) {
	r := [4]Register{}
	for i := range r {
		r[i] = t.load(t.scratch(base + i))
	}
	t0, t1, t2, t3 := t.vec(), t.vec(), t.vec(), t.vec()
	transposeDwords4(r[:], t0, t1, t2, t3)
	for i := range r {
		t.mov(r[i], t.scratch(base+i))
	}
}

// emitter writes lane c's 16 or 8 keystream words held in v at byte offset
// disp of the current 64-byte block.
type emitter func(c int, v Register, disp int)

// output transposes the 16 scratch rows (row i = word i of every lane) into
// per-lane words and hands each lane's vector to emit.
func (t *tier) output(emit emitter) {
	Comment("Transpose two 8×8 word blocks: 4×4 inside 128-bit lanes, then swap lanes.")
	for h := 0; h < 2; h++ {
		t.transpose4(8 * h)
		t.transpose4(8*h + 4)
		for k := 0; k < 4; k++ {
			a, b := t.load(t.scratch(8*h+k)), t.load(t.scratch(8*h+4+k))
			lo, hi := YMM(), YMM()
			VPERM2I128(U8(0x20), b, a, lo)
			VPERM2I128(U8(0x31), b, a, hi)
			emit(k, lo, 32*h)
			emit(4+k, hi, 32*h)
		}
	}
}

func (t *tier) prologue() {
	t.st = Load(Param("st"), GP64())
}

func (t *tier) loadR() (Register, Register) {
	return t.load(t.rowR1()), t.load(t.rowR2())
}

func (t *tier) storeR(r1, r2 Register) {
	t.mov(r1, t.rowR1())
	t.mov(r2, t.rowR2())
	VZEROUPPER()
	RET()
}

func (t *tier) sig(params string) string {
	return fmt.Sprintf("func(st *[%d]uint32%s)", t.stateWords(), params)
}

// genInit: the 32 initialisation rounds and the discarded first work round.
func (t *tier) genInit() {
	TEXT("initRounds"+t.name, NOSPLIT, t.sig(""))
	Pragma("noescape")
	Doc(fmt.Sprintf("initRounds%s runs the ZUC initialisation of all %d lanes of st:", t.name, t.lanes),
		"32 rounds in initialisation mode, then one work-mode round whose output",
		"is discarded (GB/T 33133.1 §3.5). The LFSR rows and R1 = R2 = 0 must be loaded.")
	t.prologue()
	r1, r2 := t.loadR()
	n := GP64()
	MOVQ(U32(2), n)
	Label("init_loop")
	for i := 0; i < 16; i++ {
		Commentf("Initialisation round %d (mod 16).", i)
		t.round(i, true, nil, r1, r2)
	}
	DECQ(n)
	JNZ(LabelRef("init_loop"))
	Comment("First work round, output discarded.")
	t.round(0, false, nil, r1, r2)
	t.shiftRows()
	t.storeR(r1, r2)
}

// genRows: n ∈ [1,16] single rounds, word i of every lane to scratch row i.
func (t *tier) genRows() {
	TEXT("rows"+t.name, NOSPLIT, t.sig(", n int"))
	Pragma("noescape")
	Doc(fmt.Sprintf("rows%s generates n (1..16) keystream words for all %d lanes;", t.name, t.lanes),
		"word i of every lane goes to scratch row i (structure of arrays).")
	t.prologue()
	n := Load(Param("n"), GP64())
	r1, r2 := t.loadR()
	p := GP64()
	LEAQ(t.scratch(0), p)
	Label("rows_loop")
	out := Mem{Base: p}
	t.round(0, false, &out, r1, r2)
	t.shiftRows()
	ADDQ(U32(t.rowBytes()), p)
	DECQ(n)
	JNZ(LabelRef("rows_loop"))
	t.storeR(r1, r2)
}

// block16 runs 16 work rounds (one ring revolution) into scratch rows 0..15.
func (t *tier) block16(r1, r2 Register) {
	for i := 0; i < 16; i++ {
		Commentf("Work round %d.", i)
		out := t.scratch(i)
		t.round(i, false, &out, r1, r2)
	}
}

// genKeyStream: nblocks × 16 words per lane, lane c's words at
// ks[c*stride + 16*block ...].
func (t *tier) genKeyStream() {
	TEXT("keyStream"+t.name, NOSPLIT, t.sig(", ks *uint32, stride int, nblocks int"))
	Pragma("noescape")
	Doc(fmt.Sprintf("keyStream%s writes nblocks×16 keystream words of each of the %d lanes:", t.name, t.lanes),
		"lane c's words go to ks[c*stride:], in generation order. nblocks must be > 0.")
	t.prologue()
	ks := Load(Param("ks"), GP64())
	stride := Load(Param("stride"), GP64())
	SHLQ(U8(2), stride)
	n := Load(Param("nblocks"), GP64())
	r1, r2 := t.loadR()
	Label("ks_loop")
	t.block16(r1, r2)
	t.output(func(c int, v Register, disp int) {
		a := GP64()
		IMUL3Q(U32(c), stride, a)
		t.mov(v, Mem{Base: ks, Index: a, Scale: 1, Disp: disp})
	})
	ADDQ(U8(64), ks)
	DECQ(n)
	JNZ(LabelRef("ks_loop"))
	t.storeR(r1, r2)
}

// genXOR: dst[c][off:off+64] = src[c][off:off+64] ⊕ keystream bytes (big
// endian words, as EEA3 §3.5 and the ZUC-256 keystream require); lanes with
// a nil dst pointer are skipped.
func (t *tier) genXOR() {
	TEXT("xorKeyStream"+t.name, NOSPLIT, t.sig(fmt.Sprintf(", dst *[%d]*byte, src *[%d]*byte, nblocks int", t.lanes, t.lanes)))
	Pragma("noescape")
	Doc(fmt.Sprintf("xorKeyStream%s XORs nblocks×64 keystream bytes of each of the %d lanes", t.name, t.lanes),
		"(words big-endian) from src[c] into dst[c]; lanes with dst[c] == nil are skipped.",
		"nblocks must be > 0.")
	t.prologue()
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("nblocks"), GP64())
	off := GP64()
	XORQ(off, off)
	r1, r2 := t.loadR()
	Label("xor_loop")
	t.block16(r1, r2)
	t.output(func(c int, v Register, disp int) {
		d, s := GP64(), GP64()
		skip := fmt.Sprintf("xor_skip_%d_%d", c, disp)
		MOVQ(Mem{Base: dst, Disp: 8 * c}, d)
		TESTQ(d, d)
		JZ(LabelRef(skip))
		MOVQ(Mem{Base: src, Disp: 8 * c}, s)
		VPSHUFB(t.c(cBswap), v, v)
		t.xor(Mem{Base: s, Index: off, Scale: 1, Disp: disp}, v, v)
		t.mov(v, Mem{Base: d, Index: off, Scale: 1, Disp: disp})
		Label(skip)
	})
	ADDQ(U8(64), off)
	DECQ(n)
	JNZ(LabelRef("xor_loop"))
	t.storeR(r1, r2)
}

// genSboxes: test hook applying S0 and S1 to every byte of in.
func (t *tier) genSboxes() {
	b := 4 * t.lanes
	TEXT("sboxes"+t.name, NOSPLIT, fmt.Sprintf("func(s0, s1, in *[%d]byte)", b))
	Pragma("noescape")
	Doc(fmt.Sprintf("sboxes%s sets s0[i] = S0(in[i]) and s1[i] = S1(in[i]) with the", t.name),
		"kernel's S-box code (a test hook for the exhaustive S-box tests).")
	p0 := Load(Param("s0"), GP64())
	p1 := Load(Param("s1"), GP64())
	pi := Load(Param("in"), GP64())
	x := t.load(Mem{Base: pi})
	t.mov(t.s0(x), Mem{Base: p0})
	t.mov(t.sub1(x), Mem{Base: p1})
	VZEROUPPER()
	RET()
}
