// Command ublock generates gmtun's uBlock kernels (WU, ZHANG, ZHENG, LI,
// "The block cipher uBlock", Journal of Cryptologic Research 2019, 6(6):
// 690–703): ECB encryption and decryption of the 128-bit block
// (uBlock-128/128, 128/256) and of the 256-bit block (uBlock-256/256), the
// CTR keystream XOR of GCM's GCTR (NIST SP 800-38D §6.5, inc32) under one
// key, the same for several keys at once (multi-key), and the gathered
// pass of many runs under one key (pieces.go), in three tiers:
//
//   - AVX512VBMI: as AVX512, with the S-box through VPERMB and the last XOR
//     of the linear layer folded into the next round key (vbmiRound);
//     encryption only (decryption runs the AVX512 kernels).
//   - AVX512: AVX-512 F/BW on ZMM registers, VPROLD for the word
//     rotations, VPTERNLOGD to fold the round key and the nibble masks into
//     one instruction and to merge XOR chains.
//   - AVX2: the same on YMM registers; rotations by 8 are a VPSHUFB, by 4
//     and 20 two shifts and an OR.
//
// Layout ("packed-byte", half-sliced): a register pair (A, B) holds the
// left halves X0 of several blocks in A and their right halves X1 in B,
// each 32-bit word byte-swapped so the word rotations <<<_32 are native
// dword rotations. For the 128-bit block every 128-bit lane holds the
// halves of two blocks (a ZMM pair: 8 blocks); for the 256-bit block a
// lane holds one 16-byte half (a ZMM pair: 4 blocks). So the round is the
// same instruction sequence for both block sizes and only the permutation
// controls differ:
//
//	S layer    lo = (x ⊕ k) ∧ 0f, hi = ((x ≫ 4) ⊕ (k ≫ 4)) ∧ 0f (k ≫ 4 is
//	           stored with the round key), VPSHUFB into S and S·16
//	linear     the 2-branch XOR/rotate network of the specification
//	PL, PR     one VPSHUFB per half
//
// The S-box is an in-register 16-entry shuffle (no memory lookup), so the
// kernels are constant time. Round keys come from the caller in the
// kernels' layout (kernels/ublock.Schedule): per round four vectors of 64
// bytes, k(X0), k(X1), k(X0)≫4, k(X1)≫4, each the half key repeated.
//
// Run: go run ./ublock -out ../ublock/ublock_amd64.s -stubs ../ublock/stubs_amd64.go -pkg ublock
package main

import (
	"fmt"
	"os"

	"github.com/gmtun/gmtun/kernels/_gen/internal/ctrpieces"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// recordBytes is the size of one round's record in the round-key table:
// k(X0), k(X1), k(X0)≫4, k(X1)≫4 and PL⁻¹(k(X0)), 64 bytes each.
const recordBytes = 320

// maxRecords is the number of round-key records of the longest variant
// (24 rounds and the final whitening key).
const maxRecords = 25

func main() {
	// The generated file targets amd64 whatever the host (avo issue #450).
	os.Setenv("GOOS", "linux")
	os.Setenv("GOARCH", "amd64")
	checkInverses()

	ConstraintExpr("amd64,gc,!purego")
	c := emitConstants()
	for _, a := range []*isa{
		{name: "AVX512VBMI", doc: "AVX-512 F/BW and VBMI (VPERMB) on ZMM registers", zmm: true, vbmi: true, width: 64, pairs: 4, c: c},
		{name: "AVX512", doc: "AVX-512 F/BW on ZMM registers", zmm: true, width: 64, pairs: 4, c: c},
		{name: "AVX2", doc: "AVX2 on YMM registers", width: 32, pairs: 4, c: c},
	} {
		for _, wide := range []bool{false, true} {
			genECB(a, wide, false)
			if !a.vbmi { // decryption is not on the hot path: AVX512VBMI uses AVX512's
				genECB(a, wide, true)
			}
		}
		genCTR(a)
		genCTRMulti(a)
		genXORPieces(a)
	}
	Generate()
}

// consts are the read-only tables of the kernels: 16-byte patterns
// repeated over 64 bytes (a ZMM register; the YMM tier reads the first 32).
type consts struct {
	mask0f, sLo, sHi, sInvLo, sInvHi, bswap, rot8 Mem
	perm                                          map[string]Mem
	ctrOff                                        map[bool]Mem // slot offsets of the counter word, by zmm
	incPair                                       map[bool]Mem // blocks per pair in the counter word, by zmm
	incOne                                        Mem
	pieces                                        ctrpieces.Tables // counter-block builder of the pieces kernel (pieces.go)
}

func bytesTable(name string, pattern [16]byte) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for off := 0; off < 64; off++ {
		DATA(off, U8(pattern[off%16]))
	}
	return m
}

