package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
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
//
// This file holds the tier's tables (bsConsts); bs_kernel.go the kernel
// and its TEXT functions, bs_slice.go the way blocks enter and leave the
// byte-sliced form, bs2.go the two-set CTR kernel.

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
			panic(fmt.Sprintf("sm4 gen: byte-sliced round wrong for %#08x: %#08x, want %#08x", x, got, want))
		}
	}
}
