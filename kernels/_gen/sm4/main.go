// Command sm4 generates gmtun's SM4 kernels (GB/T 32907-2016): ECB
// encryption of whole blocks and the CTR keystream XOR used by SM4-GCM
// (NIST SP 800-38D §6.5, GCTR with inc32), in five tiers:
//
//   - AVX512GFNI: 64 blocks per ZMM pass in byte-sliced form (see bs.go):
//     no rotations, L folded into two post-inversion affine maps, the state
//     kept in the S-box input map's linear domain, so a round is 8 GFNI and
//     about 18 ternary-logic instructions per 64 blocks; tails of 1 to 32
//     blocks take one 32-block pass of the same code on YMM registers;
//     bs2.go interleaves two such sets for two independent 64-block runs.
//   - AVX2GFNI: 8 blocks per YMM register set, four sets interleaved
//     (slotSet: each keeps its oldest word on the stack); the
//     GFNI S-box (VEX encoding) with L's byte-linear parts folded into it
//     (words.go), byte rotations by VPSHUFB.
//   - AVX2VAES / AVX2AESNI: as AVX2GFNI but the inversion runs through
//     VAESENCLAST on the whole register (VAES) or AESENCLAST on its
//     128-bit halves, followed by nibble-table affine maps (Saarinen).
//   - AVX512AESNI: the AVX2AESNI round on ZMM, 16 blocks a set and six
//     sets a pass, for AVX-512 CPUs without GFNI or VAES (zmm_aesni.go).
//
// Data layout of the YMM tiers: every register of a set holds one 32-bit
// word X_i of all the set's blocks ("transposed"), so a round key is one
// broadcast and the S-box and linear map L act on all blocks at once. Full
// passes run while they fit; the rest runs as one pass of ceil(n/width)
// sets whose last set is loaded and stored by whole and half registers
// under branches on the (public) count, so
// the kernels take any number of whole blocks. Round keys, masks and
// constants are memory operands, so the four sets (three registers each,
// see slotSet) and the round's scratch fit the sixteen YMM registers of
// AVX2. XORPieces (pieces.go) is the gathered pass of a batch in one call.
//
// Run: go run ./sm4 -out ../sm4/sm4_amd64.s -stubs ../sm4/stubs_amd64.go -pkg sm4
package main

import (
	"fmt"
	"os"

	"github.com/gmtun/gmtun/kernels/_gen/internal/frame"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	// The generated file targets amd64 whatever the host (avo issue #450).
	os.Setenv("GOOS", "linux")
	os.Setenv("GOARCH", "amd64")

	sb := deriveSBox()
	sb.checkGFNI()
	sb.checkAESNI()

	ConstraintExpr("amd64,gc,!purego")
	c := emitConstants(sb)
	b := newBSConsts(sb)
	w := newWordConsts(sb, b, c.zero)
	genBSEncryptBlocks(c, b)
	genBSXORKeyStream(c, b)
	pt := newPieceTables()
	genBSXORPieces(c, b, pt)
	genBSXORKeyStream2(c, b)
	for _, t := range []*tier{avx512AESNI(c, w), avx2GFNI(c, w), avx2AESNI(c, w, false), avx2AESNI(c, w, true)} {
		genEncryptBlocks(t)
		genXORKeyStream(t)
		genXORPieces(t, pt)
	}
	Generate()
}

// consts are the read-only tables the kernels use.
type consts struct {
	sb                 sboxTransforms
	preMat             Mem         // GFNI matrix of pre (qword)
	bswap              Mem         // byte swap of every 32-bit word, 64 bytes
	rot8, rot16, rot24 Mem         // VPSHUFB rotations of 32-bit words, 32 bytes
	mask0f             Mem         // 0x0f in every byte, 64 bytes
	zero               Mem         // 64 zero bytes (AESENCLAST's round key; frame.Zero)
	preLo, preHi       Mem         // VPSHUFB nibble tables of pre, 64 bytes
	ctrOff8, ctrOff16  Mem         // counter offsets per lane (YMM, ZMM), see ctrOffsets
	inc                map[int]Mem // n in every dword, 64 bytes
}

// bytesTable emits a 16-byte pattern repeated to n bytes.
func bytesTable(name string, pattern [16]byte, n int) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for off := 0; off < n; off++ {
		DATA(off, U8(pattern[off%16]))
	}
	return m
}

func dwordTable(name string, v []uint32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, x := range v {
		DATA(4*i, U32(x))
	}
	return m
}