func dwordTable(name string, v [16]uint32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, x := range v {
		DATA(4*i, U32(x))
	}
	return m
}

func emitConstants() *consts {
	c := &consts{perm: map[string]Mem{}, ctrOff: map[bool]Mem{}, incPair: map[bool]Mem{}}
	var f, lo, hi, ilo, ihi, bs, r8 [16]byte
	inv := invSBox()
	for i := range f {
		f[i] = 0x0f
		lo[i] = sbox[i]
		hi[i] = sbox[i] << 4
		ilo[i] = inv[i]
		ihi[i] = inv[i] << 4
		bs[i] = byte(i&^3 + 3 - i&3)
		// On little-endian dwords, rotl(x, 8) moves byte k-1 to byte k.
		r8[i] = byte(i&^3 + (i+3)&3)
	}
	c.mask0f = bytesTable("ublockMask0f", f)
	c.sLo = bytesTable("ublockSLo", lo)
	c.sHi = bytesTable("ublockSHi", hi)
	c.sInvLo = bytesTable("ublockSInvLo", ilo)
	c.sInvHi = bytesTable("ublockSInvHi", ihi)
	c.bswap = bytesTable("ublockBswap", bs)
	c.rot8 = bytesTable("ublockRotl8", r8)
	// A fixed order (not a map's): the output must be reproducible.
	for _, e := range []struct {
		name string
		p    []int
	}{{"PL128", pl128}, {"PR128", pr128}, {"PL256", pl256}, {"PR256", pr256}} {
		c.perm[e.name] = bytesTable("ublock"+e.name, permIndex(e.p))
		c.perm[e.name+"inv"] = bytesTable("ublock"+e.name+"inv", permIndex(invPerm(e.p)))
	}
	// Counter word of slot (lane j, qword q) in a pair of the 128-bit
	// layout: block j + lanes·q of the pair (see loadPair).
	for _, zmm := range []bool{false, true} {
		lanes := 2
		if zmm {
			lanes = 4
		}
		var off, inc [16]uint32
		for j := 0; j < 4; j++ {
			off[4*j+1] = uint32(j % lanes)
			off[4*j+3] = uint32(j%lanes + lanes)
			inc[4*j+1] = uint32(2 * lanes)
			inc[4*j+3] = uint32(2 * lanes)
		}
		c.ctrOff[zmm] = dwordTable(fmt.Sprintf("ublockCtrOff%d", lanes), off)
		c.incPair[zmm] = dwordTable(fmt.Sprintf("ublockInc%d", 2*lanes), inc)
	}
	var one [16]uint32
	for j := 0; j < 4; j++ {
		one[4*j+1], one[4*j+3] = 1, 1
	}
	c.incOne = dwordTable("ublockIncOne", one)
	c.pieces = ctrpieces.EmitTables("ublock", 2, 4) // 2 blocks per store in a YMM register, 4 in a ZMM one
	return c
}

// isa is one instruction-set tier.
type isa struct {
	name, doc string
	zmm       bool
	vbmi      bool // VPERMB S-box, PL folded into the round key (see vbmiRound)
	width     int  // bytes per vector register
	pairs     int  // register pairs per full pass
	c         *consts
}

func (a *isa) vec() VecVirtual {
	if a.zmm {
		return ZMM()
	}
	return YMM()
}

