//go:build amd64 && gc && !purego

package csum

// haveKernels: this build has the AVX2 kernels (csum_amd64.s).
const haveKernels = true

// maxKernelLen is the most bytes one kernel call takes: below 2^34 the
// kernels' lanes cannot overflow (kernels/_gen/csum), and it is even, so
// the pieces of a longer slice sum as one.
const maxKernelLen = 1 << 32

func sumKernel(acc uint64, b []byte) uint64 {
	for len(b) > maxKernelLen {
		acc = sumAVX2(acc, b[:maxKernelLen])
		b = b[maxKernelLen:]
	}
	return sumAVX2(acc, b)
}

func copySumKernel(dst, src []byte, acc uint64) uint64 {
	for len(src) > maxKernelLen {
		acc = copySumAVX2(dst[:maxKernelLen], src[:maxKernelLen], acc)
		dst, src = dst[maxKernelLen:], src[maxKernelLen:]
	}
	return copySumAVX2(dst, src, acc)
}
