// Command sm4ctr generates gmtun's SM4 kernels (GB/T 32907-2016): ECB
// encryption of whole blocks and the CTR keystream XOR used by SM4-GCM
// (NIST SP 800-38D §6.5, GCTR with inc32), in four tiers:
//
//   - AVX512GFNI: 64 blocks per ZMM pass in byte-sliced form (see bs.go):
//     no rotations, L folded into two post-inversion affine maps, the state
//     kept in the S-box input map's linear domain, so a round is 8 GFNI and
//     about 18 ternary-logic instructions per 64 blocks; tails of 1 to 32
//     blocks take one 32-block pass of the same code on YMM registers.
//   - AVX2GFNI: 8 blocks per YMM register set, three sets interleaved; the
//     GFNI S-box (VEX encoding) with L's byte-linear parts folded into it
//     (words.go), byte rotations by VPSHUFB.
//   - AVX2VAES / AVX2AESNI: as AVX2GFNI but the inversion runs through
//     VAESENCLAST on the whole register (VAES) or AESENCLAST on its
//     128-bit halves, followed by nibble-table affine maps (Saarinen).
//
// Data layout of the YMM tiers: every register of a set holds one 32-bit
// word X_i of all the set's blocks ("transposed"), so a round key is one
// broadcast and the S-box and linear map L act on all blocks at once. Full
// passes run while they fit; the rest runs as one pass of ceil(n/width)
// sets whose last set is loaded and stored under masks (VPMASKMOVD), so
// the kernels take any number of whole blocks. Round keys, masks and
// constants are memory operands, so the three sets and the round's
// scratch fit the sixteen YMM registers of AVX2.
//
// Run: go run ./sm4ctr -out ../sm4ctr/sm4ctr_amd64.s -stubs ../sm4ctr/stubs_amd64.go -pkg sm4ctr
package main

import (
	"fmt"
	"os"

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
	w := newWordConsts(sb, b)
	genBSEncryptBlocks(c, b)
	genBSXORKeyStream(c, b)
	for _, t := range []*tier{avx2GFNI(c, w), avx2AESNI(c, w, false), avx2AESNI(c, w, true)} {
		genEncryptBlocks(t)
		genXORKeyStream(t)
	}
	Generate()
}

// consts are the read-only tables the kernels use.
type consts struct {
	sb                 sboxTransforms
	preMat             Mem         // GFNI matrix of pre (qword)
	bswap              Mem         // byte swap of every 32-bit word, 64 bytes
	rot8, rot16, rot24 Mem         // VPSHUFB rotations of 32-bit words, 32 bytes
	mask0f             Mem         // 0x0f in every byte, 32 bytes
	preLo, preHi       Mem         // VPSHUFB nibble tables of pre, 32 bytes
	ctrOff8            Mem         // counter offsets per lane, see ctrOffsets
	inc                map[int]Mem // n in every dword, 64 bytes
	tailIdx8           Mem         // block index of every dword lane, AVX2 layout
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
	c.mask0f = bytesTable("sm4Mask0f", f0, 32)
	preLo, preHi := nibbleTables(sb.pre)
	c.preLo = bytesTable("sm4PreLo", preLo, 32)
	c.preHi = bytesTable("sm4PreHi", preHi, 32)
	c.ctrOff8 = dwordTable("sm4CtrOffsets8", ctrOffsets(8, ymmSets))
	c.inc = map[int]Mem{}
	for _, v := range []int{8 * ymmSets} { // full passes (YMM)
		c.inc[v] = dwordTable(fmt.Sprintf("sm4Inc%d", v), repeat(uint32(v), 16))
	}
	var idx []uint32
	for m := 0; m < 4; m++ {
		for p := 0; p < 8; p++ {
			idx = append(idx, uint32(2*m+p/4))
		}
	}
	c.tailIdx8 = dwordTable("sm4TailIndex8", idx)
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
	ctrOff   Mem                      // counter offsets of the tier's lane layout
	maxSets  int                      // register sets per full pass
	tail     tailOps
	regBytes int // bytes per vector register
}

// tailOps loads and stores the register Z_m of a partial set: only the
// blocks below the remaining count are touched.
type tailOps struct {
	prepare func(n GPVirtual) // build lane masks for n remaining blocks
	load    func(m int, src Mem, dst VecVirtual)
	store   func(m int, src VecVirtual, dst Mem)
}

// set is one transposed register group: x[i] holds word i of every block.
type set [4]VecVirtual

func (t *tier) newSet() set {
	return set{t.vec(), t.vec(), t.vec(), t.vec()}
}

