// Command zucaesni generates gmtun's 8-lane ZUC keystream kernels for AVX2
// CPUs without GFNI (package github.com/gmtun/gmtun/kernels/zucaesni).
//
// The kernels have the structure of the x8 GFNI kernels of
// kernels/_gen/zuclanes (LFSR mod 2^31−1 with lazy reduction, bit
// reorganisation, F, the state as a structure of arrays in memory) and the
// same state layout; only S1 differs. S1 is affine-equivalent to inversion
// in the AES field, S1(x) = L·inv(M·x) ⊕ 0x55 (GB/T 33133.1 §3.3.3), and
// AESENCLAST with a zero round key computes ShiftRows(SubBytes(y)) with
// SubBytes(y) = A·inv(y) ⊕ 0x63, so
//
//	S1(x) = G(SubBytes(M·x)), G(s) = L·A⁻¹·(s ⊕ 0x63) ⊕ 0x55,
//
// where M and G are applied with VPSHUFB nibble tables (a linear map is the
// XOR of its images of the low and the high nibble), ShiftRows is undone by
// a byte shuffle before the AES round, and the AES round runs on the two
// 128-bit halves of a YMM register (VEX AESENCLAST is 128-bit without
// VAES). S0 uses the three 4-bit boxes of the standard in VPSHUFB tables,
// as the GFNI kernels do. Every table lookup is a VPSHUFB in registers:
// the kernels are constant-time.
//
// Run:
//
//	cd kernels/_gen && go run ./zucaesni -out ../zucaesni/zucaesni_amd64.s -stubs ../zucaesni/stubs_amd64.go -pkg zucaesni
package main

