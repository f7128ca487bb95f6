// Package cpu reports, once at start-up, which instruction-set features
// gmtun's kernels may use. Each flag ANDs every feature its kernels touch,
// so disabling any one of them (GODEBUG=cpu.avx512f=off, cpu.gfni=off, …,
// the golang.org/x/sys/cpu syntax) switches the whole tier off.
//
// The flags are read-only after package initialization; tests that force a
// tier do so through the dispatch variables of the cipher packages, never
// by writing here.
package cpu

// Features is the set of instruction-set features a kernel tier may need.
type Features struct {
	AVX2       bool // AVX, AVX2 and BMI2 with YMM state enabled by the OS
	AESNI      bool // AES-NI and PCLMULQDQ (128-bit)
	GFNI       bool // AVX2 and GFNI usable with VEX (YMM) encoding (own CPUID probe)
	VAES       bool // AVX2, AESNI and VAES on YMM (own CPUID probe)
	VPCLMULQDQ bool // AVX2, AESNI and VPCLMULQDQ on YMM (own CPUID probe)
	AVX512     bool // AVX2 and AVX-512 F, BW, VL and DQ with ZMM/opmask state enabled
	AVX512GFNI bool // AVX512 and GFNI (EVEX)
	AVX512VAES bool // AVX512, VAES and VPCLMULQDQ (EVEX)
	VBMI2      bool // AVX512 and AVX512-VBMI2 (VPSHLDD)
	VBMI       bool // AVX512 and AVX512-VBMI (VPERMB)
}

// Complete reports whether f has every feature a tier uses: on such a CPU
// every kernel tier can run, so a test that skips one proves a dispatch
// bug, and the tests' GMTUN_REQUIRE_IMPLS=all rule fails it.
func (f Features) Complete() bool {
	return f.AVX2 && f.AESNI && f.GFNI && f.VAES && f.VPCLMULQDQ && f.AVX512 &&
		f.AVX512GFNI && f.AVX512VAES && f.VBMI2 && f.VBMI
}

// X86 holds the features of the running CPU (all false on other
// architectures and with the purego build tag).
var X86 = detect()
