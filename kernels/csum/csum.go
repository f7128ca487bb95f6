package csum

import (
	"encoding/binary"
	"math/bits"

	"github.com/gmtun/gmtun/kernels/cpu"
)

// Tier names one implementation.
type Tier int

// The tiers, fastest first.
const (
	AVX2    Tier = iota + 1 // YMM kernels (kernels/_gen/csum)
	Generic                 // portable Go
)

// AllTiers lists every tier, fastest first, whether or not the CPU has it.
var AllTiers = []Tier{AVX2, Generic}

// String returns the tier's name, as kernels/cpu spells it ("AVX2",
// "generic").
func (t Tier) String() string {
	switch t {
	case AVX2:
		return cpu.TierAVX2
	case Generic:
		return cpu.TierGeneric
	}
	return "invalid"
}

// Supported reports whether the running CPU (after GODEBUG overrides) and
// the build can run tier t. Generic is always supported.
func (t Tier) Supported() bool {
	switch t {
	case AVX2:
		return haveKernels && cpu.X86.AVX2
	case Generic:
		return true
	}
	return false
}

// Best returns the fastest supported tier: the one Sum and CopySum use.
func Best() Tier {
	if useAVX2 {
		return AVX2
	}
	return Generic
}

// useAVX2 is Sum's and CopySum's dispatch, read once.
var useAVX2 = AVX2.Supported()

// minKernelLen is the length below which Sum and CopySum run the generic
// code even with AVX2: a call to the kernel (and, for CopySum, its scalar
// tail) costs more than the portable loop there.
const minKernelLen = 64

// Sum adds the bytes of b to the running sum acc and returns the new sum
// (see the package documentation for what a running sum is). Every b but
// the last of a checksummed sequence must have even length. Start a sum at
// 0 or at another running sum (a pseudo-header's, say).
func Sum(acc uint64, b []byte) uint64 {
	if useAVX2 && len(b) >= minKernelLen {
		return sumKernel(acc, b)
	}
	return sumGeneric(acc, b)
}

// CopySum copies src to dst, as copy(dst, src), and returns
// Sum(acc, src), in one pass over the data. dst must be at least as long
// as src (it panics otherwise), and the two must not overlap.
func CopySum(dst, src []byte, acc uint64) uint64 {
	dst = dst[:len(src)]
	if useAVX2 && len(src) >= minKernelLen {
		return copySumKernel(dst, src, acc)
	}
	return copySumGeneric(dst, src, acc)
}

// Sum is the package-level Sum on tier t. It panics if t is not supported.
func (t Tier) Sum(acc uint64, b []byte) uint64 {
	switch {
	case t == Generic:
		return sumGeneric(acc, b)
	case t == AVX2 && t.Supported():
		return sumKernel(acc, b)
	}
	panic("csum: tier " + t.String() + " not supported by this CPU")
}

// CopySum is the package-level CopySum on tier t. It panics if t is not
// supported.
func (t Tier) CopySum(dst, src []byte, acc uint64) uint64 {
	dst = dst[:len(src)]
	switch {
	case t == Generic:
		return copySumGeneric(dst, src, acc)
	case t == AVX2 && t.Supported():
		return copySumKernel(dst, src, acc)
	}
	panic("csum: tier " + t.String() + " not supported by this CPU")
}

// Fold folds the running sum acc to 16 bits and returns them in network
// order (to store with binary.BigEndian.PutUint16), not complemented: a
// checksum field holds ^Fold(sum), and a packet whose sum includes its
// checksum field is valid when Fold returns 0xffff.
func Fold(acc uint64) uint16 {
	acc = acc>>32 + acc&0xffffffff
	acc = acc>>32 + acc&0xffffffff
	acc = acc>>16 + acc&0xffff
	acc = acc>>16 + acc&0xffff
	acc = acc>>16 + acc&0xffff
	return bits.ReverseBytes16(uint16(acc))
}

// copySumGeneric is CopySum in portable Go: copy, then sum the copy
// (which is in cache by then).
func copySumGeneric(dst, src []byte, acc uint64) uint64 {
	copy(dst, src)
	return sumGeneric(acc, dst)
}

// sumGeneric is Sum in portable Go: the little-endian 64-bit words of b
// with end-around carry (congruent to the 16-bit words' sum modulo 2^16-1
// since 2^16 ≡ 1), then the 4-, 2- and 1-byte tail.
func sumGeneric(acc uint64, b []byte) uint64 {
	var c uint64
	if len(b) >= 64 {
		// Two independent carry chains: about twice the speed of one.
		var acc2, c2 uint64
		for len(b) >= 64 {
			acc, c = bits.Add64(acc, binary.LittleEndian.Uint64(b), 0)
			acc, c = bits.Add64(acc, binary.LittleEndian.Uint64(b[8:]), c)
			acc, c = bits.Add64(acc, binary.LittleEndian.Uint64(b[16:]), c)
			acc, c = bits.Add64(acc, binary.LittleEndian.Uint64(b[24:]), c)
			acc2, c2 = bits.Add64(acc2, binary.LittleEndian.Uint64(b[32:]), 0)
			acc2, c2 = bits.Add64(acc2, binary.LittleEndian.Uint64(b[40:]), c2)
			acc2, c2 = bits.Add64(acc2, binary.LittleEndian.Uint64(b[48:]), c2)
			acc2, c2 = bits.Add64(acc2, binary.LittleEndian.Uint64(b[56:]), c2)
			acc, c = bits.Add64(acc, 0, c)
			acc += c
			acc2, c2 = bits.Add64(acc2, 0, c2)
			acc2 += c2
			b = b[64:]
		}
		acc, c = bits.Add64(acc, acc2, 0)
		acc += c
	}
	for len(b) >= 32 {
		acc, c = bits.Add64(acc, binary.LittleEndian.Uint64(b), 0)
		acc, c = bits.Add64(acc, binary.LittleEndian.Uint64(b[8:]), c)
		acc, c = bits.Add64(acc, binary.LittleEndian.Uint64(b[16:]), c)
		acc, c = bits.Add64(acc, binary.LittleEndian.Uint64(b[24:]), c)
		acc, c = bits.Add64(acc, 0, c)
		acc += c
		b = b[32:]
	}
	for len(b) >= 8 {
		acc, c = bits.Add64(acc, binary.LittleEndian.Uint64(b), 0)
		acc += c
		b = b[8:]
	}
	if len(b) >= 4 {
		acc, c = bits.Add64(acc, uint64(binary.LittleEndian.Uint32(b)), 0)
		acc += c
		b = b[4:]
	}
	if len(b) >= 2 {
		acc, c = bits.Add64(acc, uint64(binary.LittleEndian.Uint16(b)), 0)
		acc += c
		b = b[2:]
	}
	if len(b) == 1 {
		acc, c = bits.Add64(acc, uint64(b[0]), 0)
		acc += c
	}
	return acc
}
