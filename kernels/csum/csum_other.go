//go:build !amd64 || !gc || purego

package csum

// haveKernels: this build has no kernels; every tier but Generic is
// unsupported, and Sum and CopySum run the portable code.
const haveKernels = false

func sumKernel(acc uint64, b []byte) uint64 { return sumGeneric(acc, b) }

func copySumKernel(dst, src []byte, acc uint64) uint64 { return copySumGeneric(dst, src, acc) }
