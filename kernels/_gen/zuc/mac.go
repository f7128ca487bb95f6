package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ----------------------------------------------------------------------------
// Carry-less-multiply MAC kernels (128-EIA3, ETSI/SAGE 128-EEA3 & 128-EIA3
// Document 1 §4; ZUC-256-MAC, ZUC design team 2018 §3).
//
// Both MACs XOR, for every set message bit m_i, the keystream window that
// starts at keystream bit i (bit 0 = MSB of keystream word z_1). For 64 message
// bits M_k = m_{64k} … m_{64k+63}, read as the polynomial Σ m_{64k+r}·x^r (each
// byte bit-reversed, then little-endian), and the keystream qwords
// K_k = z_{2k+1}‖z_{2k+2} (big-endian 64-bit windows at bit 64k):
//
//	⊕_{r: m_{64k+r}=1} W64(64k+r) = lo64(K_k·M_k) ⊕ hi64(K_{k+1}·M_k)
//
// where · is the 64×64→127-bit carry-less product and W64(i) the 64-bit window
// at bit i (MSB first). Summed over k, the kernels keep the accumulators
//
//	P_j = ⊕_k K_{k+j}·M_k,  j = 0 … products−1,
//
// and the Go side forms W64 sums as lo64(P0) ⊕ hi64(P1) (and a second one,
// 64 bits further, as lo64(P1) ⊕ hi64(P2) for 128-bit tags). The 32-bit
// windows of EIA3 are the upper halves of the 64-bit ones.
//
// One 16-byte block holds M_k and M_{k+1}; the keystream of block b is read
// at words 4b … 4b+1+2·products (16-byte loads at byte offsets 16b + 8j, words
// swapped into qword order with PSHUFD 0xb1). Per block that is 2·products
// carry-less multiplies. The message is public and the keystream secret:
// there are no data-dependent branches or addresses.

// macKernel is one MAC kernel: the number of accumulators and the ISA.
type macKernel struct {
	products int  // 2 (EIA3, MAC-32/64) or 3 (MAC-128)
	avx512   bool // ZMM VPCLMULQDQ + GFNI, 4 blocks per instruction
}

func (m macKernel) name() string {
	if m.avx512 {
		return fmt.Sprintf("macBlocks%dAVX512", m.products)
	}
	return fmt.Sprintf("macBlocks%dCLMUL", m.products)
}

func (m macKernel) gen() {
	name := m.name()
	TEXT(name, NOSPLIT, "func(acc *[6]uint64, msg *byte, ks *uint32, nblocks int)")
	Pragma("noescape")
	isa := "PCLMULQDQ and SSSE3"
	if m.avx512 {
		isa = "AVX-512 VPCLMULQDQ and GFNI"
	}
	Doc(fmt.Sprintf("%s adds the carry-less products of nblocks 16-byte message", name),
		fmt.Sprintf("blocks with keystream windows to the %d accumulators acc[2j], acc[2j+1] (low, high", m.products),
		"qword of P_j = ⊕ K_{k+j}·M_k), using "+isa+". It reads",
		fmt.Sprintf("msg[0:16·nblocks] and keystream words ks[0:4·nblocks+%d].", 2+2*m.products))
	accP := Load(Param("acc"), GP64())
	msg := Load(Param("msg"), GP64())
	ks := Load(Param("ks"), GP64())
	n := Load(Param("nblocks"), GP64())
	if m.avx512 {
		m.bodyAVX512(name, accP, msg, ks, n)
	} else {
		m.bodyCLMUL(name, accP, msg, ks, n)
	}
}