func (a *isa) mov(src, dst Op) {
	if a.zmm {
		VMOVDQU64(src, dst)
	} else {
		VMOVDQU(src, dst)
	}
}

func (a *isa) xor(x, y, dst Op) {
	if a.zmm {
		VPXORQ(x, y, dst)
	} else {
		VPXOR(x, y, dst)
	}
}

func (a *isa) and(x, y, dst Op) {
	if a.zmm {
		VPANDQ(x, y, dst)
	} else {
		VPAND(x, y, dst)
	}
}

// rol sets dst = x <<<_32 s on every dword.
func (a *isa) rol(s int, x, dst VecVirtual) {
	switch {
	case a.zmm:
		VPROLD(U8(s), x, dst)
	case s == 8:
		VPSHUFB(a.c.rot8, x, dst)
	default:
		t := a.vec()
		VPSLLD(U8(s), x, t)
		VPSRLD(U8(32-s), x, dst)
		VPOR(t, dst, dst)
	}
}

// kern holds what one generated function needs while emitting code.
type kern struct {
	a          *isa
	wide       bool // 256-bit blocks
	dec        bool
	name       string
	mask       Op // 0x0f bytes
	tlo, thi   Op // S (or S⁻¹) and S·16 tables
	pl, pr     Op // permutation controls of the direction
	bswap      Op
	pairBlocks int // blocks per register pair
}

func newKern(a *isa, name string, wide, dec bool) *kern {
	g := &kern{a: a, wide: wide, dec: dec, name: name}
	bb := 16
	suffix := "128"
	if wide {
		bb, suffix = 32, "256"
	}
	g.pairBlocks = 2 * a.width / bb
	pl, pr := a.c.perm["PL"+suffix], a.c.perm["PR"+suffix]
	slo, shi := a.c.sLo, a.c.sHi
	if dec {
		pl, pr = a.c.perm["PL"+suffix+"inv"], a.c.perm["PR"+suffix+"inv"]
		slo, shi = a.c.sInvLo, a.c.sInvHi
	}
	// The S-box tables are shuffled, so they live in registers; the rest
	// are registers on AVX-512 (32 of them) and memory operands on AVX2.
	g.tlo, g.thi = g.reg(slo), g.reg(shi)
	if a.zmm {
		g.mask, g.pl, g.pr, g.bswap = g.reg(a.c.mask0f), g.reg(pl), g.reg(pr), g.reg(a.c.bswap)
	} else {
		g.mask, g.pl, g.pr, g.bswap = a.c.mask0f, pl, pr, a.c.bswap
	}
	return g
}

func (g *kern) reg(m Mem) VecVirtual {
	v := g.a.vec()
	g.a.mov(m, v)
	return v
}

// loadPair loads one pair's blocks from m (2·width bytes) into the
// half-sliced layout: for the 128-bit block, qword q of lane j of A (B)
// holds X0 (X1) of block j + lanes·q; for the 256-bit block lane j holds
// X0 (X1) of block j.
func (g *kern) loadPair(m Mem, A, B VecVirtual) {
	a := g.a
	r0, r1 := a.vec(), a.vec()
	a.mov(m, r0)
	a.mov(m.Offset(a.width), r1)
	g.split(r0, r1, A, B)
}

func (g *kern) split(r0, r1, A, B VecVirtual) {
	a := g.a
	switch {
	case !g.wide:
		VPUNPCKLQDQ(r1, r0, A)
		VPUNPCKHQDQ(r1, r0, B)
	case a.zmm:
		VSHUFI64X2(U8(0x88), r1, r0, A)
		VSHUFI64X2(U8(0xdd), r1, r0, B)
	default:
		VPERM2I128(U8(0x20), r1, r0, A)
		VPERM2I128(U8(0x31), r1, r0, B)
	}
	VPSHUFB(g.bswap, A, A)
	VPSHUFB(g.bswap, B, B)
}

