package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The AVX512GFNI tier keeps its state byte-sliced: 64 blocks per pass,
// sixteen ZMM registers, register j holding byte j (big-endian index in the
// 16-byte block, so word j/4, byte j%4 of that word) of all 64 blocks. A
// rotation of a 32-bit word by whole bytes is then only a renaming of
// registers, and L∘τ (GB/T 32907-2016 §6.2) becomes, per output byte j,
//
//	L(B)_j = A0·b_j ⊕ A1·b_{j+1} ⊕ A1·b_{j+2} ⊕ A3·b_{j+3}   (indices mod 4)
//
// with b = τ(input) and byte-linear maps A0 = I ⊕ Mlo, A1 = Mlo ⊕ Mhi,
// A3 = I ⊕ Mhi (Mlo·x = x << 2, Mhi·x = x >> 6 on a byte: the bits that
// rol2 keeps in a byte and the ones it carries in from the next byte).
// Each A is folded into the post-inversion affine map of the GFNI S-box
// (A0∘post and A3∘post; A1 = A0 ⊕ A3 is their XOR), and no instruction of
// a round rotates.
//
// The S-box is τ(x) = post(inv(pre(x))) with pre(x) = M·x ⊕ c. The state
// is kept in the M domain: every byte of every word holds M·X (applied
// once when blocks enter, M⁻¹ once when they leave), and the round keys
// are stored as pre(rk) = M·rk ⊕ c. By linearity the XOR of the three
// words and the key is then already pre(X1 ⊕ X2 ⊕ X3 ⊕ rk), the
// inversion's input, and the post maps become M∘A0∘post and M∘A3∘post, so
// that the round's output lands in the M domain again. A byte costs two
// VGF2P8AFFINEINVQB and no VGF2P8AFFINEQB: 8 GFNI instructions per round
// instead of 12, and one GFNI latency less on the round's critical path
// (measured on Zen 5: 4236 → 5041 MB/s for the CTR kernel at 8 KiB). On
// Zen 5 (ZMM double-pumped) GFNI runs on two pipes at one ZMM op per
// cycle, and the ternary-logic ops compete for the same pipes.
//
// The rounds of a pair share X_{i+2} ⊕ X_{i+3}, which both of them XOR
// into their input, and the round keys are pre-split into byte-replicated
// dwords on the stack so that the key XOR is an m32bcst operand of the
// three-way VPTERNLOGD. The six terms of each new byte are folded in the
// order their bytes were computed, so only one VPTERNLOGD follows the
// round's last S-box (measured: 280 → 252 ns per 64-block pass). Starting
// the even rounds' input from X1 ⊕ X2, so that only the last XOR waits for
// the newest word X3, was measured no faster (one more instruction).
//
// A pass is one set of 64 blocks: the state takes 16 registers and a
// round's temporaries 12 more, so a second set does not fit the register
// file. Every byte of a round depends on every byte of the previous one,
// so part of a round is exposed latency (measured on Zen 5 before the M
// domain: 28 cycles per round against 18.5 for independent rounds; after
// it about 19 cycles per round). Keeping a whole second
// set on the stack (ZMM stores and store forwarding are slow there) or a
// word-sliced 16-block set in the four spare registers was measured
// slower or no faster, and is not used. Keeping only each set's oldest
// word on the stack, so that two sets and a round's temporaries fit the
// 32 registers, is about 10 % faster than two passes (bs2.go,
// XORKeyStreamPair).
//
// Blocks enter and leave through a 16×16 byte transpose within each
// 128-bit lane (four VPUNPCK stages of 16 instructions). Loading the
// 64-byte groups in bit-reversed order makes the network an exact
// transpose: register j, lane L, byte q is byte j of block 4q+L. Counter
// blocks for CTR are built directly in this form: bytes 0-11 are one
// VPBROADCASTB each, bytes 12-15 come from four dword vectors of counters
// through an in-lane byte transpose and VPERMI2D (AVX-512 F/BW only).