import (
	"encoding/binary"
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// S-box S0 (GB/T 33133.1 §3.3.3) is built from three 4-bit boxes:
// x = x1‖x2 (high‖low nibble), q = x1 ⊕ P1[x2], r = x2 ⊕ P2[q],
// s = q ⊕ P3[r], S0(x) = rotl8(s‖r, 5).
var (
	p1 = [16]byte{0x9, 0xf, 0x0, 0xe, 0xf, 0xf, 0x2, 0xa, 0x0, 0x4, 0x0, 0xc, 0x7, 0x5, 0x3, 0x9}
	p2 = [16]byte{0x8, 0xd, 0x6, 0x5, 0x7, 0x0, 0xc, 0x4, 0xb, 0x1, 0xe, 0xa, 0xf, 0x3, 0x9, 0x2}
	p3 = [16]byte{0x2, 0x6, 0xa, 0x6, 0x0, 0xd, 0xa, 0xf, 0x3, 0x3, 0xd, 0x5, 0x0, 0x9, 0xc, 0xd}
)

// s0Tail folds the last layer and the rotation into one 16-entry table:
// rotl8(s‖r, 5) = (s<<1) ⊕ rotl8(r, 5) and s = q ⊕ P3[r], hence
// S0(x) = (q<<1) ⊕ T[r] with T[r] = (P3[r]<<1) ⊕ rotl8(r, 5).
func s0Tail() (t [16]byte) {
	for r := range t {
		rr := byte(r)
		t[r] = p3[r]<<1 ^ (rr<<5 | rr>>3)
	}
	return t
}

// S1 = L·inv_AES(M·x) ⊕ 0x55 with the matrices given by their columns, LSB
// first (column j is the image of bit j). The package tests check the
// kernel's S1 on all 256 inputs.
var (
	s1M = [8]byte{0x01, 0x32, 0x73, 0x75, 0xd9, 0xe8, 0xcd, 0x2d}
	s1L = [8]byte{0x97, 0x9a, 0x3c, 0x11, 0x69, 0xcd, 0xc4, 0xc5}
)

// apply returns the image of x under the matrix with columns cols.
func apply(cols [8]byte, x byte) byte {
	var y byte
	for j := 0; j < 8; j++ {
		if x>>j&1 != 0 {
			y ^= cols[j]
		}
	}
	return y
}

// aesAffine is the linear part A of the AES S-box affine map:
// A·x = x ⊕ rotl(x,1) ⊕ rotl(x,2) ⊕ rotl(x,3) ⊕ rotl(x,4).
func aesAffine(x byte) byte {
	r := func(k uint) byte { return x<<k | x>>(8-k) }
	return x ^ r(1) ^ r(2) ^ r(3) ^ r(4)
}

// s1Tables returns the nibble tables of M (mLo, mHi) and of the output map
// G (gLo, gHi; gLo holds the constant G(0)).
func s1Tables() (mLo, mHi, gLo, gHi [16]byte) {
	var aInv [256]byte
	for x := 0; x < 256; x++ {
		aInv[aesAffine(byte(x))] = byte(x)
	}
	g := func(s byte) byte { return apply(s1L, aInv[s^0x63]) ^ 0x55 }
	g0 := g(0)
	for n := 0; n < 16; n++ {
		mLo[n] = apply(s1M, byte(n))
		mHi[n] = apply(s1M, byte(n<<4))
		gLo[n] = g(byte(n)) // linear part ⊕ g0, g0 included once
		gHi[n] = g(byte(n<<4)) ^ g0
	}
	return
}

// constant table layout: every entry is 32 bytes (one YMM).
const (
	cMask31  = iota * 32 // 0x7fffffff per dword (p = 2^31−1)
	cNibble              // 0x0f per byte
	cP1                  // S0 layer 1, per 128-bit lane
	cP2                  // S0 layer 2
	cT                   // S0 layer 3 + rotation (s0Tail)
	cGather              // odd bytes (S0 inputs) → low qword, even bytes (S1) → high qword
	cScatter             // inverse of cGather
	cMLo                 // S1 input map M, low nibble
	cMHi                 // S1 input map M, high nibble
	cGLo                 // S1 output map G, low nibble (with G's constant)
	cGHi                 // S1 output map G, high nibble
	cInvSR               // inverse AES ShiftRows byte shuffle
	cZero                // zero AES round key
	cBswap               // big-endian keystream bytes
	cRol8                // dword rotations by 8, 16, 24
	cRol16
	cRol24
	cCount
)

var consts Mem

func emitConsts() {
	var img [cCount]byte
	put16 := func(at int, b [16]byte) {
		copy(img[at:], b[:])
		copy(img[at+16:], b[:])
	}
	put32 := func(at int, v uint32) {
		for i := 0; i < 8; i++ {
			binary.LittleEndian.PutUint32(img[at+4*i:], v)
		}
	}
	put32(cMask31, 0x7fffffff)
	var nib, gather, scatter, bswap, r8, r16, r24, invSR [16]byte
	for i := range nib {
		nib[i] = 0x0f
	}
	for i := 0; i < 8; i++ {
		gather[i] = byte(2*i + 1)
		gather[8+i] = byte(2 * i)
	}
	for p := 0; p < 16; p++ {
		if p%2 == 1 {
			scatter[p] = byte((p - 1) / 2)
		} else {
			scatter[p] = byte(8 + p/2)
		}
	}
	for d := 0; d < 4; d++ {
		for b := 0; b < 4; b++ {
			bswap[4*d+b] = byte(4*d + 3 - b)
			r8[4*d+b] = byte(4*d + (b+3)%4)
			r16[4*d+b] = byte(4*d + (b+2)%4)
			r24[4*d+b] = byte(4*d + (b+1)%4)
		}
	}
	// AES state byte i is row i%4, column i/4; ShiftRows moves the byte at
	// row r, column c to column c−r: out[r+4c] = in[r+4((c+r)%4)]. Its
	// inverse as a VPSHUFB: invSR[r+4c] = r+4((c−r)%4), so that
	// ShiftRows(invSR(y)) = y.
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			invSR[r+4*c] = byte(r + 4*((c-r+4)%4))
		}
	}
	mLo, mHi, gLo, gHi := s1Tables()
	put16(cNibble, nib)
	put16(cP1, p1)
	put16(cP2, p2)
	put16(cT, s0Tail())
	put16(cGather, gather)
	put16(cScatter, scatter)
	put16(cMLo, mLo)
	put16(cMHi, mHi)
	put16(cGLo, gLo)
	put16(cGHi, gHi)
	put16(cInvSR, invSR)
	put16(cBswap, bswap)
	put16(cRol8, r8)
	put16(cRol16, r16)
	put16(cRol24, r24)

	consts = GLOBL("zucaesni_consts", RODATA|NOPTR)
	for i := 0; i < len(img); i += 8 {
		DATA(i, U64(binary.LittleEndian.Uint64(img[i:])))
	}
}

