package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The kernels on ZMM registers, 512 blocks per pass (layout: main.go).
// The rounds use the fused S-box program (fuse.go) and VPTERNLOGD for the
// three-way XORs; round-key masks are dwords (keyMasks), read with
// embedded broadcast. The frame is aligned to 64 bytes so no plane access
// splits a cache line.

const (
	batch512Bytes = 8192
	plane512Bytes = 64
)

// zframe is the AVX-512 kernels' stack frame, addressed from a 64-byte
// aligned base register: key masks (4096 bytes), state planes and scratch
// (8192 each: S-box outputs B, spill slots).
type zframe struct{ km, st, tmp Mem }

func (f zframe) row(base Mem, m int) Mem { return base.Offset(plane512Bytes * m) }
func (f zframe) bpl(b int) Mem           { return f.tmp.Offset(plane512Bytes * b) }
func (f zframe) slot(i int) Mem          { return f.tmp.Offset(4096 + plane512Bytes*i) }

func newZFrame(base GPPhysical) zframe {
	local := AllocLocal(4096 + 2*batch512Bytes + 64)
	LEAQ(local, base)
	ADDQ(U8(63), base)
	ANDQ(I8(-64), base)
	b := Mem{Base: base}
	return zframe{km: b, st: b.Offset(4096), tmp: b.Offset(4096 + batch512Bytes)}
}

var (
	immXor3 = ternImm(func(a, b, c bool) bool { return a != b != c })
	immMaj  = ternImm(func(a, b, c bool) bool { return a && b || a && c || b && c })
	// immSwap is (a ⊕ b) ∧ c: the SWAPMOVE difference under the mask c.
	immSwap = ternImm(func(a, b, c bool) bool { return a != b && c })
)

// bitTranspose512 is F2 on ZMM (SWAPMOVE with the XOR and mask fused).
func (g *gen) bitTranspose512(in, out func(m int) Mem, src func(p int) int) {
	VPBROADCASTD(g.c.m55, Z29)
	VPBROADCASTD(g.c.m33, Z30)
	VPBROADCASTD(g.c.m0f, Z31)
	masks := map[int]VecPhysical{1: Z29, 2: Z30, 4: Z31}
	for p := 0; p < 16; p++ {
		for r := 0; r < 8; r++ {
			VMOVDQU64(in(16*r+src(p)), zmm[r])
		}
		for _, s := range []int{1, 2, 4} {
			n := 0
			for a := 0; a < 8; a++ {
				if a&s != 0 {
					continue
				}
				b := a + s
				t := zmm[8+n]
				n++
				VPSRLW(U8(s), zmm[a], t)
				VPTERNLOGD(U8(immSwap), masks[s], zmm[b], t)
				VPXORD(t, zmm[b], zmm[b])
				VPSLLW(U8(s), t, t)
				VPXORD(t, zmm[a], zmm[a])
			}
		}
		for r := 0; r < 8; r++ {
			VMOVDQU64(zmm[r], out(16*r+p))
		}
	}
}

// rounds512 emits the 32 rounds on the ZMM state planes.
func (g *gen) rounds512(f zframe, name string, kp, cnt GPPhysical) {
	Comment("32 rounds: four unrolled (the word slots rotate), eight times.")
	LEAQ(f.km, kp)
	MOVQ(U32(8), cnt)
	Label(name + "_rounds")
	st := func(m int) Mem { return f.row(f.st, m) }
	for j4 := 0; j4 < 4; j4++ {
		x0, x1, x2, x3 := j4, (j4+1)%4, (j4+2)%4, (j4+3)%4
		for byt := 0; byt < 4; byt++ {
			e := newZEmitter(g.tp, f.slot, spillSlots)
			e.emit(func(i int, y, tmp VecPhysical) {
				b := 24 - 8*byt + i
				VMOVDQU64(st(wordRow(x1, b)), y)
				VMOVDQU64(st(wordRow(x2, b)), tmp)
				VPTERNLOGD(U8(immXor3), st(wordRow(x3, b)), tmp, y)
				VPXORD_BCST(Mem{Base: kp, Disp: 128*j4 + 4*b}, y, y)
			}, func(i int) Mem { return f.bpl(24 - 8*byt + i) })
			if j4 == 0 && byt == 0 {
				g.stats = append(g.stats, e.String())
			}
		}
		// L by plane renaming: X0 ^= B ⊕ B<<<2 ⊕ B<<<10 ⊕ B<<<18 ⊕ B<<<24,
		// two VPTERNLOGD and a VPXORD a plane.
		for b := 0; b < 32; b += 16 {
			for t := 0; t < 16; t++ {
				VMOVDQU64(st(wordRow(x0, b+t)), zmm[t])
				VMOVDQU64(f.bpl(b+t), zmm[16+t])
				VPTERNLOGD(U8(immXor3), f.bpl((b+t-2)&31), zmm[16+t], zmm[t])
				VMOVDQU64(f.bpl((b+t-10)&31), zmm[16+t])
				VPTERNLOGD(U8(immXor3), f.bpl((b+t-18)&31), zmm[16+t], zmm[t])
				VPXORD(f.bpl((b+t-24)&31), zmm[t], zmm[t])
				VMOVDQU64(zmm[t], st(wordRow(x0, b+t)))
			}
		}
	}
	ADDQ(U32(512), kp)
	DECQ(cnt)
	JNZ(LabelRef(name + "_rounds"))
}

