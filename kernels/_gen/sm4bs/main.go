// Command sm4bs generates gmtun's bitsliced SM4 kernel (GB/T 32907-2016)
// for AVX2: 256 blocks per batch, one YMM-wide bit plane per state bit.
//
// Layout. A batch is 4096 bytes = 128 rows of 32 bytes (row m holds blocks
// 2m and 2m+1 in its two 128-bit lanes). The forward transpose is
//
//	F1: in each group of 16 rows (g = m>>4) and each lane, a 16×16 byte
//	    transpose (four levels of VPUNPCK{L,H}BW; each level rotates the
//	    8-bit address row‖column by one, so four levels transpose);
//	F2: for each byte position p, an 8×8 bit transpose across the 8 rows
//	    16g+p (three SWAPMOVE levels with shifts 1, 2, 4).
//
// Afterwards row 16r+p is the bit plane of bit r of block byte p, and block
// i = 32g + 2j + L sits at plane bit 128L + 8j + g. Both steps are
// involutions, so the inverse is F2 then F1 with the same code; the output
// F2 also reverses the word order R(X32..X35) of GB/T 32907-2016 §7.1.
//
// Round (§6.1, §7.1): X_{i+4} = X_i ⊕ L(τ(X_{i+1} ⊕ X_{i+2} ⊕ X_{i+3} ⊕ rk_i))
// on planes: the key bits are broadcast masks precomputed per call, τ is the
// boolean circuit of sbox.go (tower-field inversion between two linear
// layers, verified exhaustively), and L(B) = B ⊕ B<<<2 ⊕ B<<<10 ⊕ B<<<18 ⊕
// B<<<24 is plane renaming: with U = B ⊕ B<<<8, L(B) = U<<<2 ⊕ U<<<24 ⊕
// B<<<18. The words rotate roles, so four rounds are unrolled and looped
// eight times. The S-box constants are folded into the round-key masks
// (keyFolds). CTR builds the counter planes directly (bitsliced 32-bit
// add of the block index), so only the output needs a transpose.
//
// Everything is straight-line or counted by public lengths: constant time.
//
// Run: go run ./sm4bs -out ../sm4bs/sm4bs_amd64.s -stubs ../sm4bs/stubs_amd64.go -pkg sm4bs
package main