// bsConsts are the tables of the byte-sliced tier.
type bsConsts struct {
	lin, linInv affine          // M (linear part of pre) and M⁻¹
	a0, a3      func(byte) byte // A0 = I ⊕ Mlo, A3 = I ⊕ Mhi
	linInvm     Mem             // M⁻¹'s GF2P8AFFINE matrix (M's is consts.preMat)
	p0, p3      affine          // M∘A0∘post, M∘A3∘post
	p0m, p3m    Mem             // their GF2P8AFFINE matrices (qwords)
	rkSplit     Mem             // 4×64-byte VPSHUFB patterns: byte j of each dword, replicated
	ctrIdx      Mem             // 4×64 dwords: block index of every lane of D_h
	ctrBytes    Mem             // VPSHUFB pattern: in-lane 4×4 byte transpose
	ctrPerm     Mem             // 4×16 VPERMI2D indices: native byte nb of D_h lanes
	ctrIdxN     Mem             // narrow pass: 2×16 dwords, block index of lane L byte q
	bitrev4     [16]int
	passBytes   int
}

// composeLinear returns the affine map y ↦ f(post(y)) for linear f.
func composeLinear(name string, f func(byte) byte, post affine) affine {
	return affineOf(name, func(y byte) byte { return f(post.apply(y)) })
}

func newBSConsts(sb sboxTransforms) *bsConsts {
	mlo := func(x byte) byte { return x << 2 }
	mhi := func(x byte) byte { return x >> 6 }
	b := &bsConsts{passBytes: 64 * 16}
	b.a0 = func(x byte) byte { return x ^ mlo(x) }
	b.a3 = func(x byte) byte { return x ^ mhi(x) }
	b.lin = sb.pre
	b.lin.c = 0
	var inv [256]byte
	for x := 0; x < 256; x++ {
		inv[b.lin.apply(byte(x))] = byte(x)
	}
	b.linInv = affineOf("M⁻¹", func(y byte) byte { return inv[y] })
	b.p0 = composeLinear("M∘A0∘post", func(x byte) byte { return b.lin.apply(x ^ mlo(x)) }, sb.post)
	b.p3 = composeLinear("M∘A3∘post", func(x byte) byte { return b.lin.apply(x ^ mhi(x)) }, sb.post)
	for i := range b.bitrev4 {
		b.bitrev4[i] = i>>3&1 | i>>1&2 | i<<1&4 | i<<3&8
	}
	b.check(sb)
	b.linInvm = GLOBL("sm4BSLinInv", RODATA|NOPTR)
	DATA(0, U64(b.linInv.matrix()))
	b.p0m = GLOBL("sm4BSPost0", RODATA|NOPTR)
	DATA(0, U64(b.p0.matrix()))
	b.p3m = GLOBL("sm4BSPost3", RODATA|NOPTR)
	DATA(0, U64(b.p3.matrix()))

	b.rkSplit = GLOBL("sm4BSKeySplit", RODATA|NOPTR)
	for j := 0; j < 4; j++ {
		for k := 0; k < 64; k++ {
			// Native byte 3-j of the dword holds big-endian byte j.
			DATA(64*j+k, U8(k&^3+3-j))
		}
	}
	b.ctrIdx = GLOBL("sm4BSCtrIndex", RODATA|NOPTR)
	for h := 0; h < 4; h++ {
		for d := 0; d < 16; d++ {
			// D_h lane d serves byte position p = 16h + d, i.e. lane
			// L = h, byte q = d of the sliced registers: block 4d + h.
			DATA(64*h+4*d, U32(uint32(4*d+h)))
		}
	}
	// After an in-lane 4×4 byte transpose of D_h (ctrBytes), dword 4l+nb
	// holds native byte nb of the counters in dwords 4l…4l+3. Output dword
	// P (bytes 4P…4P+3, positions of blocks 4(4l+e)+h, e = 0…3) is that
	// dword of D_h with h = P/4, l = P%4: VPERMI2D over D_0, D_1 gives P <
	// 8, over D_2, D_3 the rest.
	b.ctrBytes = bytesTable("sm4BSCtrBytes", func() (p [16]byte) {
		for k := 0; k < 4; k++ {
			for e := 0; e < 4; e++ {
				p[4*k+e] = byte(4*e + k)
			}
		}
		return p
	}(), 64)
	b.ctrIdxN = GLOBL("sm4BSCtrIndexNarrow", RODATA|NOPTR)
	for l := 0; l < 2; l++ {
		for q := 0; q < 16; q++ {
			// YMM lane L, byte q of the sliced registers: block 2q + L.
			DATA(64*l+4*q, U32(uint32(2*q+l)))
		}
	}
	b.ctrPerm = GLOBL("sm4BSCtrPerm", RODATA|NOPTR)
	for nb := 0; nb < 4; nb++ {
		for p := 0; p < 16; p++ {
			q := p % 8
			DATA(64*nb+4*p, U32(uint32((q/4)*16+4*(q%4)+nb)))
		}
	}
	return b
}