// f1Regs is F1 with all four levels in registers: a group of 16 rows
// fits in Z0–Z15, each level writes the other bank of 16, so every row is
// loaded and stored once.
func f1Regs(in func(m int) Mem, post func(y VecPhysical, m int)) {
	for g := 0; g < 8; g++ {
		for k := 0; k < 16; k++ {
			VMOVDQU64(in(16*g+k), zmm[k])
		}
		src, dst := zmm[:16], zmm[16:]
		for level := 0; level < 4; level++ {
			for k := 0; k < 8; k++ {
				VPUNPCKLBW(src[k+8], src[k], dst[2*k])
				VPUNPCKHBW(src[k+8], src[k], dst[2*k+1])
			}
			src, dst = dst, src
		}
		for k := 0; k < 16; k++ {
			post(src[k], 16*g+k)
		}
	}
}

// inputTranspose512 is F1 (straight from src) then F2.
func (g *gen) inputTranspose512(f zframe, src GPPhysical, dst zframe) {
	st := func(m int) Mem { return f.row(f.st, m) }
	f1Regs(func(m int) Mem { return Mem{Base: src, Disp: plane512Bytes * m} }, func(y VecPhysical, m int) { VMOVDQU64(y, st(m)) })
	g.bitTranspose512(st, st, func(p int) int { return p })
}

// outputTranspose512 is F2 (with the output word reversal) then F1.
func (g *gen) outputTranspose512(f zframe, dst, src GPPhysical, xorSrc bool) {
	Comment("Planes back to blocks: F2 with the output word reversal, then F1.")
	st := func(m int) Mem { return f.row(f.st, m) }
	tmp := func(m int) Mem { return f.row(f.tmp, m) }
	g.bitTranspose512(st, tmp, func(p int) int { return 4*(3-p/4) + p%4 })
	f1Regs(tmp, func(y VecPhysical, m int) {
		if xorSrc {
			VPXORD(Mem{Base: src, Disp: plane512Bytes * m}, y, y)
		}
		VMOVDQU64(y, Mem{Base: dst, Disp: plane512Bytes * m})
	})
}

func (g *gen) encryptBlocks512() {
	TEXT("encryptBlocksBitsliced", 0, "func(rk *[32]uint32, dst, src *byte, nblocks int)")
	Doc("encryptBlocksBitsliced encrypts nblocks blocks (a multiple of 512) from src to dst with SM4 (GB/T 32907-2016 §7.1) under round keys rk, bitsliced on AVX-512 (F, BW).")
	Pragma("noescape")
	Load(Param("rk"), RSI)
	Load(Param("dst"), R8)
	Load(Param("src"), R9)
	Load(Param("nblocks"), R10)
	f := newZFrame(RBX)
	SHRQ(U8(9), R10)
	JZ(LabelRef("enc512_done"))
	g.keyMasks(f.km, RSI)
	Label("enc512_batch")
	Comment("Blocks to planes: F1 (first level straight from src), then F2.")
	g.inputTranspose512(f, R9, f)
	g.rounds512(f, "enc512", R13, R12)
	g.outputTranspose512(f, R8, R9, false)
	ADDQ(U32(batch512Bytes), R8)
	ADDQ(U32(batch512Bytes), R9)
	DECQ(R10)
	JNZ(LabelRef("enc512_batch"))
	wipeKeyMasks(f)
	Label("enc512_done")
	VZEROUPPER()
	RET()
}

