//go:build amd64 && gc && !purego

package sm4

import (
	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/kernels/cpu"
	"github.com/gmtun/gmtun/kernels/ghash"
	ksm4 "github.com/gmtun/gmtun/kernels/sm4"
)

// The single dispatch point of every SM4 primitive on amd64. Each flag is
// computed once from kernels/cpu and ANDs every feature its tier uses (the
// SM4 kernel and the GHASH kernel it is paired with), so a GODEBUG switch
// of any of them (cpu.avx512f=off, cpu.gfni=off, …) drops the whole tier.
// The flags are registered with ciphers/internal/impl, fastest first; the
// tests select each tier in turn through it. tiers() is the one if-chain
// every primitive goes through; it is inlined, so dispatch costs a few
// predictable branches and no indirect call.
var (
	// useAVX512GFNI: SM4 on ZMM with GFNI S-boxes, GHASH with VPCLMULQDQ
	// on ZMM.
	useAVX512GFNI = cpu.X86.AVX512GFNI && cpu.X86.AVX512VAES
	// useAVX2GFNI: SM4 on YMM with VEX-encoded GFNI, GHASH with
	// VPCLMULQDQ on YMM where the CPU has it (avx2GHASH), else with
	// 128-bit PCLMULQDQ.
	useAVX2GFNI = cpu.X86.GFNI && cpu.X86.AESNI
	// useAVX512AESNI: AVX-512 without GFNI or VAES (Skylake-SP, Cascade
	// Lake): SM4 on ZMM with the S-box through AESENCLAST on the four
	// 128-bit quarters (calls of up to 8 blocks on the AVX2+AES-NI
	// kernels); GHASH as on the AVX2+GFNI tier.
	useAVX512AESNI = cpu.X86.AVX512 && cpu.X86.AVX2 && cpu.X86.AESNI
	// useAVX2VAES: SM4 on YMM with the S-box through VAESENCLAST on whole
	// YMM registers, GHASH with VPCLMULQDQ on YMM (AMD Zen 3: VAES and
	// VPCLMULQDQ without GFNI or AVX-512).
	useAVX2VAES = cpu.X86.VAES && cpu.X86.VPCLMULQDQ
	// useAVX2AESNI: SM4 on YMM with the S-box through AESENCLAST on
	// 128-bit halves, GHASH with 128-bit PCLMULQDQ.
	useAVX2AESNI = cpu.X86.AVX2 && cpu.X86.AESNI

	// avx2GHASH is the GHASH kernel of the AVX2+GFNI and AVX-512+AES-NI
	// tiers, fixed at start.
	avx2GHASH = func() ghash.Tier {
		if cpu.X86.VPCLMULQDQ {
			return ghash.AVX2VPCLMULQDQ
		}
		return ghash.PCLMULQDQ
	}()
)

func init() {
	// Each tier is registered under its SM4 kernel's name (kernels/cpu's
	// spelling), the name tiers() maps it back to.
	impl.Register(ImplPackage, ksm4.AVX512GFNI.String(), &useAVX512GFNI)
	impl.Register(ImplPackage, ksm4.AVX2GFNI.String(), &useAVX2GFNI)
	impl.Register(ImplPackage, ksm4.AVX512AESNI.String(), &useAVX512AESNI)
	impl.Register(ImplPackage, ksm4.AVX2VAES.String(), &useAVX2VAES)
	impl.Register(ImplPackage, ksm4.AVX2AESNI.String(), &useAVX2AESNI)
}

// tiers returns the SM4 and GHASH kernel tiers to use, or ok = false for
// the generic code.
func tiers() (st ksm4.Tier, gt ghash.Tier, ok bool) {
	switch {
	case useAVX512GFNI:
		return ksm4.AVX512GFNI, ghash.AVX512, true
	case useAVX2GFNI:
		return ksm4.AVX2GFNI, avx2GHASH, true
	case useAVX512AESNI:
		return ksm4.AVX512AESNI, avx2GHASH, true
	case useAVX2VAES:
		return ksm4.AVX2VAES, ghash.AVX2VPCLMULQDQ, true
	case useAVX2AESNI:
		return ksm4.AVX2AESNI, ghash.PCLMULQDQ, true
	}
	return 0, 0, false
}

// kernelKey is the GHASH kernels' table of the powers of H. GCM keeps it
// next to the generic key so that any tier can be selected at any time.
type kernelKey = ghash.Key

// initKernelKey fills k from the hash subkey h.
func initKernelKey(k *kernelKey, h *[16]byte) { ghash.NewKey(h, k) }

// cryptBlock applies SM4 with round keys rk (either schedule) to one
// block. The kernels are constant time; a one-block call costs one
// register set of the tier.
func cryptBlock(rk *[32]uint32, dst, src []byte) {
	if st, _, ok := tiers(); ok {
		ksm4.EncryptBlocks(st, rk, dst[:BlockSize], src[:BlockSize])
		return
	}
	cryptBlockGeneric(rk, dst, src)
}

// encryptBlocks encrypts whole blocks of src into dst (ECB).
func encryptBlocks(rk *[32]uint32, dst, src []byte) {
	if st, _, ok := tiers(); ok {
		ksm4.EncryptBlocks(st, rk, dst, src)
		return
	}
	encryptBlocksGeneric(rk, dst, src)
}

// xorKeyStream is the SM4-CTR keystream XOR with a 128-bit counter; see
// ctrGeneric.
func xorKeyStream(rk *[32]uint32, ctr *[16]byte, dst, src []byte) {
	if st, _, ok := tiers(); ok {
		ctrKernel(st, rk, ctr, dst, src)
		return
	}
	ctrGeneric(rk, ctr, dst, src)
}

// gcmSeal seals one message; see GCM.Seal.
func gcmSeal(g *GCM, out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte) {
	if st, gt, ok := tiers(); ok {
		sealKernel(st, gt, g, out, tag, nonce, plaintext, aad)
		return
	}
	sealGeneric(g, out, tag, nonce, plaintext, aad)
}

// gcmOpen opens one message; see GCM.Open.
func gcmOpen(g *GCM, out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	if st, gt, ok := tiers(); ok {
		return openKernel(st, gt, g, out, nonce, ciphertext, aad, tag)
	}
	return openGeneric(g, out, nonce, ciphertext, aad, tag)
}

// gcmSealBatch seals a batch; see GCM.SealBatch.
func gcmSealBatch(g *GCM, ps []Packet) {
	if st, gt, ok := tiers(); ok {
		sealBatchKernel(st, gt, g, ps)
		return
	}
	sealBatchGeneric(g, ps)
}

// gcmOpenBatch opens a batch; see GCM.OpenBatch.
func gcmOpenBatch(g *GCM, ps []Packet, ok []bool) {
	if st, gt, has := tiers(); has {
		openBatchKernel(st, gt, g, ps, ok)
		return
	}
	openBatchGeneric(g, ps, ok)
}