// storePair is the inverse of loadPair; with xsrc it XORs the blocks
// with the 2·width bytes at xsrc first.
func (g *kern) storePair(A, B VecVirtual, m Mem, xsrc *Mem) {
	a := g.a
	o0, o1 := a.vec(), a.vec()
	switch {
	case !g.wide:
		VPUNPCKLQDQ(B, A, o0)
		VPUNPCKHQDQ(B, A, o1)
	case a.zmm:
		t0, t1 := a.vec(), a.vec()
		VSHUFI64X2(U8(0x44), B, A, t0)
		VSHUFI64X2(U8(0xee), B, A, t1)
		VSHUFI64X2(U8(0xd8), t0, t0, o0)
		VSHUFI64X2(U8(0xd8), t1, t1, o1)
	default:
		VPERM2I128(U8(0x20), B, A, o0)
		VPERM2I128(U8(0x31), B, A, o1)
	}
	for i, o := range []VecVirtual{o0, o1} {
		VPSHUFB(g.bswap, o, o)
		if xsrc != nil {
			a.xor(xsrc.Offset(i*a.width), o, o)
		}
		a.mov(o, m.Offset(i*a.width))
	}
}

// roundKeys returns the four vectors of the record at K: registers on
// AVX-512 (loaded once per round for all pairs), memory operands on AVX2.
func (g *kern) roundKeys(K GPVirtual) [4]Op {
	var k [4]Op
	for i := range k {
		m := Mem{Base: K, Disp: 64 * i}
		if g.a.zmm {
			k[i] = g.reg(m)
		} else {
			k[i] = m
		}
	}
	return k
}

// encRound emits one encryption round (notes §4) on the pair (A, B) with
// the round key record k.
func (g *kern) encRound(A, B VecVirtual, k [4]Op) {
	a := g.a
	var h [2]VecVirtual
	for i, x := range []VecVirtual{A, B} {
		h[i] = a.vec()
		if a.zmm {
			// lo = (x ⊕ k) ∧ 0f, hi = ((x ≫ 4) ⊕ (k ≫ 4)) ∧ 0f.
			VPSRLW(U8(4), x, h[i])
			VPTERNLOGD(U8(0x48), k[i], g.mask, x)
			VPTERNLOGD(U8(0x48), k[2+i], g.mask, h[i])
		} else {
			a.xor(k[i], x, x)
			VPSRLW(U8(4), x, h[i])
			VPAND(g.mask, h[i], h[i])
			VPAND(g.mask, x, x)
		}
		VPSHUFB(x, g.tlo, x)
		VPSHUFB(h[i], g.thi, h[i])
	}
	// X0 = S(X0), X1 = S(X1) ⊕ X0.
	a.xor(h[0], A, A)
	if a.zmm {
		VPTERNLOGD(U8(0x96), A, h[1], B)
	} else {
		a.xor(h[1], B, B)
		a.xor(A, B, B)
	}
	t := a.vec()
	a.rol(4, B, t)
	a.xor(t, A, A)
	a.rol(8, A, t)
	a.xor(t, B, B)
	a.rol(8, B, t)
	a.xor(t, A, A)
	a.rol(20, A, t)
	a.xor(t, B, B)
	a.xor(B, A, A)
	VPSHUFB(g.pl, A, A)
	VPSHUFB(g.pr, B, B)
}

