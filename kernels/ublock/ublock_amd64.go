//go:build amd64 && gc && !purego

package ublock

import (
	"encoding/binary"

	"github.com/gmtun/gmtun/kernels/cpu"
	"github.com/gmtun/gmtun/kernels/internal/ctrpass"
)

// MaxRounds is the round count of the longest variants (uBlock-128/256
// and 256/256).
const MaxRounds = 24

// recordBytes is the size of one round's record in Schedule: the five
// 64-byte vectors k(X0), k(X1), k(X0)≫4, k(X1)≫4 and PL⁻¹(k(X0)) (see
// Init).
const recordBytes = 320

// passPairs is the number of register pairs of a full kernel pass, and
// bufBytes the size of one full AVX-512 pass (the most a final partial
// pass can take).
const (
	passPairs = 4
	bufBytes  = passPairs * 2 * 64
)

// Tier names one kernel implementation.
type Tier int

// The kernel tiers, fastest first.
const (
	AVX512VBMI Tier = iota + 1 // AVX512 and AVX-512 VBMI (VPERMB S-box), ZMM
	AVX512                     // AVX-512 F/BW (and VL, DQ as cpu.X86.AVX512 groups them), ZMM
	AVX2                       // AVX2, YMM
)

// AllTiers lists every tier, fastest first, whether or not the CPU has it.
var AllTiers = []Tier{AVX512VBMI, AVX512, AVX2}

// String returns the tier's name, as kernels/cpu spells it
// ("AVX-512+VBMI", …): the name ciphers/internal/ublock registers the tier
// under.
func (t Tier) String() string {
	switch t {
	case AVX512VBMI:
		return cpu.TierAVX512VBMI
	case AVX512:
		return cpu.TierAVX512
	case AVX2:
		return cpu.TierAVX2
	}
	return "invalid"
}

// Supported reports whether the running CPU (after GODEBUG overrides) can
// run tier t.
func (t Tier) Supported() bool {
	switch t {
	case AVX512VBMI:
		return cpu.X86.VBMI
	case AVX512:
		return cpu.X86.AVX512
	case AVX2:
		return cpu.X86.AVX2
	}
	return false
}

// width is the tier's vector register size in bytes.
func (t Tier) width() int {
	if t == AVX2 {
		return 32
	}
	return 64
}

// PairBlocks is the number of blocks of blockSize bytes one register pair
// of tier t holds: the least a call costs. Calls run best with multiples
// of four pairs (a full pass).
func (t Tier) PairBlocks(blockSize int) int { return 2 * t.width() / blockSize }

// Best returns the fastest supported tier and false when none is.
func Best() (Tier, bool) {
	for _, t := range AllTiers {
		if t.Supported() {
			return t, true
		}
	}
	return 0, false
}

func (t Tier) check() {
	if !t.Supported() {
		panic("ublock: tier " + t.String() + " not supported by this CPU")
	}
}

// Schedule holds the round keys of one uBlock key in the kernels' layout:
// for every round key RK_i, each half (X0, X1) byte-swapped per 32-bit
// word and repeated over 64 bytes, then the same two vectors shifted
// right by 4 in every 16-bit word (the high-nibble share of the S-box
// index, AVX512), then the X0 half permuted by PL⁻¹ (AVX512VBMI folds
// PL's input XOR and the key into one instruction). The zero value is
// unusable; fill it with Init.
type Schedule struct {
	rk        [(MaxRounds + 1) * recordBytes]byte
	rounds    int
	blockSize int
}

// Init lays out the round keys rk = RK_0 ‖ RK_1 ‖ … ‖ RK_rounds (each
// blockSize bytes, big-endian as in the specification) for the kernels.
// blockSize is 16 or 32 and rounds at most MaxRounds. The transform is
// public shifts and masks of the key bytes (no table).
func (s *Schedule) Init(rk []byte, blockSize, rounds int) {
	if blockSize != 16 && blockSize != 32 || rounds < 1 || rounds > MaxRounds || len(rk) < (rounds+1)*blockSize {
		panic("ublock: invalid round keys")
	}
	s.rounds, s.blockSize = rounds, blockSize
	half := blockSize / 2
	for i := 0; i <= rounds; i++ {
		rec := s.rk[i*recordBytes : (i+1)*recordBytes]
		for h := 0; h < 2; h++ {
			key := rk[i*blockSize+h*half : i*blockSize+(h+1)*half]
			v := rec[64*h : 64*(h+1)]
			for base := 0; base < 64; base += half {
				for b := range key {
					v[base+4*(b/4)+3-b%4] = key[b]
				}
			}
			sh := rec[64*(2+h) : 64*(3+h)]
			for w := 0; w < 64; w += 2 {
				binary.LittleEndian.PutUint16(sh[w:], binary.LittleEndian.Uint16(v[w:])>>4)
			}
			if h == 0 {
				// PL⁻¹ as a gather: PL(v)[i] = v[PL[i]] = key[i].
				inv := plInv128[:]
				if blockSize == 32 {
					inv = plInv256[:]
				}
				v := rec[256:320]
				for base := 0; base < 64; base += half {
					for b := range key {
						v[base+4*(b/4)+3-b%4] = key[inv[b]]
					}
				}
			}
		}
	}
	clear(s.rk[(rounds+1)*recordBytes:])
}

// plInv128 and plInv256 are PL⁻¹ of the specification (gathers, byte 0
// the most significant) for the 128- and 256-bit blocks.
var (
	plInv128 = [8]byte{4, 0, 5, 1, 2, 7, 3, 6}
	plInv256 = [16]byte{15, 8, 0, 4, 9, 14, 5, 1, 2, 6, 11, 13, 7, 3, 12, 10}
)

