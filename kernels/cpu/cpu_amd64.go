//go:build amd64 && gc && !purego

package cpu

import (
	"os"

	"golang.org/x/sys/cpu"
)

// cpuid executes CPUID with the given leaf (EAX) and subleaf (ECX).
//
//go:noescape
func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

// xgetbv reads extended control register XCR0 (XGETBV with ECX = 0).
//
//go:noescape
func xgetbv() (eax, edx uint32)

// Bits of CPUID leaf 7 subleaf 0 ECX (Intel SDM Vol. 2A, CPUID, Table 3-8).
const (
	leaf7ECXGFNI       = 1 << 8
	leaf7ECXVAES       = 1 << 9
	leaf7ECXVPCLMULQDQ = 1 << 10
)

// Bits of CPUID leaf 1 ECX and of XCR0 (Intel SDM Vol. 1, §13.3).
const (
	leaf1ECXOSXSAVE = 1 << 27
	xcr0SSE         = 1 << 1 // XMM state
	xcr0AVX         = 1 << 2 // upper halves of YMM
)

// probedNames are the features read from CPUID here rather than from
// golang.org/x/sys/cpu (which reports them only under AVX-512); GODEBUG
// "cpu.<name>=off" switches each of them off.
var probedNames = []string{"gfni", "vaes", "vpclmulqdq"}

// probeVEX reads GFNI, VAES and VPCLMULQDQ from CPUID leaf 7 and keeps them
// only when the OS saves YMM state (XCR0 bits 1 and 2).
func probeVEX() vexFeatures {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return vexFeatures{}
	}
	_, _, ecx1, _ := cpuid(1, 0)
	if ecx1&leaf1ECXOSXSAVE == 0 {
		return vexFeatures{}
	}
	if xcr0, _ := xgetbv(); xcr0&(xcr0SSE|xcr0AVX) != xcr0SSE|xcr0AVX {
		return vexFeatures{}
	}
	_, _, ecx7, _ := cpuid(7, 0)
	return vexFeatures{
		gfni:       ecx7&leaf7ECXGFNI != 0,
		vaes:       ecx7&leaf7ECXVAES != 0,
		vpclmulqdq: ecx7&leaf7ECXVPCLMULQDQ != 0,
	}
}

func detect() Features {
	x := cpu.X86
	sys := sysFeatures{
		avx:          x.HasAVX,
		avx2:         x.HasAVX2,
		bmi2:         x.HasBMI2,
		aes:          x.HasAES,
		pclmulqdq:    x.HasPCLMULQDQ,
		ssse3:        x.HasSSSE3,
		sse41:        x.HasSSE41,
		avx512f:      x.HasAVX512F,
		avx512bw:     x.HasAVX512BW,
		avx512vl:     x.HasAVX512VL,
		avx512dq:     x.HasAVX512DQ,
		avx512gfni:   x.HasAVX512GFNI,
		avx512vaes:   x.HasAVX512VAES,
		avx512vpclmq: x.HasAVX512VPCLMULQDQ,
		avx512vbmi2:  x.HasAVX512VBMI2,
	}
	return combine(sys, probeVEX(), godebugOff(os.Getenv("GODEBUG"), probedNames))
}