// sm4Round emits round i of GB/T 32907-2016 §7.1:
// X_{i+4} = X_i ⊕ T(X_{i+1} ⊕ X_{i+2} ⊕ X_{i+3} ⊕ rk_i), T = L∘τ, with the
// word roles rotating through the four registers instead of moving data.
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
func (t *tier) sm4Round(s set, i int, rk Op, tmp VecVirtual, scratch []VecVirtual) {
	x0, x1, x2, x3 := s[i%4], s[(i+1)%4], s[(i+2)%4], s[(i+3)%4]
	t.xor(rk, x1, tmp)
	t.xor3(x2, x3, tmp)
	p0, p3 := t.sboxL(tmp, scratch)
	var sc VecVirtual
	for _, v := range append([]VecVirtual{tmp}, scratch...) {
		if v != p0 && v != p3 {
			sc = v
			break
		}
	}
	fold := func(v VecVirtual, pat Mem) {
		if pat == (Mem{}) {
			t.xor(v, x0, x0)
			return
		}
		VPSHUFB(pat, v, sc)
		t.xor(sc, x0, x0)
	}
	fold(p0, t.fold[0])
	fold(p3, t.fold[1])
	t.xor(p0, p3, p3)
	fold(p3, t.fold[2])
	fold(p3, t.fold[3])
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

// encryptSets emits the 32 rounds on every set, four rounds per loop
// iteration (rkp walks the round keys), then reverses the word order
// (R of §7.1) and transposes back to block-major form with byte order
// restored. After it, s[k][m] holds the output blocks of register m.
func (t *tier) encryptSets(sets []set, rk GPVirtual, label string) {
	rkp, cnt := GP64(), GP64()
	MOVQ(rk, rkp)
	MOVQ(U32(8), cnt)
	tmp := t.vec()
	scratch := make([]VecVirtual, t.temps-1)
	for i := range scratch {
		scratch[i] = t.vec()
	}
	a, b := scratch[0], scratch[1]
	Label(label)
	for i := 0; i < 4; i++ {
		k := t.rk(Mem{Base: rkp, Disp: t.rkBytes * i})
		for _, s := range sets {
			t.sm4Round(s, i, k, tmp, scratch)
		}
	}
	ADDQ(U8(4*t.rkBytes), rkp)
	DECQ(cnt)
	JNZ(LabelRef(label))
	for _, s := range sets {
		for _, v := range s {
			t.fromDom(v, a, b)
		}
	}
	for k, s := range sets {
		// Output (X35, X34, X33, X32): registers 3, 2, 1, 0.
		s[0], s[1], s[2], s[3] = s[3], s[2], s[1], s[0]
		t.transpose4(s, a, b)
		for m := range s {
			VPSHUFB(t.c.bswap, s[m], s[m])
		}
		sets[k] = s
	}
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
}

// pass emits one pass over k register sets (k·width blocks). When masked,
// the last set holds only n - (k-1)·width blocks and is loaded and stored
// under masks; otherwise all k sets are full. It advances src, dst and n.
func (g *kernel) pass(k int, masked bool) {
	t := g.t
	sets := make([]set, k)
	for i := range sets {
		sets[i] = t.newSet()
	}
	if masked {
		last := GP64()
		MOVQ(g.n, last)
		if k > 1 {
			SUBQ(U32((k-1)*t.width), last)
		}
		t.tail.prepare(last)
	}
	isMasked := func(i int) bool { return masked && i == k-1 }
	for i, s := range sets {
		base := i * t.width * 16
		switch {
		case g.ctr:
			t.counterSet(s, g.ctrw, i)
		case isMasked(i):
			for m, v := range s {
				t.tail.load(m, Mem{Base: g.src, Disp: base + m*t.regBytes}, v)
				VPSHUFB(t.c.bswap, v, v)
			}
			a, b := t.vec(), t.vec()
			t.transpose4(s, a, b)
			for _, v := range s {
				t.toDomain(v, a, b)
			}
		default:
			t.loadBlocks(s, g.src, base)
		}
	}
	if g.ctr && !masked {
		t.bumpCounter(g.ctr32, k)
	}
	t.encryptSets(sets, g.rk, fmt.Sprintf("%s_rounds%d%v", g.name, k, masked))
	in := t.vec()
	for i, s := range sets {
		base := i * t.width * 16
		for m, v := range s {
			at := Mem{Base: g.src, Disp: base + m*t.regBytes}
			out := Mem{Base: g.dst, Disp: base + m*t.regBytes}
			switch {
			case isMasked(i):
				if g.ctr {
					t.tail.load(m, at, in)
					t.xor(in, v, v)
				}
				t.tail.store(m, v, out)
			default:
				if g.ctr {
					t.xor(at, v, v)
				}
				t.mov(v, out)
			}
		}
	}
	if !masked {
		ADDQ(U32(k*t.width*16), g.src)
		ADDQ(U32(k*t.width*16), g.dst)
		SUBQ(U32(k*t.width), g.n)
	}
}

// body emits the pass schedule: full passes of maxSets sets while they
// fit, then one pass of ceil(n/width) sets whose last set is masked.
func (g *kernel) body() {
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
	VZEROUPPER()
	RET()
}

// preKeys replaces g.rk by a stack table of the round keys with pre
// applied to every byte (the key's share of the S-box input in the M
// domain; see sm4Round), each key broadcast to a whole register so that
// the rounds read it as a memory operand and keep no register for it.
func (g *kernel) preKeys() {
	t := g.t
	pre := AllocLocal(128)
	for off := 0; off < 128; off += 32 {
		v, a, b := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: g.rk, Disp: off}, v)
		t.keyPre(v, a, b)
		VMOVDQU(v, pre.Offset(off))
	}
	tab := AllocLocal(32 * t.rkBytes)
	for i := 0; i < 32; i++ {
		v := YMM()
		VPBROADCASTD(pre.Offset(4*i), v)
		VMOVDQU(v, tab.Offset(t.rkBytes*i))
	}
	LEAQ(tab, g.rk)
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
	g.ctrw = AllocLocal(4 * t.regBytes)
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