// Reset wipes the round keys.
func (s *Schedule) Reset() { *s = Schedule{} }

// Rounds returns the schedule's round count (0 before Init).
func (s *Schedule) Rounds() int { return s.rounds }

// BlockSize returns the schedule's block size in bytes (0 before Init).
func (s *Schedule) BlockSize() int { return s.blockSize }

func (s *Schedule) valid() {
	if s.rounds == 0 {
		panic("ublock: schedule not initialized")
	}
}

// EncryptBlocks encrypts src into dst (ECB) with schedule s using tier t.
// len(src) must be a multiple of s.BlockSize() and dst at least as long;
// dst and src must be equal or not overlap.
func EncryptBlocks(t Tier, s *Schedule, dst, src []byte) { ecb(t, s, dst, src, false) }

// DecryptBlocks decrypts src into dst (ECB) with schedule s using tier t;
// see EncryptBlocks.
func DecryptBlocks(t Tier, s *Schedule, dst, src []byte) { ecb(t, s, dst, src, true) }

func ecb(t Tier, s *Schedule, dst, src []byte, dec bool) {
	s.valid()
	bs := s.blockSize
	if len(src)%bs != 0 {
		panic("ublock: input not full blocks")
	}
	if len(dst) < len(src) {
		panic("ublock: output smaller than input")
	}
	n := len(src) / bs
	if n == 0 {
		return
	}
	t.check()
	pb := t.PairBlocks(bs)
	// Whole pairs run in place; if the input ends in a partial pair, the
	// last pass (fewer than passPairs pairs, the partial one included)
	// runs in a buffer, so the kernel never reads or writes past the
	// caller's blocks and that pass still holds several pairs.
	direct := n
	if n%pb != 0 {
		direct = n - n%(passPairs*pb)
	}
	if direct > 0 {
		ecbKernel(t, s, dec, &dst[0], &src[0], direct)
	}
	if rest := (n - direct) * bs; rest > 0 {
		var buf [bufBytes]byte
		copy(buf[:], src[direct*bs:])
		ecbKernel(t, s, dec, &buf[0], &buf[0], (n-direct+pb-1)/pb*pb)
		copy(dst[direct*bs:], buf[:rest])
		clear(buf[:rest])
	}
}

func ecbKernel(t Tier, s *Schedule, dec bool, dst, src *byte, n int) {
	rk, r := &s.rk[0], s.rounds
	if t == AVX512VBMI {
		switch {
		case s.blockSize == 16 && !dec:
			encrypt128AVX512VBMI(rk, r, dst, src, n)
			return
		case !dec:
			encrypt256AVX512VBMI(rk, r, dst, src, n)
			return
		}
		t = AVX512 // decryption has no VBMI kernel
	}
	switch {
	case t == AVX512 && s.blockSize == 16 && !dec:
		encrypt128AVX512(rk, r, dst, src, n)
	case t == AVX512 && s.blockSize == 16:
		decrypt128AVX512(rk, r, dst, src, n)
	case t == AVX512 && !dec:
		encrypt256AVX512(rk, r, dst, src, n)
	case t == AVX512:
		decrypt256AVX512(rk, r, dst, src, n)
	case s.blockSize == 16 && !dec:
		encrypt128AVX2(rk, r, dst, src, n)
	case s.blockSize == 16:
		decrypt128AVX2(rk, r, dst, src, n)
	case !dec:
		encrypt256AVX2(rk, r, dst, src, n)
	default:
		decrypt256AVX2(rk, r, dst, src, n)
	}
}

// XORKeyStream XORs src (any length) with the uBlock keystream of the
// counter blocks ctr, inc32(ctr), … (NIST SP 800-38D §6.5 GCTR, §6.2
// inc32) into dst, and advances ctr past the blocks used (a final partial
// block counts as one). s must have 16-byte blocks; dst must be at least
// as long as src; dst and src must be equal or not overlap.
func XORKeyStream(t Tier, s *Schedule, ctr *[16]byte, dst, src []byte) {
	s.valid()
	if s.blockSize != 16 {
		panic("ublock: counter mode needs the 128-bit block")
	}
	if len(dst) < len(src) {
		panic("ublock: output smaller than input")
	}
	if len(src) == 0 {
		return
	}
	t.check()
	pb := t.PairBlocks(16)
	n := len(src) / 16
	direct := n
	if len(src)%(16*pb) != 0 {
		direct = n - n%(passPairs*pb)
	}
	if direct > 0 {
		ctrKernel(t, s, ctr, &dst[0], &src[0], direct)
		inc32(ctr, direct)
	}
	if rest := len(src) - 16*direct; rest > 0 {
		// As in ecb: the last pass, with the partial pair, in a buffer.
		var buf [bufBytes]byte
		copy(buf[:], src[16*direct:])
		blocks := (rest + 15) / 16
		ctrKernel(t, s, ctr, &buf[0], &buf[0], (blocks+pb-1)/pb*pb)
		copy(dst[16*direct:], buf[:rest])
		clear(buf[:rest])
		inc32(ctr, blocks)
	}
}

func ctrKernel(t Tier, s *Schedule, ctr *[16]byte, dst, src *byte, n int) {
	switch t {
	case AVX512VBMI:
		ctr128AVX512VBMI(&s.rk[0], s.rounds, ctr, dst, src, n)
	case AVX512:
		ctr128AVX512(&s.rk[0], s.rounds, ctr, dst, src, n)
	default:
		ctr128AVX2(&s.rk[0], s.rounds, ctr, dst, src, n)
	}
}

// inc32 adds n to the last 32-bit big-endian word of ctr modulo 2^32
// (NIST SP 800-38D §6.2).
func inc32(ctr *[16]byte, n int) { ctrpass.Inc32(ctr, n) }