// check runs one byte-sliced round through the instruction models and
// compares it with the word-level T = L∘τ on sample words.
func (b *bsConsts) check(sb sboxTransforms) {
	tau := func(x uint32) uint32 {
		return uint32(sm4SBox[x>>24])<<24 | uint32(sm4SBox[x>>16&0xff])<<16 |
			uint32(sm4SBox[x>>8&0xff])<<8 | uint32(sm4SBox[x&0xff])
	}
	rol := func(x uint32, n uint) uint32 { return x<<n | x>>(32-n) }
	lin := func(x uint32) uint32 { return x ^ rol(x, 2) ^ rol(x, 10) ^ rol(x, 18) ^ rol(x, 24) }
	x := uint32(0x01234567)
	for trial := 0; trial < 4096; trial++ {
		x = x*1664525 + 1013904223
		want := lin(tau(x))
		// In the kernel x = X1 ⊕ X2 ⊕ X3 ⊕ rk: the state words enter
		// as M·X (GF2P8AFFINEQB with M, no constant) and the round key
		// as pre(rk) = M·rk ⊕ c, so the S-box input is pre(x).
		var p0, p3, out [4]byte
		for j := 0; j < 4; j++ {
			in := byte(x >> (24 - 8*j))
			k := byte(x*2654435761>>(8*j)) ^ byte(trial)
			u := gf2p8affineqb(in^k, b.lin.matrix(), 0) ^ gf2p8affineqb(k, sb.pre.matrix(), sb.pre.c)
			p0[j] = gf2p8affineinvqb(u, b.p0.matrix(), b.p0.c)
			p3[j] = gf2p8affineinvqb(u, b.p3.matrix(), b.p3.c)
		}
		for j := 0; j < 4; j++ {
			j1, j2, j3 := (j+1)%4, (j+2)%4, (j+3)%4
			// The round's contribution, taken back out of the M domain.
			out[j] = gf2p8affineqb(p0[j]^p0[j1]^p3[j1]^p0[j2]^p3[j2]^p3[j3], b.linInv.matrix(), 0)
		}
		got := uint32(out[0])<<24 | uint32(out[1])<<16 | uint32(out[2])<<8 | uint32(out[3])
		if got != want {
			panic(fmt.Sprintf("sm4ctr gen: byte-sliced round wrong for %#08x: %#08x, want %#08x", x, got, want))
		}
	}
}

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

// transpose is the in-lane 16×16 byte transpose network on r (four
// unpack stages); it returns the registers in output order.
func transpose(r [16]VecVirtual, vec func() VecVirtual) [16]VecVirtual {
	type unpack func(a, b, dst Op)
	stages := [][2]unpack{
		{func(a, b, d Op) { VPUNPCKLBW(a, b, d) }, func(a, b, d Op) { VPUNPCKHBW(a, b, d) }},
		{func(a, b, d Op) { VPUNPCKLWD(a, b, d) }, func(a, b, d Op) { VPUNPCKHWD(a, b, d) }},
		{func(a, b, d Op) { VPUNPCKLDQ(a, b, d) }, func(a, b, d Op) { VPUNPCKHDQ(a, b, d) }},
		{func(a, b, d Op) { VPUNPCKLQDQ(a, b, d) }, func(a, b, d Op) { VPUNPCKHQDQ(a, b, d) }},
	}
	for _, st := range stages {
		var next [16]VecVirtual
		for i := 0; i < 8; i++ {
			lo, hi := vec(), vec()
			// Intel operand order unpck(dst, a, b): low elements of a first.
			st[0](r[i+8], r[i], lo)
			st[1](r[i+8], r[i], hi)
			next[2*i], next[2*i+1] = lo, hi
		}
		r = next
	}
	return r
}

// input brings the pass's blocks (source blocks or counter blocks) into
// byte-sliced form.
func (g *bsKernel) input() [16]VecVirtual {
	if g.ctr {
		if g.narrow {
			return g.countersNarrow()
		}
		return g.counters(0)
	}
	var r [16]VecVirtual
	for m := range r {
		grp := g.b.bitrev4[m]
		r[m] = g.vec()
		if g.full {
			VMOVDQU64(Mem{Base: g.src, Disp: g.groupBytes() * grp}, r[m])
			continue
		}
		kr := g.groupMask(grp)
		VMOVDQU64_Z(Mem{Base: g.src, Disp: g.groupBytes() * grp}, kr, r[m])
	}
	r = transpose(r, g.vec)
	for _, v := range r {
		g.toDomain(v)
	}
	return r
}