// tier is the 8-lane AVX2 tier (VEX encoding, Y0–Y15): the LFSR rows stay
// in the state (a ring in memory) and constants are memory operands.
type tier struct {
	lanes int
	name  string
	st    Register
}

// State layout in 32-bit words, W = lanes: rows 0..15 the LFSR cells
// s_0..s_15 (in logical order between calls), row 16 R1, row 17 R2, rows
// 18..33 keystream scratch (row 18+i = word i of all lanes) — the layout of
// kernels/zuclanes.
func (t *tier) rowBytes() int   { return 4 * t.lanes }
func (t *tier) stateWords() int { return 34 * t.lanes }

func (t *tier) cell(j, off int) Mem { return Mem{Base: t.st, Disp: ((j + off) & 15) * t.rowBytes()} }
func (t *tier) rowR1() Mem          { return Mem{Base: t.st, Disp: 16 * t.rowBytes()} }
func (t *tier) rowR2() Mem          { return Mem{Base: t.st, Disp: 17 * t.rowBytes()} }
func (t *tier) scratch(i int) Mem   { return Mem{Base: t.st, Disp: (18 + i) * t.rowBytes()} }
func (t *tier) vec() VecVirtual     { return YMM() }

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

func (t *tier) reg(x Op) Op {
	if m, ok := x.(Mem); ok {
		return t.load(m)
	}
	return x
}

// addMod returns a + b mod 2^31−1 for a, b in [0, p]: t = a+b ≤ 2p, then
// max_signed(t, t−p).
func (t *tier) addMod(a, b Op) Register {
	s, u := t.vec(), t.vec()
	VPADDD(b, a, s)
	VPSUBD(t.c(cMask31), s, u)
	VPMAXSD(u, s, s)
	return s
}

// mulPow2 returns 2^k·x mod 2^31−1, the 31-bit rotation.
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

// bitHiLo returns (a << 16) | (b >> 15) for 31-bit cells a and b.
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
	VPBLENDW(U8(0x55), t.cell(14, off), x, x)
	return x
}

// l1 computes L1(x) = x ⊕ x<<<2 ⊕ x<<<10 ⊕ x<<<18 ⊕ x<<<24 in place.
func (t *tier) l1(x Register) {
	y, r, s := YMM(), YMM(), YMM()
	VPSHUFB(t.c(cRol8), x, y)
	VPXOR(x, y, y)
	VPSHUFB(t.c(cRol16), x, r)
	VPXOR(r, y, y)
	VPSHUFB(t.c(cRol24), x, r)
	VPXOR(r, x, x)
	VPSLLD(U8(2), y, s)
	VPSRLD(U8(30), y, y)
	VPOR(s, y, y)
	VPXOR(y, x, x)
}