// wordShuffle returns the VPSHUFB pattern mapping byte k of every 32-bit
// word to byte f(k) of the same word.
func wordShuffle(f func(k int) int) [16]byte {
	var p [16]byte
	for i := range p {
		p[i] = byte(i&^3 + f(i&3))
	}
	return p
}

// ctrOffsets gives, for dword lane p of a transposed register set of
// `width` blocks, the index of the block it belongs to. The in-lane 4×4
// transpose puts word r of block (width/4)·m + L in lane p = 4L + m of
// register r (L: 128-bit lane, m: register the block was loaded into).
func ctrOffsets(width, sets int) []uint32 {
	var v []uint32
	for s := 0; s < sets; s++ {
		for p := 0; p < width; p++ {
			L, m := p/4, p%4
			v = append(v, uint32(s*width+(width/4)*m+L))
		}
	}
	return v
}

func emitConstants(sb sboxTransforms) *consts {
	c := &consts{sb: sb}
	c.preMat = GLOBL("sm4PreMatrix", RODATA|NOPTR)
	DATA(0, U64(sb.pre.matrix()))
	c.bswap = bytesTable("sm4BswapMask", wordShuffle(func(k int) int { return 3 - k }), 64)
	// On little-endian 32-bit lanes, rotl(x, 8n) moves byte k-n to byte k.
	c.rot8 = bytesTable("sm4Rotl8", wordShuffle(func(k int) int { return (k + 3) % 4 }), 32)
	c.rot16 = bytesTable("sm4Rotl16", wordShuffle(func(k int) int { return (k + 2) % 4 }), 32)
	c.rot24 = bytesTable("sm4Rotl24", wordShuffle(func(k int) int { return (k + 1) % 4 }), 32)
	var f0 [16]byte
	for i := range f0 {
		f0[i] = 0x0f
	}
	c.mask0f = bytesTable("sm4Mask0f", f0, 64)
	c.zero = bytesTable("sm4Zero64", [16]byte{}, 64)
	preLo, preHi := nibbleTables(sb.pre)
	c.preLo = bytesTable("sm4PreLo", preLo, 64)
	c.preHi = bytesTable("sm4PreHi", preHi, 64)
	c.ctrOff8 = dwordTable("sm4CtrOffsets8", ctrOffsets(8, ymmSets))
	c.ctrOff16 = dwordTable("sm4CtrOffsets16", ctrOffsets(16, zmmSets))
	c.inc = map[int]Mem{}
	for _, v := range []int{8 * ymmSets, 16 * zmmSets} { // full passes (YMM, ZMM)
		c.inc[v] = dwordTable(fmt.Sprintf("sm4Inc%d", v), repeat(uint32(v), 16))
	}
	return c
}

func repeat(v uint32, n int) []uint32 {
	r := make([]uint32, n)
	for i := range r {
		r[i] = v
	}
	return r
}

// tier describes one instruction-set rung of the kernel.
type tier struct {
	name     string
	doc      string
	width    int // blocks per register set (8: YMM, 16: ZMM)
	c        *consts
	vec      func() VecVirtual
	xor      func(a, b, dst Op) // dst = b ^ a
	xor3     func(a, b, dst Op) // dst ^= a ^ b
	and      func(a, b, dst Op) // dst = b & a (the AES-NI tiers)
	mov      func(src, dst Op)  // full-width move / unaligned load / store
	setup    func()             // load per-call constants into registers
	temps    int                // scratch registers a round needs (≥ 3)
	sboxL    func(t VecVirtual, s []VecVirtual) (p0, p3 VecVirtual)
	fold     [4]Mem                   // VPSHUFB before XOR into x0 (see sm4Round); zero Mem: none
	toDomain func(v, a, b VecVirtual) // v = M·v bytewise
	fromDom  func(v, a, b VecVirtual) // v = M⁻¹·v bytewise
	keyPre   func(v, a, b VecVirtual) // v = pre(v) bytewise (M·v ⊕ c)
	rk       func(m Mem) Op           // a broadcast round key (register or memory)
	rkBytes  int                      // bytes per round key in the round-key table
	bcstKeys bool                     // the rounds broadcast each 4-byte key from memory (EVEX {1toN}): no table
	ctrOff   Mem                      // counter offsets of the tier's lane layout
	maxSets  int                      // sets per full pass (slotSet)
	tail     tailOps
	regBytes int // bytes per vector register
	// foldInto, when set, replaces the VPSHUFB folds: x1 = x0 ⊕ P0 ⊕
	// rotl24(P3) ⊕ rotl8(Q) ⊕ rotl16(Q), Q = P0 ⊕ P3 (free: scratch).
	foldInto func(x0 Mem, x1, p0, p3 VecVirtual, free []VecVirtual)
}