import (
	"flag"
	"fmt"
	"math/bits"
	"os"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const (
	batchBytes = 4096
	planeBytes = 32
)

// planeRow is the row holding bit r (0 = least significant) of block byte p.
func planeRow(p, r int) int { return 16*r + p }

// wordRow is the row of bit b (0 = least significant) of big-endian word w.
func wordRow(w, b int) int { return planeRow(4*w+3-b/8, b%8) }

// linL is SM4's linear transform L (GB/T 32907-2016 §6.2.2).
func linL(b uint32) uint32 {
	return b ^ bits.RotateLeft32(b, 2) ^ bits.RotateLeft32(b, 10) ^ bits.RotateLeft32(b, 18) ^ bits.RotateLeft32(b, 24)
}

// keyFolds returns the 32 constants XORed into the round keys. With the
// S-box written τ(x) = s0(x ⊕ d) ⊕ e, the kernel stores Y_m = X_m ⊕ D_m
// where D_m = L(eeee) when ⌊m/4⌋ is odd and 0 otherwise (D_{m+4} = D_m ⊕
// L(eeee), D_0..D_3 = 0), so round j uses rk_j ⊕ dddd ⊕ D_{j+1} ⊕ D_{j+2} ⊕
// D_{j+3}. D_32..D_35 = 0: the output needs no correction.
func keyFolds(sf sboxForm) [32]uint32 {
	rep := func(b byte) uint32 { return uint32(b) * 0x01010101 }
	le := linL(rep(sf.e))
	dm := func(m int) uint32 {
		if m/4%2 == 1 {
			return le
		}
		return 0
	}
	var f [32]uint32
	for j := range f {
		f[j] = rep(sf.d) ^ dm(j+1) ^ dm(j+2) ^ dm(j+3)
	}
	return f
}

// checkModel runs the whole plane-level algorithm (S-box program, folds,
// L by plane renaming) in Go on 64 blocks against a table-based SM4 and
// panics on a mismatch, so a wrong emitter design fails before emission.
func checkModel(sf sboxForm, p circuit) {
	rk := [32]uint32{}
	x := uint32(0x9e3779b9)
	for i := range rk {
		x = x*1664525 + 1013904223
		rk[i] = x
	}
	var blocks [64][4]uint32
	for i := range blocks {
		for w := range blocks[i] {
			x = x*1664525 + 1013904223
			blocks[i][w] = x
		}
	}
	folds := keyFolds(sf)
	// planes[s][b]: bit b of word slot s over 64 blocks.
	var planes [4][32]uint64
	for i, blk := range blocks {
		for w := 0; w < 4; w++ {
			for b := 0; b < 32; b++ {
				planes[w][b] |= uint64(blk[w]>>b&1) << i
			}
		}
	}
	for j := 0; j < 32; j++ {
		s0 := j % 4
		var bpl [32]uint64
		k := rk[j] ^ folds[j]
		for byt := 0; byt < 4; byt++ {
			var in [8]uint64
			for i := 0; i < 8; i++ {
				b := 24 - 8*byt + i
				in[i] = planes[(j+1)%4][b] ^ planes[(j+2)%4][b] ^ planes[(j+3)%4][b] ^ -uint64(k>>b&1)
			}
			out := p.eval(in)
			for i := 0; i < 8; i++ {
				bpl[24-8*byt+i] = out[i]
			}
		}
		var u [32]uint64
		for b := 0; b < 32; b++ {
			u[b] = bpl[b] ^ bpl[(b-8)&31]
		}
		for b := 0; b < 32; b++ {
			planes[s0][b] ^= u[(b-2)&31] ^ u[(b-24)&31] ^ bpl[(b-18)&31]
		}
	}
	for i, blk := range blocks {
		want := refEncrypt(rk, blk)
		for w := 0; w < 4; w++ {
			var got uint32
			for b := 0; b < 32; b++ {
				got |= uint32(planes[3-w][b]>>i&1) << b
			}
			if got != want[w] {
				panic(fmt.Sprintf("sm4bs gen: plane model wrong for block %d word %d", i, w))
			}
		}
	}
}

// refEncrypt is table-based SM4 encryption (§7.1) for checkModel.
func refEncrypt(rk [32]uint32, x [4]uint32) [4]uint32 {
	var st [36]uint32
	copy(st[:], x[:])
	for j := 0; j < 32; j++ {
		t := st[j+1] ^ st[j+2] ^ st[j+3] ^ rk[j]
		var b uint32
		for k := 0; k < 4; k++ {
			b |= uint32(sm4SBox[byte(t>>(8*k))]) << (8 * k)
		}
		st[j+4] = st[j] ^ linL(b)
	}
	return [4]uint32{st[35], st[34], st[33], st[32]}
}

type consts struct {
	shifts Mem // VPSLLVD counts 31-b for b = 0..31 (four YMMs)
	m55    Mem // SWAPMOVE masks, 32 bytes each
	m33    Mem
	m0f    Mem
	idx    Mem // 8 planes: bit k of the block index at each plane position
}

func emitConsts() consts {
	var c consts
	c.shifts = GLOBL("sm4bsShifts", RODATA|NOPTR)
	for b := 0; b < 32; b++ {
		DATA(4*b, U32(uint32(31-b)))
	}
	rep := func(name string, v byte) Mem {
		m := GLOBL(name, RODATA|NOPTR)
		for i := 0; i < 32; i++ {
			DATA(i, U8(v))
		}
		return m
	}
	c.m55 = rep("sm4bsMask55", 0x55)
	c.m33 = rep("sm4bsMask33", 0x33)
	c.m0f = rep("sm4bsMask0f", 0x0f)
	c.idx = GLOBL("sm4bsIndexPlanes", RODATA|NOPTR)
	for k := 0; k < 8; k++ {
		for byt := 0; byt < 32; byt++ {
			var v byte
			for t := 0; t < 8; t++ {
				q := 8*byt + t
				i := 32*(q&7) + 2*((q>>3)&15) + (q >> 7)
				v |= byte(i>>k&1) << t
			}
			DATA(32*k+byt, U8(v))
		}
	}
	return c
}

// frame is the kernel's stack frame: round-key masks, the state planes,
// and a scratch area (transpose ping-pong buffer; during the rounds the
// S-box output planes B, U = B ⊕ B<<<8 and spill slots).
type frame struct {
	km, st, tmp Mem
}

func (f frame) row(base Mem, m int) Mem { return base.Offset(planeBytes * m) }
func (f frame) bpl(b int) Mem           { return f.tmp.Offset(planeBytes * b) }
func (f frame) upl(b int) Mem           { return f.tmp.Offset(1024 + planeBytes*b) }
func (f frame) slot(i int) Mem          { return f.tmp.Offset(2048 + planeBytes*i) }

const spillSlots = 64

// gen holds what the kernel bodies share.
type gen struct {
	c     consts
	sf    sboxForm
	p     *program
	folds [32]uint32
	stats []string

	tp     *tprogram // the fused S-box program of the AVX-512 kernels
	idx512 Mem
}

// keyMasks expands rk ⊕ fold into 32×32 broadcastable dword masks: mask
// (j, b) at km + 128j + 4b is all ones iff bit b of rk_j ⊕ fold_j is set.
func (g *gen) keyMasks(f frame, rk GPPhysical) {
	Comment("Round-key bit masks, with the S-box constants folded in.")
	for j := 0; j < 32; j++ {
		MOVL(Mem{Base: rk, Disp: 4 * j}, EAX)
		XORL(U32(g.folds[j]), EAX)
		VMOVD(EAX, X0)
		VPBROADCASTD(X0, Y0)
		for q := 0; q < 4; q++ {
			VPSLLVD(g.c.shifts.Offset(32*q), Y0, Y1)
			VPSRAD(U8(31), Y1, Y1)
			VMOVDQU(Y1, f.km.Offset(128*j+32*q))
		}
	}
}

// unpackLevel runs one VPUNPCK{L,H}BW level of F1 on all 8 groups: rows
// 16g+k and 16g+k+8 of in give rows 16g+2k (low halves interleaved) and
// 16g+2k+1 (high halves) of out. post, if set, finishes an output row
// (XOR with the source and store) instead of a plain store.
func unpackLevel(in, out func(m int) Mem, post func(y VecPhysical, m int)) {
	for g := 0; g < 8; g++ {
		for k := 0; k < 8; k += 4 {
			for t := 0; t < 4; t++ {
				VMOVDQU(in(16*g+k+t), ymm[2*t])
			}
			for t := 0; t < 4; t++ {
				VPUNPCKHBW(in(16*g+k+t+8), ymm[2*t], ymm[2*t+1])
				VPUNPCKLBW(in(16*g+k+t+8), ymm[2*t], ymm[2*t])
			}
			for t := 0; t < 4; t++ {
				for h := 0; h < 2; h++ {
					m := 16*g + 2*(k+t) + h
					if post != nil {
						post(ymm[2*t+h], m)
					} else {
						VMOVDQU(ymm[2*t+h], out(m))
					}
				}
			}
		}
	}
}

// bitTranspose runs F2: for each output byte position p, the rows
// 16g+src(p) (g = 0..7) of in are bit-transposed into rows 16r+p of out.
func (g *gen) bitTranspose(in, out func(m int) Mem, src func(p int) int) {
	VMOVDQU(g.c.m55, Y13)
	VMOVDQU(g.c.m33, Y14)
	VMOVDQU(g.c.m0f, Y15)
	masks := map[int]VecPhysical{1: Y13, 2: Y14, 4: Y15}
	for p := 0; p < 16; p++ {
		for r := 0; r < 8; r++ {
			VMOVDQU(in(16*r+src(p)), ymm[r])
		}
		for _, s := range []int{1, 2, 4} {
			for a := 0; a < 8; a++ {
				if a&s != 0 {
					continue
				}
				b := a + s
				t := ymm[8+(a%2)]
				VPSRLW(U8(s), ymm[a], t)
				VPXOR(ymm[b], t, t)
				VPAND(masks[s], t, t)
				VPXOR(t, ymm[b], ymm[b])
				VPSLLW(U8(s), t, t)
				VPXOR(t, ymm[a], ymm[a])
			}
		}
		for r := 0; r < 8; r++ {
			VMOVDQU(ymm[r], out(16*r+p))
		}
	}
}

// rounds emits the 32 rounds on the state planes (4 unrolled, looped 8
// times); kp walks the key masks.
func (g *gen) rounds(f frame, name string, kp, cnt GPPhysical) {
	Comment("32 rounds: four unrolled (the word slots rotate), eight times.")
	LEAQ(f.km, kp)
	MOVQ(U32(8), cnt)
	Label(name + "_rounds")
	for j4 := 0; j4 < 4; j4++ {
		x0, x1, x2, x3 := j4, (j4+1)%4, (j4+2)%4, (j4+3)%4
		for byt := 0; byt < 4; byt++ {
			e := newSBoxEmitter(g.p, f.slot, spillSlots)
			e.emit(func(i int, y, tmp VecPhysical) {
				b := 24 - 8*byt + i
				VMOVDQU(f.row(f.st, wordRow(x1, b)), y)
				VPXOR(f.row(f.st, wordRow(x2, b)), y, y)
				VPXOR(f.row(f.st, wordRow(x3, b)), y, y)
				VPBROADCASTD(Mem{Base: kp, Disp: 128*j4 + 4*b}, tmp)
				VPXOR(tmp, y, y)
			}, func(i int) Mem { return f.bpl(24 - 8*byt + i) })
			if j4 == 0 && byt == 0 {
				g.stats = append(g.stats, e.String())
			}
		}
		// L by plane renaming: U = B ⊕ B<<<8, X0 ^= U<<<2 ⊕ U<<<24 ⊕ B<<<18.
		for b := 0; b < 32; b += 8 {
			for t := 0; t < 8; t++ {
				VMOVDQU(f.bpl(b+t), ymm[t])
				VPXOR(f.bpl((b+t-8)&31), ymm[t], ymm[t])
				VMOVDQU(ymm[t], f.upl(b+t))
			}
		}
		for b := 0; b < 32; b += 8 {
			for t := 0; t < 8; t++ {
				VMOVDQU(f.row(f.st, wordRow(x0, b+t)), ymm[t])
				VPXOR(f.upl((b+t-2)&31), ymm[t], ymm[t])
				VPXOR(f.upl((b+t-24)&31), ymm[t], ymm[t])
				VPXOR(f.bpl((b+t-18)&31), ymm[t], ymm[t])
				VMOVDQU(ymm[t], f.row(f.st, wordRow(x0, b+t)))
			}
		}
	}
	ADDQ(U32(512), kp)
	DECQ(cnt)
	JNZ(LabelRef(name + "_rounds"))
}

func (g *gen) newFrame() frame {
	return frame{km: AllocLocal(4096), st: AllocLocal(batchBytes), tmp: AllocLocal(batchBytes)}
}

// outputTranspose is F2 (with the word reversal) then F1 from the state to
// dst; with xorSrc the keystream is XORed with src on the way out.
func (g *gen) outputTranspose(f frame, dst, src GPPhysical, xorSrc bool) {
	Comment("Planes back to blocks: F2 with the output word reversal, then F1.")
	st := func(m int) Mem { return f.row(f.st, m) }
	tmp := func(m int) Mem { return f.row(f.tmp, m) }
	g.bitTranspose(st, tmp, func(p int) int { return 4*(3-p/4) + p%4 })
	unpackLevel(tmp, st, nil)
	unpackLevel(st, tmp, nil)
	unpackLevel(tmp, st, nil)
	unpackLevel(st, nil, func(y VecPhysical, m int) {
		if xorSrc {
			VPXOR(Mem{Base: src, Disp: planeBytes * m}, y, y)
		}
		VMOVDQU(y, Mem{Base: dst, Disp: planeBytes * m})
	})
}

func (g *gen) encryptBlocks() {
	TEXT("encryptBlocksAVX2", 0, "func(rk *[32]uint32, dst, src *byte, nblocks int)")
	Doc("encryptBlocksAVX2 encrypts nblocks blocks (a multiple of 256) from src to dst with SM4 (GB/T 32907-2016 §7.1) under round keys rk, bitsliced on AVX2.")
	Pragma("noescape")
	f := g.newFrame()
	Load(Param("rk"), RSI)
	Load(Param("dst"), R8)
	Load(Param("src"), R9)
	Load(Param("nblocks"), R10)
	SHRQ(U8(8), R10)
	JZ(LabelRef("enc_done"))
	g.keyMasks(f, RSI)
	Label("enc_batch")
	Comment("Blocks to planes: F1 (first level straight from src), then F2.")
	st := func(m int) Mem { return f.row(f.st, m) }
	tmp := func(m int) Mem { return f.row(f.tmp, m) }
	unpackLevel(func(m int) Mem { return Mem{Base: R9, Disp: planeBytes * m} }, tmp, nil)
	unpackLevel(tmp, st, nil)
	unpackLevel(st, tmp, nil)
	unpackLevel(tmp, st, nil)
	g.bitTranspose(st, st, func(p int) int { return p })
	g.rounds(f, "enc", R13, R12)
	g.outputTranspose(f, R8, R9, false)
	ADDQ(U32(batchBytes), R8)
	ADDQ(U32(batchBytes), R9)
	DECQ(R10)
	JNZ(LabelRef("enc_batch"))
	Label("enc_done")
	VZEROUPPER()
	RET()
}

func (g *gen) xorKeyStream() {
	TEXT("xorKeyStreamAVX2", 0, "func(rk *[32]uint32, ctr *[16]byte, dst, src *byte, nblocks int)")
	Doc("xorKeyStreamAVX2 XORs nblocks blocks (a multiple of 256) of src with the SM4 keystream of the counter blocks ctr, inc32(ctr), … (NIST SP 800-38D §6.2, §6.5) into dst, bitsliced on AVX2. ctr is not updated.")
	Pragma("noescape")
	f := g.newFrame()
	Load(Param("rk"), RSI)
	Load(Param("ctr"), R11)
	Load(Param("dst"), R8)
	Load(Param("src"), R9)
	Load(Param("nblocks"), R10)
	SHRQ(U8(8), R10)
	JZ(LabelRef("ctr_done"))
	g.keyMasks(f, RSI)
	MOVL(Mem{Base: R11, Disp: 12}, ECX)
	BSWAPL(ECX)
	Label("ctr_batch")
	Comment("Counter planes: words 0..2 are broadcast bits; word 3 is the")
	Comment("bitsliced sum of the counter and the block index (mod 2^32).")
	for w := 0; w < 3; w++ {
		MOVL(Mem{Base: R11, Disp: 4 * w}, EAX)
		BSWAPL(EAX)
		VMOVD(EAX, X0)
		VPBROADCASTD(X0, Y0)
		for b := 0; b < 32; b++ {
			VPSLLD(U8(31-b), Y0, Y1)
			VPSRAD(U8(31), Y1, Y1)
			VMOVDQU(Y1, f.row(f.st, wordRow(w, b)))
		}
	}
	VMOVD(ECX, X0)
	VPBROADCASTD(X0, Y0)
	// Y1 carry, Y2 counter bit, Y3 index bit, Y4/Y5 temporaries.
	for k := 0; k < 32; k++ {
		VPSLLD(U8(31-k), Y0, Y2)
		VPSRAD(U8(31), Y2, Y2)
		switch {
		case k == 0:
			VMOVDQU(g.c.idx, Y3)
			VPAND(Y3, Y2, Y1)
			VPXOR(Y3, Y2, Y4)
		case k < 8:
			VMOVDQU(g.c.idx.Offset(32*k), Y3)
			VPXOR(Y3, Y2, Y5)
			VPXOR(Y5, Y1, Y4)
			VPAND(Y3, Y2, Y3)
			VPAND(Y5, Y1, Y5)
			VPOR(Y5, Y3, Y1)
		default:
			VPXOR(Y1, Y2, Y4)
			if k < 31 {
				VPAND(Y2, Y1, Y1)
			}
		}
		VMOVDQU(Y4, f.row(f.st, wordRow(3, k)))
	}
	g.rounds(f, "ctr", R13, R12)
	g.outputTranspose(f, R8, R9, true)
	ADDL(U32(256), ECX)
	ADDQ(U32(batchBytes), R8)
	ADDQ(U32(batchBytes), R9)
	DECQ(R10)
	JNZ(LabelRef("ctr_batch"))
	Label("ctr_done")
	VZEROUPPER()
	RET()
}

// transposeHook emits a test hook: F1 then F2 of one batch, so the package
// tests can check the documented plane layout directly.
func (g *gen) transposeHook() {
	TEXT("transposeAVX2", 0, "func(dst, src *byte)")
	Doc("transposeAVX2 writes the 128 bit planes of the 256 blocks at src to dst (row 16r+p = bit r of byte p; block 32g+2j+L at plane bit 128L+8j+g). Test hook for the layout.")
	Pragma("noescape")
	tmpBuf := AllocLocal(batchBytes)
	Load(Param("dst"), R8)
	Load(Param("src"), R9)
	d := func(m int) Mem { return Mem{Base: R8, Disp: planeBytes * m} }
	t := func(m int) Mem { return tmpBuf.Offset(planeBytes * m) }
	unpackLevel(func(m int) Mem { return Mem{Base: R9, Disp: planeBytes * m} }, t, nil)
	unpackLevel(t, d, nil)
	unpackLevel(d, t, nil)
	unpackLevel(t, d, nil)
	g.bitTranspose(d, d, func(p int) int { return p })
	VZEROUPPER()
	RET()
}

func main() {
	// The generated file targets amd64 whatever the host (avo issue #450).
	os.Setenv("GOOS", "linux")
	os.Setenv("GOARCH", "amd64")

	goSBox := flag.String("gosbox", "", "write the S-box circuit as portable Go to this file and exit")
	goPkg := flag.String("gopkg", "sm4", "package clause of the -gosbox file")
	flag.Parse()

	sf, p := sboxProgram()
	checkModel(sf, p)
	x, a := p.counts()
	if *goSBox != "" {
		if err := writeGoSBox(*goSBox, *goPkg, sf, p); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}

	ConstraintExpr("amd64,gc,!purego")
	g := &gen{c: emitConsts(), sf: sf, p: p, folds: keyFolds(sf)}
	g.encryptBlocks()
	g.xorKeyStream()
	g.transposeHook()
	g.tp = fuse(p)
	if err := checkCircuit(g.tp, sf); err != nil {
		panic(err)
	}
	checkModel(sf, g.tp)
	g.emitIndex512()
	g.encryptBlocks512()
	g.xorKeyStream512()
	g.transposeHook512()
	t3, t2 := g.tp.counts()
	fmt.Fprintf(os.Stderr, "sm4bs gen: fused S-box %d ops (%d ternary, %d binary); first ZMM S-box: %s\n", t3+t2, t3, t2, g.stats[len(g.stats)-1])
	fmt.Fprintf(os.Stderr, "sm4bs gen: S-box circuit %d XOR + %d AND; first S-box: %s\n", x, a, g.stats[0])
	Generate()
}
