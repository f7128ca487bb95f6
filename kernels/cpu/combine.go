package cpu

// sysFeatures is the subset of golang.org/x/sys/cpu.X86 the tiers use,
// after x/sys/cpu has applied its own GODEBUG switches.
type sysFeatures struct {
	avx, avx2, bmi2                       bool
	aes, pclmulqdq, ssse3, sse41          bool
	avx512f, avx512bw, avx512vl, avx512dq bool
	avx512gfni, avx512vaes, avx512vpclmq  bool
	avx512vbmi2                           bool
	avx512vbmi                            bool
}

// vexFeatures holds the CPUID leaf 7 ECX bits that x/sys/cpu reports only
// together with AVX-512, as probed here (and already gated on YMM state).
type vexFeatures struct {
	gfni, vaes, vpclmulqdq bool
}

// combine derives the tier flags: each flag is the AND of every feature
// its kernels use, and a probed feature switched off in GODEBUG (off) also
// clears the AVX-512 flags built on it.
func combine(x sysFeatures, v vexFeatures, off map[string]bool) Features {
	gfni := v.gfni && !off["gfni"]
	vaes := v.vaes && !off["vaes"]
	vpclmulqdq := v.vpclmulqdq && !off["vpclmulqdq"]

	var f Features
	f.AVX2 = x.avx && x.avx2 && x.bmi2
	f.AESNI = x.aes && x.pclmulqdq && x.ssse3 && x.sse41
	f.GFNI = f.AVX2 && gfni
	f.VAES = f.AVX2 && f.AESNI && vaes
	f.VPCLMULQDQ = f.AVX2 && f.AESNI && vpclmulqdq
	f.AVX512 = f.AVX2 && x.avx512f && x.avx512bw && x.avx512vl && x.avx512dq
	f.AVX512GFNI = f.AVX512 && f.GFNI && x.avx512gfni
	f.AVX512VAES = f.AVX512 && f.VAES && f.VPCLMULQDQ && x.avx512vaes && x.avx512vpclmq
	f.VBMI2 = f.AVX512 && x.avx512vbmi2
	f.VBMI = f.AVX512 && x.avx512vbmi
	return f
}