// tailOps loads and stores the register Z_m of a partial set: only the
// blocks below the remaining count are touched.
type tailOps struct {
	prepare  func(n GPVirtual) // set up for n remaining blocks
	load     func(m int, src Mem, dst VecVirtual)
	store    func(m int, src VecVirtual, dst Mem)
	xorStore func(m int, src Mem, v VecVirtual, dst Mem) // dst = v ⊕ src
}

// set is one transposed register group: x[i] holds word i of every block.
type set [4]VecVirtual

func (t *tier) newSet() set {
	return set{t.vec(), t.vec(), t.vec(), t.vec()}
}

// transpose4 turns four registers of whole blocks (register m holds blocks
// width/4·m … in its 128-bit lanes) into word-major form and back (the
// in-lane 4×4 dword transpose is its own inverse).
func (t *tier) transpose4(r set, t0, t1 VecVirtual) {
	VPUNPCKHDQ(r[1], r[0], t0)
	VPUNPCKLDQ(r[1], r[0], r[0])
	VPUNPCKLDQ(r[3], r[2], t1)
	VPUNPCKHDQ(r[3], r[2], r[2])
	VPUNPCKHQDQ(t1, r[0], r[1])
	VPUNPCKLQDQ(t1, r[0], r[0])
	VPUNPCKHQDQ(r[2], t0, r[3])
	VPUNPCKLQDQ(r[2], t0, r[2])
}

// loadBlocks loads a full set from p (block-major) into word-major form.
func (t *tier) loadBlocks(s set, p GPVirtual, off int) {
	for m := range s {
		t.mov(Mem{Base: p, Disp: off + m*t.regBytes}, s[m])
		VPSHUFB(t.c.bswap, s[m], s[m])
	}
	a, b := t.vec(), t.vec()
	t.transpose4(s, a, b)
	for _, v := range s {
		t.toDomain(v, a, b)
	}
}

// counterSet builds the counter blocks of set k in word-major form from
// the per-call words in ctrw (stack; words 0-2 already in the M domain)
// and the offsets table.
func (t *tier) counterSet(s set, ctrw Mem, k int) {
	t.mov(ctrw.Offset(3*t.regBytes), s[3])
	VPADDD(t.ctrOff.Offset(k*t.regBytes), s[3], s[3])
	t.toDomain(s[3], s[0], s[1])
	for w := 0; w < 3; w++ {
		t.mov(ctrw.Offset(w*t.regBytes), s[w])
	}
}

func (t *tier) params() (rk, dst, src, n GPVirtual) {
	rk = Load(Param("rk"), GP64()).(GPVirtual)
	dst = Load(Param("dst"), GP64()).(GPVirtual)
	src = Load(Param("src"), GP64()).(GPVirtual)
	n = Load(Param("nblocks"), GP64()).(GPVirtual)
	return
}

// kernel holds what one generated function needs while emitting passes.
type kernel struct {
	t            *tier
	name         string
	ctr          bool // CTR keystream XOR rather than ECB
	rk, dst, src GPVirtual
	n            GPVirtual
	ctrw, ctr32  Mem
	pre          Mem // the round keys through pre, before broadcasting (preKeys)
	tab          Mem // the address of the broadcast round-key table (preKeys)
}

// body emits the pass schedule (passes) and returns.
func (g *kernel) body() {
	g.passes()
	g.wipeKeys()
	VZEROUPPER()
	RET()
}

// wipeKeys zeroes the round keys preKeys left in the frame (frame.Zero).
func (g *kernel) wipeKeys() {
	frame.Zero(g.pre, 128, false, g.t.c.zero)
	if g.t.bcstKeys {
		return
	}
	tab := GP64()
	MOVQ(g.tab, tab)
	frame.Zero(Mem{Base: tab}, 32*g.t.rkBytes, g.t.regBytes == 64, g.t.c.zero)
}

