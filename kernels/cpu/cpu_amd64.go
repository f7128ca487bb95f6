//go:build amd64 && !purego

package cpu

import "golang.org/x/sys/cpu"

func detect() Features {
	x := cpu.X86
	var f Features
	f.AVX2 = x.HasAVX && x.HasAVX2 && x.HasBMI2
	f.AESNI = x.HasAES && x.HasPCLMULQDQ && x.HasSSSE3 && x.HasSSE41
	f.AVX512 = f.AVX2 && x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512DQ
	f.AVX512GFNI = f.AVX512 && x.HasAVX512GFNI
	f.AVX512VAES = f.AVX512 && x.HasAVX512VAES && x.HasAVX512VPCLMULQDQ
	f.VBMI2 = f.AVX512 && x.HasAVX512VBMI2
	// x/sys/cpu reports GFNI, VAES and VPCLMULQDQ only when AVX-512 is on;
	// until the own CPUID probe lands, the VEX forms follow those flags.
	f.GFNI = f.AVX2 && x.HasAVX512GFNI
	f.VAES = f.AVX2 && x.HasAVX512VAES
	f.VPCLMULQDQ = f.AVX2 && x.HasAVX512VPCLMULQDQ
	return f
}
