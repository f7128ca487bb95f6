// Command sm4bitsliced generates gmtun's bitsliced SM4 kernel (GB/T
// 32907-2016) for AVX-512 (F, BW): 512 blocks per pass, one ZMM-wide bit
// plane per state bit. The kernels live in kernels/sm4 beside the
// byte- and word-sliced tiers; they are the SM4 of the AVX-512+AES-NI tier
// (AVX-512 without GFNI: Skylake-SP, Cascade Lake), where they beat
// AES-NI on YMM over the 512-block passes a batch of packets fills.
//
// Layout. A pass is 8192 bytes = 128 rows of 64 bytes (row m holds blocks
// 4m..4m+3 in its four 128-bit lanes). The forward transpose is
//
//	F1: in each group of 16 rows (g = m>>4) and each lane, a 16×16 byte
//	    transpose (four levels of VPUNPCK{L,H}BW; each level rotates the
//	    8-bit address row‖column by one, so four levels transpose);
//	F2: for each byte position p, an 8×8 bit transpose across the 8 rows
//	    16g+p (three SWAPMOVE levels with shifts 1, 2, 4).
//
// Afterwards row 16r+p is the bit plane of bit r of block byte p, and block
// i = 64g + 4j + L sits at plane bit 128L + 8j + g. Both steps are
// involutions, so the inverse is F2 then F1 with the same code; the output
// F2 also reverses the word order R(X32..X35) of GB/T 32907-2016 §7.1.
//
// Round (§6.1, §7.1): X_{i+4} = X_i ⊕ L(τ(X_{i+1} ⊕ X_{i+2} ⊕ X_{i+3} ⊕ rk_i))
// on planes: the key bits are broadcast masks precomputed per call, τ is the
// boolean circuit of sbox.go (tower-field inversion between two linear
// layers, verified exhaustively), fused into VPTERNLOGD (fuse.go), and
// L(B) = B ⊕ B<<<2 ⊕ B<<<10 ⊕ B<<<18 ⊕ B<<<24 is plane renaming. The
// words rotate roles, so four rounds are unrolled and looped eight times.
// The S-box constants are folded into the round-key masks (keyFolds). CTR
// builds the counter planes directly (bitsliced 32-bit add of the block
// index), so only the output needs a transpose.
//
// Everything is straight-line or counted by public lengths: constant time.
//
// The same circuit, as portable Go, is the S-box of ciphers/internal/sm4's
// generic code (-gosbox).
//
// Run: go run ./sm4bitsliced -out ../sm4/bitsliced_amd64.s -stubs ../sm4/bitsliced_stubs_amd64.go -pkg sm4
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
				panic(fmt.Sprintf("sm4bitsliced gen: plane model wrong for block %d word %d", i, w))
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
}

func emitConsts() consts {
	var c consts
	c.shifts = GLOBL("sm4BitShifts", RODATA|NOPTR)
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
	c.m55 = rep("sm4BitMask55", 0x55)
	c.m33 = rep("sm4BitMask33", 0x33)
	c.m0f = rep("sm4BitMask0f", 0x0f)
	return c
}

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
func (g *gen) keyMasks(km Mem, rk GPPhysical) {
	Comment("Round-key bit masks, with the S-box constants folded in.")
	for j := 0; j < 32; j++ {
		MOVL(Mem{Base: rk, Disp: 4 * j}, EAX)
		XORL(U32(g.folds[j]), EAX)
		VMOVD(EAX, X0)
		VPBROADCASTD(X0, Y0)
		for q := 0; q < 4; q++ {
			VPSLLVD(g.c.shifts.Offset(32*q), Y0, Y1)
			VPSRAD(U8(31), Y1, Y1)
			VMOVDQU(Y1, km.Offset(128*j+32*q))
		}
	}
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
	fmt.Fprintf(os.Stderr, "sm4bitsliced gen: S-box circuit %d XOR + %d AND, fused %d ops (%d ternary, %d binary); first S-box: %s\n", x, a, t3+t2, t3, t2, g.stats[0])
	Generate()
}