// passes emits the pass schedule: full passes of maxSets sets while they
// fit, then one pass of ceil(n/width) sets whose last set is masked. It
// advances src, dst and n and falls through at the end.
func (g *kernel) passes() {
	t := g.t
	full := t.maxSets * t.width
	Label(g.name + "_loop")
	CMPQ(g.n, U32(full))
	JB(LabelRef(g.name + "_partial"))
	g.pass(t.maxSets, false)
	JMP(LabelRef(g.name + "_loop"))

	Label(g.name + "_partial")
	Comment("Fewer than a full pass left: ceil(n/width) sets, the last one masked.")
	TESTQ(g.n, g.n)
	JZ(LabelRef(g.name + "_done"))
	for k := t.maxSets; k >= 2; k-- {
		CMPQ(g.n, U32((k-1)*t.width))
		JA(LabelRef(fmt.Sprintf("%s_sets%d", g.name, k)))
	}
	for k := 1; k <= t.maxSets; k++ {
		Label(fmt.Sprintf("%s_sets%d", g.name, k))
		g.pass(k, true)
		JMP(LabelRef(g.name + "_done"))
	}
	Label(g.name + "_done")
}

// preKeys replaces g.rk by a stack table of the round keys with pre
// applied to every byte (the key's share of the S-box input in the M
// domain; see sm4Round), each key broadcast to a whole register so that
// the rounds read it as a memory operand and keep no register for it. A
// tier with bcstKeys reads the 4-byte keys with an embedded broadcast
// instead, so it gets no table.
func (g *kernel) preKeys() {
	t := g.t
	pre := AllocLocal(128)
	g.pre = pre
	for off := 0; off < 128; off += t.regBytes {
		v, a, b := t.vec(), t.vec(), t.vec()
		t.mov(Mem{Base: g.rk, Disp: off}, v)
		t.keyPre(v, a, b)
		t.mov(v, pre.Offset(off))
	}
	if t.bcstKeys {
		LEAQ(pre, g.rk)
		return
	}
	// 64-byte aligned: every round reads its key as a whole-register
	// memory operand, which must not cross a cache line.
	tab := frame.AlignedArea(32 * t.rkBytes)
	for i := 0; i < 32; i++ {
		v := t.vec()
		VPBROADCASTD(pre.Offset(4*i), v)
		t.mov(v, Mem{Base: tab, Disp: t.rkBytes * i})
	}
	MOVQ(tab, g.rk)
	g.tab = AllocLocal(8)
	MOVQ(tab, g.tab)
}

func genEncryptBlocks(t *tier) {
	name := "encryptBlocks" + t.name
	// Not NOSPLIT: the broadcast round-key table makes the frame larger
	// than the no-split limit.
	TEXT(name, 0, "func(rk *[32]uint32, dst, src *byte, nblocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s encrypts nblocks 16-byte blocks from src to dst (SM4, GB/T 32907-2016 §7.1) with round keys rk, using %s.", name, t.doc))
	g := &kernel{t: t, name: name}
	g.rk, g.dst, g.src, g.n = t.params()
	t.setup()
	g.preKeys()
	g.body()
}

func genXORKeyStream(t *tier) {
	name := "xorKeyStream" + t.name
	TEXT(name, 0, "func(rk *[32]uint32, ctr *[16]byte, dst, src *byte, nblocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs src with the SM4 keystream of the counter blocks ctr, inc32(ctr), … (NIST SP 800-38D §6.5 GCTR, §6.2 inc32) for nblocks whole blocks and writes dst, using %s. ctr is not updated.", name, t.doc))
	g := &kernel{t: t, name: name, ctr: true}
	g.rk, g.dst, g.src, g.n = t.params()
	ctrp := Load(Param("ctr"), GP64()).(GPVirtual)
	t.setup()
	g.preKeys()

	Comment("Counter words 0-2 broadcast, word 3 (the inc32 counter) broadcast; all byte-swapped to native order.")
	g.ctrw = Mem{Base: frame.AlignedArea(4 * t.regBytes)}
	cx, wx := XMM(), XMM()
	VMOVDQU(Mem{Base: ctrp}, cx)
	VPSHUFB(t.c.bswap, cx, cx)
	for w := 0; w < 4; w++ {
		v := t.vec()
		VPSHUFD(U8(0x55*w), cx, wx)
		VPBROADCASTD(wx, v)
		if w < 3 {
			t.toDomain(v, t.vec(), t.vec())
		}
		t.mov(v, g.ctrw.Offset(w*t.regBytes))
	}
	g.ctr32 = g.ctrw.Offset(3 * t.regBytes)
	g.body()
}