// vbmiRound emits one encryption round on (A, B) = (X0 ⊕ k(X0), X1 ⊕
// k(X1)), the S-box inputs, and leaves the next round's inputs there: the
// S-box is one VPERMB per nibble from 64-entry tables in registers (S of
// the index's low nibble), whose 6-bit index makes the 0x0f masks
// unnecessary; the
// last step of the linear layer, X0 ⊕= X1, and the next round key fold
// into one VPTERNLOGD before PL, the key taken as kA = PL⁻¹(k(X0)) so
// PL(X0 ⊕ X1 ⊕ kA) = PL(X0 ⊕ X1) ⊕ k(X0). 20 instructions per pair and
// round (the AVX512 round: 23).
func (g *kern) vbmiRound(A, B, kA, kB VecVirtual) {
	a := g.a
	hA, hB := a.vec(), a.vec()
	VPSRLW(U8(4), A, hA)
	VPSRLW(U8(4), B, hB)
	VPERMB(g.tlo, A, A)
	VPERMB(g.thi, hA, hA)
	VPERMB(g.tlo, B, B)
	VPERMB(g.thi, hB, hB)
	a.xor(hA, A, A)
	VPTERNLOGD(U8(0x96), A, hB, B)
	t := a.vec()
	a.rol(4, B, t)
	a.xor(t, A, A)
	a.rol(8, A, t)
	a.xor(t, B, B)
	a.rol(8, B, t)
	a.xor(t, A, A)
	a.rol(20, A, t)
	a.xor(t, B, B)
	VPTERNLOGD(U8(0x96), kA, B, A)
	VPSHUFB(g.pl, A, A)
	VPSHUFB(g.pr, B, B)
	a.xor(kB, B, B)
}

// decRound emits one decryption round (notes §4.2) with the round key
// record k.
func (g *kern) decRound(A, B VecVirtual, k [4]Op) {
	a := g.a
	VPSHUFB(g.pl, A, A)
	VPSHUFB(g.pr, B, B)
	t := a.vec()
	a.xor(B, A, A)
	a.rol(20, A, t)
	a.xor(t, B, B)
	a.rol(8, B, t)
	a.xor(t, A, A)
	a.rol(8, A, t)
	a.xor(t, B, B)
	a.rol(4, B, t)
	a.xor(t, A, A)
	a.xor(A, B, B)
	for i, x := range []VecVirtual{A, B} {
		h := a.vec()
		VPSRLW(U8(4), x, h)
		a.and(g.mask, h, h)
		a.and(g.mask, x, x)
		VPSHUFB(x, g.tlo, x)
		VPSHUFB(h, g.thi, h)
		if a.zmm {
			VPTERNLOGD(U8(0x96), k[i], h, x)
		} else {
			a.xor(h, x, x)
			a.xor(k[i], x, x)
		}
	}
}

// rounds emits the cipher on the pairs with the round-key table at rk and
// the round count in rounds (a register it consumes).
func (g *kern) rounds(A, B []VecVirtual, rk, rounds GPVirtual) {
	K := GP64()
	loop := fmt.Sprintf("%s_rounds%d", g.name, len(A))
	if g.a.vbmi {
		for p := range A {
			g.a.xor(Mem{Base: rk}, A[p], A[p])
			g.a.xor(Mem{Base: rk, Disp: 64}, B[p], B[p])
		}
		LEAQ(Mem{Base: rk, Disp: recordBytes}, K)
		Label(loop)
		kA, kB := g.reg(Mem{Base: K, Disp: 256}), g.reg(Mem{Base: K, Disp: 64})
		for p := range A {
			g.vbmiRound(A[p], B[p], kA, kB)
		}
		ADDQ(U32(recordBytes), K)
		DECQ(rounds)
		JNZ(LabelRef(loop))
		return
	}
	if !g.dec {
		MOVQ(rk, K)
		Label(loop)
		k := g.roundKeys(K)
		for p := range A {
			g.encRound(A[p], B[p], k)
		}
		ADDQ(U32(recordBytes), K)
		DECQ(rounds)
		JNZ(LabelRef(loop))
		for p := range A {
			g.a.xor(Mem{Base: K}, A[p], A[p])
			g.a.xor(Mem{Base: K, Disp: 64}, B[p], B[p])
		}
		return
	}
	IMUL3Q(U32(recordBytes), rounds, K)
	ADDQ(rk, K)
	for p := range A {
		g.a.xor(Mem{Base: K}, A[p], A[p])
		g.a.xor(Mem{Base: K, Disp: 64}, B[p], B[p])
	}
	Label(loop)
	SUBQ(U32(recordBytes), K)
	k := g.roundKeys(K)
	for p := range A {
		g.decRound(A[p], B[p], k)
	}
	DECQ(rounds)
	JNZ(LabelRef(loop))
}

