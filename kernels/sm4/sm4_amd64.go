//go:build amd64 && gc && !purego

package sm4

import (
	"github.com/gmtun/gmtun/kernels/cpu"
	"github.com/gmtun/gmtun/kernels/internal/ctrpass"
)

// BlockSize is the SM4 block size in bytes.
const BlockSize = 16

// Tier names one kernel implementation.
type Tier int

// The kernel tiers, fastest first.
const (
	AVX512GFNI Tier = iota + 1 // AVX-512 F/BW/VL/DQ + GFNI, ZMM
	AVX2GFNI                   // AVX2 + VEX GFNI, YMM
	// AVX512AESNI is AVX-512 without GFNI or VAES (Skylake-SP, Cascade
	// Lake): the AVX2AESNI round on ZMM, 16 blocks per set.
	AVX512AESNI
	AVX2VAES  // AVX2 + VAES (VEX), YMM
	AVX2AESNI // AVX2 + AES-NI, YMM
)

// AllTiers lists every tier, fastest first, whether or not the CPU has it.
var AllTiers = []Tier{AVX512GFNI, AVX2GFNI, AVX512AESNI, AVX2VAES, AVX2AESNI}

// String returns the tier's name, as kernels/cpu spells it ("AVX-512+GFNI",
// …): the name ciphers/internal/sm4 registers the tier under.
func (t Tier) String() string {
	switch t {
	case AVX512GFNI:
		return cpu.TierAVX512GFNI
	case AVX2GFNI:
		return cpu.TierAVX2GFNI
	case AVX512AESNI:
		return cpu.TierAVX512AESNI
	case AVX2VAES:
		return cpu.TierAVX2VAES
	case AVX2AESNI:
		return cpu.TierAVX2AESNI
	}
	return "invalid"
}

// Supported reports whether the running CPU (after GODEBUG overrides) can
// run tier t.
func (t Tier) Supported() bool {
	switch t {
	case AVX512GFNI:
		return cpu.X86.AVX512GFNI
	case AVX2GFNI:
		return cpu.X86.GFNI
	case AVX512AESNI:
		return cpu.X86.AVX512 && cpu.X86.AVX2 && cpu.X86.AESNI
	case AVX2VAES:
		return cpu.X86.VAES
	case AVX2AESNI:
		return cpu.X86.AVX2 && cpu.X86.AESNI
	}
	return false
}

// narrowBlocks is the most blocks for which AVX512AESNI calls run the
// AVX2AESNI kernels: a ZMM set holds 16 blocks, and a call of one YMM set
// (a short packet and its tag mask) costs less there.
const narrowBlocks = 8

// forBlocks returns the tier that runs a call of n blocks on tier t.
func (t Tier) forBlocks(n int) Tier {
	if t == AVX512AESNI && n <= narrowBlocks {
		return AVX2AESNI
	}
	return t
}

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
		panic("sm4: tier " + t.String() + " not supported by this CPU")
	}
}

// EncryptBlocks encrypts src into dst with the round keys rk using tier t
// (SM4 encryption, GB/T 32907-2016 §7.1; decryption is the same with the
// round keys reversed). len(src) must be a multiple of BlockSize and dst
// at least as long; dst and src must be equal or not overlap.
func EncryptBlocks(t Tier, rk *[32]uint32, dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic("sm4: input not full blocks")
	}
	if len(dst) < len(src) {
		panic("sm4: output smaller than input")
	}
	n := len(src) / BlockSize
	if n == 0 {
		return
	}
	t.check()
	switch t.forBlocks(n) {
	case AVX512AESNI:
		encryptBlocksAVX512AESNI(rk, &dst[0], &src[0], n)
	case AVX512GFNI:
		encryptBlocksAVX512GFNI(rk, &dst[0], &src[0], n)
	case AVX2GFNI:
		encryptBlocksAVX2GFNI(rk, &dst[0], &src[0], n)
	case AVX2VAES:
		encryptBlocksAVX2VAES(rk, &dst[0], &src[0], n)
	case AVX2AESNI:
		encryptBlocksAVX2AESNI(rk, &dst[0], &src[0], n)
	}
}

// XORKeyStream XORs the whole-block prefix of src (len(src)/BlockSize
// blocks) with the SM4 keystream for the counter blocks ctr, inc32(ctr), …
// (NIST SP 800-38D §6.5 GCTR) into dst, and advances ctr past the blocks
// used. The trailing len(src)%BlockSize bytes are left to the caller, and
// dst is not written past the whole blocks. dst must be at least as long
// as the whole-block prefix; dst and src must be equal or not overlap.
func XORKeyStream(t Tier, rk *[32]uint32, ctr *[16]byte, dst, src []byte) {
	n := len(src) / BlockSize
	if n == 0 {
		return
	}
	if len(dst) < n*BlockSize {
		panic("sm4: output smaller than input")
	}
	t.check()
	xorKeyStream(t, rk, ctr, &dst[0], &src[0], n)
	inc32(ctr, n)
}

func xorKeyStream(t Tier, rk *[32]uint32, ctr *[16]byte, dst, src *byte, n int) {
	switch t.forBlocks(n) {
	case AVX512GFNI:
		xorKeyStreamAVX512GFNI(rk, ctr, dst, src, n)
	case AVX2GFNI:
		xorKeyStreamAVX2GFNI(rk, ctr, dst, src, n)
	case AVX2VAES:
		xorKeyStreamAVX2VAES(rk, ctr, dst, src, n)
	case AVX512AESNI:
		xorKeyStreamAVX512AESNI(rk, ctr, dst, src, n)
	case AVX2AESNI:
		xorKeyStreamAVX2AESNI(rk, ctr, dst, src, n)
	}
}

// inc32 adds n to the last 32-bit big-endian word of ctr modulo 2^32
// (NIST SP 800-38D §6.2).
func inc32(ctr *[16]byte, n int) { ctrpass.Inc32(ctr, n) }