// bumpCounter adds sets·width to the broadcast inc32 counter word; VPADDD
// wraps modulo 2^32 exactly like inc32.
func (t *tier) bumpCounter(ctr32 Mem, sets int) {
	v := t.vec()
	t.mov(ctr32, v)
	VPADDD(t.c.inc[sets*t.width], v, v)
	t.mov(v, ctr32)
}

// ymmSets is the number of 8-block sets of a full YMM pass.
const ymmSets = 4

// slotSet is a register set that keeps three of its four words in
// registers and the oldest one on the stack. Round i of GB/T 32907-2016
// §7.1 reads X_i only once, as the base the new word X_{i+4} is folded
// into, so X_i can be a memory operand; the round stores X_{i+1} (the
// next round's X_i, read a whole round later, off the critical path) and
// writes X_{i+4} into X_{i+1}'s register. With twelve registers for four
// sets and four for the round's scratch, a pass holds 32 blocks instead
// of 24: a YMM round is bound by its latency chain (inversion, nibble
// lookups, folds), so the fourth set mostly fills idle issue slots.
// (Keeping two words per set on the stack, for five or six sets, was
// measured slower: the extra loads and stores cost more than the sets
// gain.)
//
// r[j] holds X_{i+1+j} at the start of each group of four rounds; slot
// i%2 holds X_i at round i. Four rounds rotate the register roles by one
// (4 mod 3), so each loop iteration ends with a three-register rotation
// (moves, which rename away).
type slotSet struct {
	r    [3]VecVirtual
	slot [2]Mem
}

// sm4Round emits round i (mod 4) of GB/T 32907-2016 §7.1 on a slotSet:
// X_{i+4} = X_i ⊕ T(X_{i+1} ⊕ X_{i+2} ⊕ X_{i+3} ⊕ rk_i), T = L∘τ, with the
// word roles rotating through the set's registers and slots instead of
// moving data.
//
// The state is kept in the M domain (M, the linear part of the S-box's
// input map pre, applied to every byte; see bs.go) and the round keys as
// pre(rk), so the XOR of the three words and the key is already the
// S-box's inversion input. With b = τ(x) bytewise, L(B) = A0(B) ⊕
// rotl8(A1(B)) ⊕ rotl16(A1(B)) ⊕ rotl24(A3(B)) (A applied bytewise, A1 =
// A0 ⊕ A3), so sboxL returns P0 = M∘A0∘τ and P3 = M∘A3∘τ and the round
// adds P0, rotl24(P3) and the two rotations of Q = P0 ⊕ P3 into x0
// (fold[0], fold[1], fold[2], fold[3]; the AES-NI tier composes them with
// the inverse ShiftRows).
func (t *tier) sm4Round(s *slotSet, i int, rk Op, tmp VecVirtual, scratch []VecVirtual) {
	x1, x2, x3 := s.r[i%3], s.r[(i+1)%3], s.r[(i+2)%3]
	x0 := s.slot[i%2]
	if t.bcstKeys {
		VPXORD_BCST(rk, x1, tmp)
	} else {
		t.xor(rk, x1, tmp)
	}
	t.xor3(x2, x3, tmp)
	t.mov(x1, s.slot[(i+1)%2])
	p0, p3 := t.sboxL(tmp, scratch)
	var sc VecVirtual
	for _, v := range append([]VecVirtual{tmp}, scratch...) {
		if v != p0 && v != p3 {
			sc = v
			break
		}
	}
	// X_{i+4} = X_i ⊕ folds, built in X_{i+1}'s register.
	if t.foldInto != nil {
		var free []VecVirtual
		for _, v := range append([]VecVirtual{tmp}, scratch...) {
			if v != p0 && v != p3 {
				free = append(free, v)
			}
		}
		t.foldInto(x0, x1, p0, p3, free)
		return
	}
	if t.fold[0] == (Mem{}) {
		t.xor(x0, p0, x1)
	} else {
		VPSHUFB(t.fold[0], p0, x1)
		t.xor(x0, x1, x1)
	}
	VPSHUFB(t.fold[1], p3, sc)
	t.xor(sc, x1, x1)
	t.xor(p0, p3, p3)
	VPSHUFB(t.fold[2], p3, sc)
	t.xor(sc, x1, x1)
	VPSHUFB(t.fold[3], p3, sc)
	t.xor(sc, x1, x1)
}