// bodyCLMUL: legacy-SSE encoding (PCLMULQDQ tier), one block per step,
// unrolled four times.
func (m macKernel) bodyCLMUL(name string, accP, msg, ks, n Register) {
	acc := make([]VecVirtual, m.products)
	for j := range acc {
		acc[j] = XMM()
		MOVOU(Mem{Base: accP, Disp: 16 * j}, acc[j])
	}
	nib, revLo, revHi := XMM(), XMM(), XMM()
	MOVOU(consts.Offset(cNibble), nib)
	MOVOU(consts.Offset(cRevLo), revLo)
	MOVOU(consts.Offset(cRevHi), revHi)

	block := func(disp int) {
		Commentf("Block at +%d: bit-reverse the message bytes with nibble tables.", disp)
		x, hi := XMM(), XMM()
		MOVOU(Mem{Base: msg, Disp: disp}, x)
		MOVO(x, hi)
		PSRLW(U8(4), hi)
		PAND(nib, hi)
		PAND(nib, x)
		a, b := XMM(), XMM()
		MOVO(revLo, a)
		PSHUFB(x, a) // rev(low nibble) << 4
		MOVO(revHi, b)
		PSHUFB(hi, b) // rev(high nibble)
		POR(b, a)     // a = M_k ‖ M_{k+1}
		for j := 0; j < m.products; j++ {
			k, t := XMM(), XMM()
			MOVOU(Mem{Base: ks, Disp: disp + 8*j}, k)
			PSHUFD(U8(0xb1), k, k) // K_{k+j} ‖ K_{k+1+j}
			MOVO(k, t)
			PCLMULQDQ(U8(0x00), a, t) // K_{k+j}·M_k
			PCLMULQDQ(U8(0x11), a, k) // K_{k+1+j}·M_{k+1}
			PXOR(t, acc[j])
			PXOR(k, acc[j])
		}
	}

	four, one, done := name+"_four", name+"_one", name+"_done"
	CMPQ(n, U8(4))
	JB(LabelRef(one))
	Label(four)
	for u := 0; u < 4; u++ {
		block(16 * u)
	}
	ADDQ(U8(64), msg)
	ADDQ(U8(64), ks)
	SUBQ(U8(4), n)
	CMPQ(n, U8(4))
	JAE(LabelRef(four))
	Label(one)
	TESTQ(n, n)
	JZ(LabelRef(done))
	block(0)
	ADDQ(U8(16), msg)
	ADDQ(U8(16), ks)
	DECQ(n)
	JMP(LabelRef(one))
	Label(done)
	for j := range acc {
		MOVOU(acc[j], Mem{Base: accP, Disp: 16 * j})
	}
	RET()
}

// bodyAVX512: four blocks per ZMM instruction, two ZMM steps per iteration,
// then the remaining blocks one at a time in XMM registers.
func (m macKernel) bodyAVX512(name string, accP, msg, ks, n Register) {
	acc := make([]VecVirtual, m.products)
	for j := range acc {
		acc[j] = ZMM()
		VMOVDQU64(Mem{Base: accP, Disp: 16 * j}, acc[j].AsX()) // upper lanes zeroed
	}
	rev := ZMM()
	VMOVDQU64(consts.Offset(cRevMat), rev)

	// step adds four blocks at byte offset disp (one per 128-bit lane). With
	// masks, the message bytes and keystream words past the first rem
	// blocks are neither read nor used (zero message bits contribute
	// nothing).
	step := func(disp int, mmsg, mks Op) {
		x := ZMM()
		if mmsg != nil {
			VMOVDQU8_Z(Mem{Base: msg, Disp: disp}, mmsg, x)
		} else {
			VMOVDQU64(Mem{Base: msg, Disp: disp}, x)
		}
		VGF2P8AFFINEQB(U8(0), rev, x, x) // reverse the bits of every byte
		for j := 0; j < m.products; j++ {
			k, t0, t1 := ZMM(), ZMM(), ZMM()
			if mks != nil {
				VMOVDQU32_Z(Mem{Base: ks, Disp: disp + 8*j}, mks, k)
				VPSHUFD(U8(0xb1), k, k)
			} else {
				VPSHUFD(U8(0xb1), Mem{Base: ks, Disp: disp + 8*j}, k)
			}
			VPCLMULQDQ(U8(0x00), x, k, t0)
			VPCLMULQDQ(U8(0x11), x, k, t1)
			VPTERNLOGQ(xor3, t1, t0, acc[j])
		}
	}

	eight, four, rest, fold := name+"_eight", name+"_four", name+"_rest", name+"_fold"
	CMPQ(n, U8(8))
	JB(LabelRef(four))
	Label(eight)
	Comment("Eight blocks: two ZMM steps of four blocks (one per 128-bit lane).")
	step(0, nil, nil)
	step(64, nil, nil)
	ADDQ(U32(128), msg)
	ADDQ(U32(128), ks)
	SUBQ(U8(8), n)
	CMPQ(n, U8(8))
	JAE(LabelRef(eight))
	Label(four)
	CMPQ(n, U8(4))
	JB(LabelRef(rest))
	step(0, nil, nil)
	ADDQ(U8(64), msg)
	ADDQ(U8(64), ks)
	SUBQ(U8(4), n)
	Label(rest)
	TESTQ(n, n)
	JZ(LabelRef(fold))
	Comment("One to three blocks: one masked step (16·n message bytes, the")
	Comment("4·n keystream words each block lane reads).")
	bm, wm := GP64(), GP64()
	kmsg, kks := K(), K()
	MOVQ(n, bm)
	SHLQ(U8(4), bm) // 16·n bytes
	MOVQ(I32(-1), wm)
	BZHIQ(bm, wm, wm)
	KMOVQ(wm, kmsg)
	SHRQ(U8(2), bm) // 4·n words
	MOVQ(I32(-1), wm)
	BZHIQ(bm, wm, wm)
	KMOVW(wm.As32(), kks)
	step(0, kmsg, kks)
	Label(fold)
	Comment("Fold the four 128-bit lanes of every accumulator into lane 0.")
	for j := range acc {
		y := YMM()
		VEXTRACTI64X4(U8(1), acc[j].AsZ(), y)
		VPXORQ(y, acc[j].AsY(), y)
		x := XMM()
		VEXTRACTI32X4(U8(1), y, x)
		VPXORQ(x, y.AsX(), acc[j].AsX())
	}
	for j := range acc {
		VMOVDQU64(acc[j].AsX(), Mem{Base: accP, Disp: 16 * j})
	}
	VZEROUPPER()
	RET()
}

