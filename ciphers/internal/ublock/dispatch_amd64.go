//go:build amd64 && gc && !purego

package ublock

import (
	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/kernels/cpu"
	kublock "github.com/gmtun/gmtun/kernels/ublock"
)

// The single dispatch point of every uBlock primitive on amd64
// (dispatch_noasm.go is its complement). Each flag is computed once from
// kernels/cpu and is the AND of every feature its kernels use, so a
// GODEBUG switch (cpu.avx512f=off, cpu.avx2=off, …) drops the tier. The
// flags are registered with ciphers/internal/impl, fastest first; the
// tests select each tier in turn through it. tier() is the one if-chain
// every primitive goes through.
//
// The kernels run every length (a single block costs one register pair
// pass, still faster than the generic code's four-block step), so there
// is no size threshold below which the generic code is used.
var (
	// useAVX512VBMI: kernels/ublock on ZMM registers with the S-box
	// through VPERMB (AVX-512 VBMI); decryption runs the AVX512 kernels.
	useAVX512VBMI = cpu.X86.VBMI
	// useAVX512: kernels/ublock on ZMM registers (AVX-512 F/BW; the
	// AVX512 flag of kernels/cpu also requires VL and DQ).
	useAVX512 = cpu.X86.AVX512
	// useAVX2: kernels/ublock on YMM registers.
	useAVX2 = cpu.X86.AVX2
)

func init() {
	impl.Register(ImplPackage, kublock.AVX512VBMI.String(), &useAVX512VBMI)
	impl.Register(ImplPackage, kublock.AVX512.String(), &useAVX512)
	impl.Register(ImplPackage, kublock.AVX2.String(), &useAVX2)
}

// tier returns the kernel tier to use, or ok = false for the generic code.
func tier() (t kublock.Tier, ok bool) {
	switch {
	case useAVX512VBMI:
		return kublock.AVX512VBMI, true
	case useAVX512:
		return kublock.AVX512, true
	case useAVX2:
		return kublock.AVX2, true
	}
	return 0, false
}

// kernelSchedule is the round keys in the kernels' layout (see
// kernels/ublock.Schedule). It is filled whatever the CPU, so that any
// tier can be selected at any time (the tests switch tiers on one key).
type kernelSchedule = kublock.Schedule

// initKernelSchedule lays out s.RK for the kernels: public shifts and
// masks of the round-key bytes, no table.
func initKernelSchedule(s *Schedule) {
	s.kernel.Init(s.RK[:(s.Rounds+1)*s.BlockSize], s.BlockSize, s.Rounds)
}

// encryptBlocks encrypts whole blocks of src into dst (ECB); see
// encryptBlocksGeneric.
func encryptBlocks(s *Schedule, dst, src []byte) {
	if t, ok := tier(); ok {
		kublock.EncryptBlocks(t, &s.kernel, dst, src)
		return
	}
	encryptBlocksGeneric(s, dst, src)
}

// decryptBlocks decrypts whole blocks of src into dst (ECB); see
// decryptBlocksGeneric.
func decryptBlocks(s *Schedule, dst, src []byte) {
	if t, ok := tier(); ok {
		kublock.DecryptBlocks(t, &s.kernel, dst, src)
		return
	}
	decryptBlocksGeneric(s, dst, src)
}

// ctr32XOR is GCM's CTR keystream XOR; see ctr32XORGeneric.
func ctr32XOR(s *Schedule, ctr *[16]byte, dst, src []byte) {
	if t, ok := tier(); ok {
		kublock.XORKeyStream(t, &s.kernel, ctr, dst, src)
		return
	}
	ctr32XORGeneric(s, ctr, dst, src)
}