// pass emits one pass over k sets (k·width blocks). When masked, the last
// set holds only n - (k-1)·width blocks and is loaded and stored under
// masks; otherwise all k sets are full. It advances src, dst and n. Every
// set enters as four registers, stores word 0 in its slot and keeps words
// 1-3 (slotSet); after the 32 rounds each set gets X32 back from its slot,
// leaves the M domain, is transposed back and stored.
func (g *kernel) pass(k int, masked bool) {
	t := g.t
	if masked {
		last := GP64()
		MOVQ(g.n, last)
		if k > 1 {
			SUBQ(U32((k-1)*t.width), last)
		}
		t.tail.prepare(last)
	}
	isMasked := func(i int) bool { return masked && i == k-1 }
	slots := Mem{Base: frame.AlignedArea(2 * k * t.regBytes)}
	ss := make([]slotSet, k)
	for i := range ss {
		s := t.newSet()
		base := i * t.width * 16
		switch {
		case g.ctr:
			t.counterSet(s, g.ctrw, i)
		case isMasked(i):
			for m, v := range s {
				t.tail.load(m, Mem{Base: g.src, Disp: base + m*t.regBytes}, v)
				VPSHUFB(t.c.bswap, v, v)
			}
			x, y := t.vec(), t.vec()
			t.transpose4(s, x, y)
			for _, v := range s {
				t.toDomain(v, x, y)
			}
		default:
			t.loadBlocks(s, g.src, base)
		}
		ss[i].slot = [2]Mem{slots.Offset(2 * i * t.regBytes), slots.Offset((2*i + 1) * t.regBytes)}
		t.mov(s[0], ss[i].slot[0])
		ss[i].r = [3]VecVirtual{s[1], s[2], s[3]}
	}
	if g.ctr && !masked {
		t.bumpCounter(g.ctr32, k)
	}

	rkp, cnt := GP64(), GP64()
	MOVQ(g.rk, rkp)
	MOVQ(U32(8), cnt)
	tmp := t.vec()
	scratch := make([]VecVirtual, t.temps-1)
	for i := range scratch {
		scratch[i] = t.vec()
	}
	label := fmt.Sprintf("%s_rounds%d%v", g.name, k, masked)
	Label(label)
	for i := 0; i < 4; i++ {
		key := t.rk(Mem{Base: rkp, Disp: t.rkBytes * i})
		for j := range ss {
			t.sm4Round(&ss[j], i, key, tmp, scratch)
		}
	}
	// Four rounds moved X_{i+1} from r[0] to r[1]; rotate the roles back.
	for j := range ss {
		r := &ss[j].r
		t.mov(r[0], tmp)
		t.mov(r[1], r[0])
		t.mov(r[2], r[1])
		t.mov(tmp, r[2])
	}
	if step := 4 * t.rkBytes; step < 256 {
		ADDQ(U8(step), rkp)
	} else {
		ADDQ(U32(step), rkp)
	}
	DECQ(cnt)
	JNZ(LabelRef(label))

	for i := range ss {
		x32 := t.vec()
		t.mov(ss[i].slot[0], x32)
		s := set{x32, ss[i].r[0], ss[i].r[1], ss[i].r[2]}
		x, y := t.vec(), t.vec()
		for _, v := range s {
			t.fromDom(v, x, y)
		}
		// Output (X35, X34, X33, X32): registers 3, 2, 1, 0.
		s[0], s[1], s[2], s[3] = s[3], s[2], s[1], s[0]
		t.transpose4(s, x, y)
		for m := range s {
			VPSHUFB(t.c.bswap, s[m], s[m])
		}
		g.store(i, s, isMasked(i))
	}
	if !masked {
		ADDQ(U32(k*t.width*16), g.src)
		ADDQ(U32(k*t.width*16), g.dst)
		SUBQ(U32(k*t.width), g.n)
	}
}

// store writes the output blocks of set i (XORed with src for CTR).
func (g *kernel) store(i int, s set, masked bool) {
	t := g.t
	base := i * t.width * 16
	for m, v := range s {
		at := Mem{Base: g.src, Disp: base + m*t.regBytes}
		out := Mem{Base: g.dst, Disp: base + m*t.regBytes}
		if masked {
			if g.ctr {
				t.tail.xorStore(m, at, v, out)
			} else {
				t.tail.store(m, v, out)
			}
			continue
		}
		if g.ctr {
			t.xor(at, v, v)
		}
		t.mov(v, out)
	}
}