// bitRev4 reverses the four low bits of n.
func bitRev4(n byte) byte {
	return n>>3&1 | n>>1&2 | n<<1&4 | n<<3&8
}

// genLanes emits macLanes{2,3}AVX512: the MAC accumulation of up to 16
// messages in one call (one lane after the other), each from its own
// keystream, for whole messages of any byte length: whole 64-byte steps
// while the keystream reads stay inside the lane's words, then masked
// steps (message bytes past the length and keystream words past the
// lane's words read as zero; the zero words only meet zero message bits
// or products the callers discard, as with macCore's padding). It saves
// the per-lane calls and the tail copies of macCore.
//
// Measured and not kept (Zen 5, 16 lanes × 1436 bytes): accumulating the
// MAC inside the 16-lane keystream kernel instead, from a per-lane ring of
// the last two blocks in the frame, so that no keystream buffer is needed.
// After each block's transpose it added ≈1.6 µs per call against ≈1.3 µs
// for the separate keystream buffer and MAC calls; interleaved with the
// rounds (in the two F registers per group the rounds leave free) it was
// slower still: VPCLMULQDQ competes with the rounds' rotations and GFNI
// for the same two pipes, and the rounds have no idle issue slots to give.
func (m macKernel) genLanes() {
	name := fmt.Sprintf("macLanes%dAVX512", m.products)
	TEXT(name, NOSPLIT, "func(acc *[16][6]uint64, msg *[16]*byte, nbytes *[16]int, ks *[16]*uint32, nwords *[16]int, n int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets acc[i][2j], acc[i][2j+1] (j < %d) to the low and high", name, m.products),
		"qwords of P_j = ⊕ K_{k+j}·M_k over the nbytes[i] bytes of msg[i] and the",
		"nwords[i] keystream words at ks[i], for i < n, using AVX-512 VPCLMULQDQ and GFNI;",
		"bytes and words past those lengths are not read.")
	n := Load(Param("n"), GP64())
	rev := ZMM()
	VMOVDQU64(consts.Offset(cRevMat), rev)
	lane := GP64()
	XORQ(lane, lane)
	TESTQ(n, n)
	JZ(LabelRef(name + "_end"))
	Label(name + "_lane")
	acc := make([]VecVirtual, m.products)
	for j := range acc {
		acc[j] = ZMM()
		VPXORQ(acc[j], acc[j], acc[j])
	}
	msg, ks, rb, kw := GP64(), GP64(), GP64(), GP64()
	for _, a := range []struct {
		param string
		dst   Register
	}{{"msg", msg}, {"ks", ks}, {"nbytes", rb}, {"nwords", kw}} {
		p := Load(Param(a.param), GP64())
		MOVQ(Mem{Base: p, Index: lane, Scale: 8}, a.dst)
	}

	step := func(mmsg Op, mks []Op) {
		x := ZMM()
		if mmsg != nil {
			VMOVDQU8_Z(Mem{Base: msg}, mmsg, x)
		} else {
			VMOVDQU64(Mem{Base: msg}, x)
		}
		VGF2P8AFFINEQB(U8(0), rev, x, x)
		for j := 0; j < m.products; j++ {
			k, t0, t1 := ZMM(), ZMM(), ZMM()
			if mks != nil {
				VMOVDQU32_Z(Mem{Base: ks, Disp: 8 * j}, mks[j], k)
				VPSHUFD(U8(0xb1), k, k)
			} else {
				VPSHUFD(U8(0xb1), Mem{Base: ks, Disp: 8 * j}, k)
			}
			VPCLMULQDQ(U8(0x00), x, k, t0)
			VPCLMULQDQ(U8(0x11), x, k, t1)
			VPTERNLOGQ(xor3, t1, t0, acc[j])
		}
	}
	full, tail, fold := name+"_full", name+"_tail", name+"_fold"
	Label(full)
	CMPQ(rb, U8(64))
	JB(LabelRef(tail))
	CMPQ(kw, U8(16+2*m.products))
	JL(LabelRef(tail))
	step(nil, nil)
	ADDQ(U8(64), msg)
	ADDQ(U8(64), ks)
	SUBQ(U8(64), rb)
	SUBQ(U8(16), kw)
	JMP(LabelRef(full))
	Label(tail)
	TESTQ(rb, rb)
	JZ(LabelRef(fold))
	Comment("Masked step: min(rb, 64) message bytes, the keystream words left.")
	{
		// BZHI reads the low 8 bits of its count: counts are clamped
		// to [0, 64] first (64 leaves all bits set).
		ones, t, zero, sixtyFour := GP64(), GP64(), GP64(), GP64()
		XORQ(zero, zero)
		MOVQ(I32(-1), ones)
		MOVQ(U32(64), sixtyFour)
		kmsg := K()
		b := GP64()
		MOVQ(rb, b)
		CMPQ(b, sixtyFour)
		CMOVQGT(sixtyFour, b)
		MOVQ(ones, t)
		BZHIQ(b, t, t)
		KMOVQ(t, kmsg)
		var kks []Op
		for j := 0; j < m.products; j++ {
			c := GP64()
			MOVQ(kw, c)
			SUBQ(U8(2*j), c)
			CMOVQLT(zero, c) // no words left: empty mask
			CMPQ(c, sixtyFour)
			CMOVQGT(sixtyFour, c)
			MOVQ(ones, t)
			BZHIQ(c, t, t) // c ≥ 16 leaves the 16 mask bits set
			kj := K()
			KMOVW(t.As32(), kj)
			kks = append(kks, kj)
		}
		step(kmsg, kks)
	}
	ADDQ(U8(64), msg)
	ADDQ(U8(64), ks)
	SUBQ(U8(16), kw)
	SUBQ(U8(64), rb)
	JG(LabelRef(tail))
	Label(fold)
	Comment("Fold the four 128-bit lanes of every accumulator into acc[lane].")
	off := GP64()
	IMUL3Q(U32(48), lane, off)
	accP := Load(Param("acc"), GP64())
	for j := range acc {
		y := YMM()
		VEXTRACTI64X4(U8(1), acc[j].AsZ(), y)
		VPXORQ(y, acc[j].AsY(), y)
		x := XMM()
		VEXTRACTI32X4(U8(1), y, x)
		VPXORQ(x, y.AsX(), x)
		VMOVDQU64(x, Mem{Base: accP, Index: off, Scale: 1, Disp: 16 * j})
	}
	INCQ(lane)
	CMPQ(lane, Load(Param("n"), GP64()))
	JB(LabelRef(name + "_lane"))
	Label(name + "_end")
	VZEROUPPER()
	RET()
}