func (g *kern) pairs(n int) (A, B []VecVirtual) {
	for p := 0; p < n; p++ {
		A = append(A, g.a.vec())
		B = append(B, g.a.vec())
	}
	return A, B
}

// passLoop emits full passes of a.pairs pairs while n allows, then one
// pass of the pairs left (fewer than a.pairs: a pass of several pairs
// hides the latency of the round's dependency chain, one pair at a time
// would not); pass(c) emits one pass of c pairs and the pointer updates.
// unit is what one pair consumes of n, which must be a multiple of it.
func (g *kern) passLoop(n GPVirtual, unit int, pass func(c int)) {
	g.passLoopThen(n, unit, pass)
	VZEROUPPER()
	RET()
}

// passLoopThen is passLoop falling through to the code after it instead
// of returning.
func (g *kern) passLoopThen(n GPVirtual, unit int, pass func(c int)) {
	full, done := g.name+"_full", g.name+"_done"
	Label(full)
	CMPQ(n, U32(g.a.pairs*unit))
	JB(LabelRef(g.name + "_rest"))
	pass(g.a.pairs)
	JMP(LabelRef(full))
	Label(g.name + "_rest")
	for c := g.a.pairs - 1; c >= 1; c-- {
		CMPQ(n, U32(c*unit))
		JAE(LabelRef(fmt.Sprintf("%s_rest%d", g.name, c)))
	}
	JMP(LabelRef(done))
	for c := g.a.pairs - 1; c >= 1; c-- {
		Label(fmt.Sprintf("%s_rest%d", g.name, c))
		pass(c)
		JMP(LabelRef(done))
	}
	Label(done)
}

func variantDoc(wide bool) (string, int) {
	if wide {
		return "uBlock-256/256 (24 rounds)", 32
	}
	return "uBlock-128/128 or 128/256 (16 or 24 rounds)", 16
}

func genECB(a *isa, wide, dec bool) {
	op, verb := "encrypt", "encrypts"
	if dec {
		op, verb = "decrypt", "decrypts"
	}
	variant, bb := variantDoc(wide)
	name := fmt.Sprintf("%s%d%s", op, 8*bb, a.name)
	TEXT(name, NOSPLIT, "func(rk *byte, rounds int, dst, src *byte, nblocks int)")
	Pragma("noescape")
	g := newKern(a, name, wide, dec)
	Doc(fmt.Sprintf("%s %s nblocks %d-byte blocks from src to dst (%s) with the round-key table rk (kernels/ublock.Schedule layout), using %s. nblocks must be a multiple of %d (a pair); full passes of %d pairs run first. dst and src are equal or do not overlap.",
		name, verb, bb, variant, a.doc, g.pairBlocks, a.pairs))
	rk := Load(Param("rk"), GP64()).(GPVirtual)
	dst := Load(Param("dst"), GP64()).(GPVirtual)
	src := Load(Param("src"), GP64()).(GPVirtual)
	n := Load(Param("nblocks"), GP64()).(GPVirtual)
	g.passLoop(n, g.pairBlocks, func(c int) { g.ecbPass(c, rk, dst, src, n) })
}

// ecbPass emits one ECB pass of c pairs from src to dst and advances src,
// dst and n (blocks) past it.
func (g *kern) ecbPass(c int, rk, dst, src, n GPVirtual) {
	a := g.a
	A, B := g.pairs(c)
	for p := 0; p < c; p++ {
		g.loadPair(Mem{Base: src, Disp: p * 2 * a.width}, A[p], B[p])
	}
	r := Load(Param("rounds"), GP64()).(GPVirtual)
	g.rounds(A, B, rk, r)
	for p := 0; p < c; p++ {
		g.storePair(A[p], B[p], Mem{Base: dst, Disp: p * 2 * a.width}, nil)
	}
	ADDQ(U32(c*2*a.width), src)
	ADDQ(U32(c*2*a.width), dst)
	SUBQ(U32(c*g.pairBlocks), n)
}