func (g *gen) xorKeyStream512() {
	TEXT("xorKeyStreamBitsliced", 0, "func(rk *[32]uint32, ctr *[16]byte, dst, src *byte, nblocks int)")
	Doc("xorKeyStreamBitsliced XORs nblocks blocks (a multiple of 512) of src with the SM4 keystream of the counter blocks ctr, inc32(ctr), … (NIST SP 800-38D §6.2, §6.5) into dst, bitsliced on AVX-512 (F, BW). ctr is not updated.")
	Pragma("noescape")
	Load(Param("rk"), RSI)
	Load(Param("ctr"), R11)
	Load(Param("dst"), R8)
	Load(Param("src"), R9)
	Load(Param("nblocks"), R10)
	f := newZFrame(RBX)
	SHRQ(U8(9), R10)
	JZ(LabelRef("ctr512_done"))
	g.keyMasks(f.km, RSI)
	MOVL(Mem{Base: R11, Disp: 12}, ECX)
	BSWAPL(ECX)
	Label("ctr512_batch")
	Comment("Counter planes: words 0..2 are broadcast bits; word 3 is the")
	Comment("bitsliced sum of the counter and the block index (mod 2^32).")
	st := func(m int) Mem { return f.row(f.st, m) }
	for w := 0; w < 3; w++ {
		MOVL(Mem{Base: R11, Disp: 4 * w}, EAX)
		BSWAPL(EAX)
		VMOVD(EAX, X0)
		VPBROADCASTD(X0, Z0)
		for b := 0; b < 32; b++ {
			VPSLLD(U8(31-b), Z0, Z1)
			VPSRAD(U8(31), Z1, Z1)
			VMOVDQU64(Z1, st(wordRow(w, b)))
		}
	}
	VMOVD(ECX, X0)
	VPBROADCASTD(X0, Z0)
	// Z1 carry, Z2 counter bit, Z3 index bit, Z4 sum.
	for k := 0; k < 32; k++ {
		VPSLLD(U8(31-k), Z0, Z2)
		VPSRAD(U8(31), Z2, Z2)
		switch {
		case k == 0:
			VMOVDQU64(g.idx512, Z3)
			VPANDD(Z3, Z2, Z1)
			VPXORD(Z3, Z2, Z4)
		case k < 9:
			VMOVDQU64(g.idx512.Offset(64*k), Z3)
			VMOVDQA64(Z1, Z4)
			VPTERNLOGD(U8(immXor3), Z3, Z2, Z4)
			VPTERNLOGD(U8(immMaj), Z3, Z2, Z1)
		default:
			VPXORD(Z1, Z2, Z4)
			if k < 31 {
				VPANDD(Z2, Z1, Z1)
			}
		}
		VMOVDQU64(Z4, st(wordRow(3, k)))
	}
	g.rounds512(f, "ctr512", R13, R12)
	g.outputTranspose512(f, R8, R9, true)
	ADDL(U32(512), ECX)
	ADDQ(U32(batch512Bytes), R8)
	ADDQ(U32(batch512Bytes), R9)
	DECQ(R10)
	JNZ(LabelRef("ctr512_batch"))
	wipeKeyMasks(f)
	Label("ctr512_done")
	VZEROUPPER()
	RET()
}

// transposeHook512 is the layout test hook of the AVX-512 kernels.
func (g *gen) transposeHook512() {
	TEXT("transposeBitsliced", 0, "func(dst, src *byte)")
	Doc("transposeBitsliced writes the 128 bit planes (64 bytes each) of the 512 blocks at src to dst (row 16r+p = bit r of byte p; block 64g+4j+L at plane bit 128L+8j+g). Test hook for the layout.")
	Pragma("noescape")
	Load(Param("dst"), R8)
	Load(Param("src"), R9)
	f := newZFrame(RBX)
	g.inputTranspose512(f, R9, f)
	for m := 0; m < 128; m++ {
		VMOVDQU64(f.row(f.st, m), Z0)
		VMOVDQU64(Z0, Mem{Base: R8, Disp: plane512Bytes * m})
	}
	VZEROUPPER()
	RET()
}

// emitIndex512 emits the 9 index planes of the AVX-512 counter: bit k of
// the block index at each plane position.
func (g *gen) emitIndex512() {
	g.idx512 = GLOBL("sm4BitIndexPlanes", RODATA|NOPTR)
	for k := 0; k < 9; k++ {
		for byt := 0; byt < 64; byt++ {
			var v byte
			for t := 0; t < 8; t++ {
				q := 8*byt + t
				i := 64*(q&7) + 4*((q>>3)&15) + (q >> 7)
				v |= byte(i>>k&1) << t
			}
			DATA(64*k+byt, U8(v))
		}
	}
}

// wipeKeyMasks zeroes the round-key masks in the frame (4096 bytes,
// derived from the round keys) before the kernel returns, so that no key
// material stays behind in the stack memory Go reuses.
func wipeKeyMasks(f zframe) {
	Comment("Wipe the round-key masks.")
	VPXORD(Z0, Z0, Z0)
	for i := 0; i < 4096/plane512Bytes; i++ {
		VMOVDQU64(Z0, f.km.Offset(plane512Bytes*i))
	}
}