// l2 computes L2(x) = x ⊕ x<<<8 ⊕ x<<<14 ⊕ x<<<22 ⊕ x<<<30 in place.
func (t *tier) l2(x Register) {
	z, y, s := YMM(), YMM(), YMM()
	VPSHUFB(t.c(cRol8), x, z)
	VPXOR(x, z, z)
	VPSHUFB(t.c(cRol16), x, y)
	VPXOR(z, y, y)
	VPSLLD(U8(14), y, s)
	VPSRLD(U8(18), y, y)
	VPOR(s, y, y)
	VPXOR(z, y, x)
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
	VPSHUFB(q, t.creg(cP2), r)
	t.xor(lo, r, r)
	VPSHUFB(r, t.creg(cT), o)
	VPADDB(q, q, q)
	t.xor(q, o, o)
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

// s1 applies S1 to every byte of x: S1(x) = G(SubBytes(M·x)), SubBytes by
// AESENCLAST with a zero key on each 128-bit half after an inverse
// ShiftRows shuffle (VEX AESENCLAST on XMM zeroes the upper half, which
// VINSERTI128 then refills).
func (t *tier) s1(in Register) Register {
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
// from most to least significant.
func (t *tier) sbox(u, v, r1, r2 Register) {
	a, b := t.vec(), t.vec()
	VPSHUFB(t.c(cGather), u, a)
	VPSHUFB(t.c(cGather), v, b)
	i0, i1 := t.vec(), t.vec()
	VPUNPCKLQDQ(b, a, i0)
	VPUNPCKHQDQ(b, a, i1)
	o0 := t.s0(i0)
	o1 := t.s1(i1)
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
	VPADDD(r1, x1, x1)
	t.xor(r2, x2, x2)
	u, v := t.vec(), t.vec()
	a, b := YMM(), YMM()
	VPSHUFB(t.c(cRol16), x1, a)
	VPSHUFB(t.c(cRol16), x2, b)
	VPBLENDW(U8(0x55), b, a, u)
	VPBLENDW(U8(0x55), a, b, v)
	t.l1(u)
	t.l2(v)
	t.sbox(u, v, r1, r2)
	return w
}

// round emits one ZUC round at ring offset off (§3.4, §3.5).
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

// shiftRows moves the ring back to logical order after a single round.
func (t *tier) shiftRows() {
	s16 := t.load(t.cell(0, 0))
	for j := 0; j < 15; j++ {
		t.mov(t.load(t.cell(j+1, 0)), t.cell(j, 0))
	}
	t.mov(s16, t.cell(15, 0))
}

func (t *tier) transpose4(base int) {
	r := [4]Register{}
	for i := range r {
		r[i] = t.load(t.scratch(base + i))
	}
	t0, t1, t2, t3 := t.vec(), t.vec(), t.vec(), t.vec()
	VPUNPCKLDQ(r[1], r[0], t0)
	VPUNPCKHDQ(r[1], r[0], t1)
	VPUNPCKLDQ(r[3], r[2], t2)
	VPUNPCKHDQ(r[3], r[2], t3)
	VPUNPCKLQDQ(t2, t0, r[0])
	VPUNPCKHQDQ(t2, t0, r[1])
	VPUNPCKLQDQ(t3, t1, r[2])
	VPUNPCKHQDQ(t3, t1, r[3])
	for i := range r {
		t.mov(r[i], t.scratch(base+i))
	}
}

type emitter func(c int, v Register, disp int)

// output transposes the 16 scratch rows into per-lane words.
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

func (t *tier) block16(r1, r2 Register) {
	for i := 0; i < 16; i++ {
		Commentf("Work round %d.", i)
		out := t.scratch(i)
		t.round(i, false, &out, r1, r2)
	}
}

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
	t.mov(t.s1(x), Mem{Base: p1})
	VZEROUPPER()
	RET()
}

func main() {
	ConstraintExpr("amd64,gc,!purego")
	emitConsts()
	t := &tier{lanes: 8, name: "8AESNI"}
	t.genInit()
	t.genRows()
	t.genKeyStream()
	t.genXOR()
	t.genSboxes()
	Generate()
}