// toDomain applies M (the linear part of the S-box's input map) to every
// byte of v; fromDomain applies M⁻¹.
func (g *bsKernel) toDomain(v VecVirtual) {
	VGF2P8AFFINEQB_BCST(U8(0), g.c.preMat, v, v)
}

func (g *bsKernel) fromDomain(v VecVirtual) {
	VGF2P8AFFINEQB_BCST(U8(0), g.b.linInvm, v, v)
}

// counters builds set k's counter blocks in byte-sliced form.
func (g *bsKernel) counters(k int) [16]VecVirtual {
	var x [16]VecVirtual
	for j := 0; j < 12; j++ {
		x[j] = ZMM()
		VPBROADCASTB(g.ctrM.Offset(j), x[j])
	}
	lo := g.ctrLo
	if k > 0 {
		lo = GP64()
		LEAL(Mem{Base: g.ctrLo, Disp: 64 * k}, lo.As32())
	}
	cv := ZMM()
	VPBROADCASTD(lo.As32(), cv)
	var d [4]VecVirtual
	for h := range d {
		d[h] = ZMM()
		VPADDD(g.b.ctrIdx.Offset(64*h), cv, d[h])
		VPSHUFB(g.b.ctrBytes, d[h], d[h])
	}
	for j := 12; j < 16; j++ {
		nb := 15 - j // native byte of the dword
		a, b := ZMM(), ZMM()
		VMOVDQU64(g.b.ctrPerm.Offset(64*nb), a)
		VPERMI2D(d[1], d[0], a)
		VMOVDQU64(g.b.ctrPerm.Offset(64*nb), b)
		VPERMI2D(d[3], d[2], b)
		x[j] = ZMM()
		VSHUFI64X2(U8(0x44), b, a, x[j])
		g.toDomain(x[j])
	}
	return x
}

// countersNarrow builds the 32 counter blocks of a YMM pass in
// byte-sliced form: register j, lane L, byte q is byte j of block 2q+L.
// Bytes 12-15 come from the dword counters of each lane truncated to
// bytes (VPMOVDB, AVX-512 F).
func (g *bsKernel) countersNarrow() [16]VecVirtual {
	var x [16]VecVirtual
	for j := 0; j < 12; j++ {
		x[j] = YMM()
		VPBROADCASTB(g.ctrM.Offset(j), x[j])
	}
	cv := ZMM()
	VPBROADCASTD(g.ctrLo.As32(), cv)
	var e [2]VecVirtual
	for l := range e {
		e[l] = ZMM()
		VPADDD(g.b.ctrIdxN.Offset(64*l), cv, e[l])
	}
	for j := 12; j < 16; j++ {
		nb := 15 - j // native byte of the dword
		var half [2]VecVirtual
		for l := range half {
			t := e[l]
			if nb > 0 {
				t = ZMM()
				VPSRLD(U8(8*nb), e[l], t)
			}
			half[l] = XMM()
			VPMOVDB(t, half[l])
		}
		x[j] = YMM()
		VINSERTI32X4(U8(1), half[1], half[0].AsY(), x[j])
		g.toDomain(x[j])
	}
	return x
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

// output applies R (word order reversed, GB/T 32907-2016 §7.1) to the pass,
// transposes it back and writes its groups (XORed with src for CTR).
func (g *bsKernel) output(x [16]VecVirtual) {
	var in [16]VecVirtual
	for m := range in {
		j := g.b.bitrev4[m]
		in[m] = x[(3-j/4)*4+j%4]
		g.fromDomain(in[m])
	}
	out := transpose(in, g.vec)
	for grp, v := range out {
		at := Mem{Base: g.dst, Disp: g.groupBytes() * grp}
		if g.full {
			// A whole pass: plain loads and stores (on AMD Zen a
			// masked store costs more than a plain one even with an
			// all-ones mask).
			if g.ctr {
				VPXORD(Mem{Base: g.src, Disp: g.groupBytes() * grp}, v, v)
			}
			VMOVDQU64(v, at)
			continue
		}
		kr := g.groupMask(grp)
		if g.ctr {
			d := g.vec()
			VMOVDQU64_Z(Mem{Base: g.src, Disp: g.groupBytes() * grp}, kr, d)
			VPXORD(d, v, v)
		}
		VMOVDQU64(v, kr, at)
	}
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