func genCTR(a *isa) {
	name := "ctr128" + a.name
	TEXT(name, NOSPLIT, "func(rk *byte, rounds int, ctr *[16]byte, dst, src *byte, nblocks int)")
	Pragma("noescape")
	g := newKern(a, name, false, false)
	Doc(fmt.Sprintf("%s XORs src with the uBlock keystream (16-byte blocks, 16 or 24 rounds) of the counter blocks ctr, inc32(ctr), … (NIST SP 800-38D §6.5 GCTR, §6.2 inc32) for nblocks whole blocks and writes dst, with the round-key table rk (kernels/ublock.Schedule layout), using %s. nblocks must be a multiple of %d; ctr is not updated.",
		name, a.doc, g.pairBlocks))
	rk := Load(Param("rk"), GP64()).(GPVirtual)
	ctrp := Load(Param("ctr"), GP64()).(GPVirtual)
	dst := Load(Param("dst"), GP64()).(GPVirtual)
	src := Load(Param("src"), GP64()).(GPVirtual)
	n := Load(Param("nblocks"), GP64()).(GPVirtual)
	Comment("X0 of every counter block is ctr[0:8]; X1 is ctr[8:12] and the inc32 word, plus the slot's block offset.")
	head, cb, inc := a.vec(), a.vec(), a.vec()
	VPBROADCASTQ(Mem{Base: ctrp}, head)
	VPSHUFB(g.bswap, head, head)
	VPBROADCASTQ(Mem{Base: ctrp, Disp: 8}, cb)
	VPSHUFB(g.bswap, cb, cb)
	VPADDD(a.c.ctrOff[a.zmm], cb, cb)
	a.mov(a.c.incPair[a.zmm], inc)
	g.passLoop(n, g.pairBlocks, func(c int) {
		A, B := g.pairs(c)
		g.counters(A, B, head, cb, inc)
		r := Load(Param("rounds"), GP64()).(GPVirtual)
		g.rounds(A, B, rk, r)
		for p := 0; p < c; p++ {
			x := Mem{Base: src, Disp: p * 2 * a.width}
			g.storePair(A[p], B[p], Mem{Base: dst, Disp: p * 2 * a.width}, &x)
		}
		ADDQ(U32(c*2*a.width), src)
		ADDQ(U32(c*2*a.width), dst)
		SUBQ(U32(c*g.pairBlocks), n)
	})
}

// counters fills the pairs with counter blocks: A = head, B = cb + p·inc,
// and advances cb past them (VPADDD wraps modulo 2^32 like inc32).
func (g *kern) counters(A, B []VecVirtual, head, cb, inc VecVirtual) {
	for p := range A {
		if g.a.zmm {
			VMOVDQA64(head, A[p])
		} else {
			VMOVDQA(head, A[p])
		}
		if p == 0 {
			VPADDD(g.zero(), cb, B[p])
		} else {
			VPADDD(inc, B[p-1], B[p])
		}
	}
	VPADDD(inc, B[len(B)-1], cb)
}

// zero returns a zeroed register (VPADDD with it is a copy that keeps the
// integer domain).
func (g *kern) zero() VecVirtual {
	z := g.a.vec()
	g.a.xor(z, z, z)
	return z
}

func genCTRMulti(a *isa) {
	name := "ctrMulti128" + a.name
	lanes := a.width / 16 // 128-bit lanes per register
	slots := 2 * lanes
	TEXT(name, 0, "func(keys *[8]*byte, ctrs *[8][16]byte, dsts, srcs *[8]*byte, nlanes, rounds, nblocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs, for every lane L < nlanes ≤ %d, srcs[L] with the uBlock keystream (16-byte blocks, 16 or 24 rounds, the same for all lanes) of the counter blocks ctrs[L], inc32(ctrs[L]), … under the round-key table keys[L] for nblocks whole blocks and writes dsts[L], all lanes in the same registers (one lane per qword slot), using %s. keys[L] for L ≥ nlanes must still point at a valid table. ctrs is not updated.",
		name, slots, a.doc))
	g := newKern(a, name, false, false)

	Comment("Gather the lanes' round keys into one table: qword m of every vector from lane m/2 + lanes·(m%2).")
	keys := Load(Param("keys"), GP64()).(GPVirtual)
	tab := alignedArea(maxRecords * recordBytes)
	var kp []GPVirtual
	for job := 0; job < slots; job++ {
		p := GP64()
		MOVQ(Mem{Base: keys, Disp: 8 * job}, p)
		kp = append(kp, p)
	}
	off, end := GP64(), GP64()
	Load(Param("rounds"), end)
	INCQ(end)
	IMUL3Q(U32(recordBytes), end, end)
	XORQ(off, off)
	Label(name + "_keys")
	for m := 0; m < slots; m++ {
		t := GP64()
		MOVQ(Mem{Base: kp[m/2+lanes*(m%2)], Index: off, Scale: 1, Disp: 8 * m}, t)
		MOVQ(t, Mem{Base: tab, Index: off, Scale: 1, Disp: 8 * m})
	}
	ADDQ(U8(64), off)
	CMPQ(off, end)
	JB(LabelRef(name + "_keys"))

	Comment("Counter blocks: X0 per slot (heads), X1 per slot (tails), from the lanes' counters.")
	ctrs := Load(Param("ctrs"), GP64()).(GPVirtual)
	head, cb, inc := a.vec(), a.vec(), a.vec()
	g.loadPair(Mem{Base: ctrs}, head, cb)
	a.mov(a.c.incOne, inc)

	ks := AllocLocal(a.pairs * 2 * a.width)
	dsts := Load(Param("dsts"), GP64()).(GPVirtual)
	srcs := Load(Param("srcs"), GP64()).(GPVirtual)
	n := Load(Param("nblocks"), GP64()).(GPVirtual)
	nl := Load(Param("nlanes"), GP64()).(GPVirtual)
	boff := GP64()
	XORQ(boff, boff)
	g.passLoop(n, 1, func(c int) {
		A, B := g.pairs(c)
		g.counters(A, B, head, cb, inc)
		r := Load(Param("rounds"), GP64()).(GPVirtual)
		g.rounds(A, B, tab, r)
		for p := 0; p < c; p++ {
			g.storePair(A[p], B[p], ks.Offset(p*2*a.width), nil)
		}
		Comment("Lane L's keystream block p is at ks + p·2·width + 16·L.")
		L, kso := GP64(), GP64()
		XORQ(L, L)
		LEAQ(ks, kso)
		lanesLoop := fmt.Sprintf("%s_lanes%d", name, c)
		Label(lanesLoop)
		d, s := GP64(), GP64()
		MOVQ(Mem{Base: dsts, Index: L, Scale: 8}, d)
		MOVQ(Mem{Base: srcs, Index: L, Scale: 8}, s)
		for p := 0; p < c; p++ {
			x := XMM()
			if a.zmm {
				VMOVDQU64(Mem{Base: s, Index: boff, Scale: 1, Disp: 16 * p}, x)
				VPXORQ(Mem{Base: kso, Disp: p * 2 * a.width}, x, x)
				VMOVDQU64(x, Mem{Base: d, Index: boff, Scale: 1, Disp: 16 * p})
			} else {
				VMOVDQU(Mem{Base: s, Index: boff, Scale: 1, Disp: 16 * p}, x)
				VPXOR(Mem{Base: kso, Disp: p * 2 * a.width}, x, x)
				VMOVDQU(x, Mem{Base: d, Index: boff, Scale: 1, Disp: 16 * p})
			}
		}
		ADDQ(U8(16), kso)
		INCQ(L)
		CMPQ(L, nl)
		JB(LabelRef(lanesLoop))
		ADDQ(U32(16*c), boff)
		SUBQ(U32(c), n)
	})
}

// alignedArea allocates size bytes of the frame at a 64-byte boundary.
func alignedArea(size int) GPVirtual {
	m := AllocLocal(size + 64)
	p := GP64()
	LEAQ(m, p)
	ADDQ(U8(63), p)
	ANDQ(I8(-64), p)
	return p
}
