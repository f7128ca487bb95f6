package csum

import (
	"fmt"
	"testing"

	"github.com/gmtun/gmtun/internal/cputime"
)

// benchSizes: an IPv4+TCP header (40), a small packet, the IPv4 minimum
// MTU payload, TSO segments at MTU 1500 with and without TCP timestamps,
// a jumbo frame and a 64 KiB super-packet.
var benchSizes = []int{40, 64, 576, 1420, 1448, 9000, 65536}

// sink keeps the sums alive.
var sink uint64

func BenchmarkSum(b *testing.B) {
	for _, tier := range AllTiers {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%v/%d", tier, n), func(b *testing.B) {
				if !tier.Supported() {
					b.Skipf("CPU lacks %v", tier)
				}
				buf := make([]byte, n)
				cputime.Loop(b, n, func() { sink += tier.Sum(0, buf) })
			})
		}
	}
}

func BenchmarkCopySum(b *testing.B) {
	for _, tier := range AllTiers {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%v/%d", tier, n), func(b *testing.B) {
				if !tier.Supported() {
					b.Skipf("CPU lacks %v", tier)
				}
				src, dst := make([]byte, n), make([]byte, n)
				cputime.Loop(b, n, func() { sink += tier.CopySum(dst, src, 0) })
			})
		}
	}
	// What CopySum replaces: copy, then the portable sum.
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("copy+generic/%d", n), func(b *testing.B) {
			src, dst := make([]byte, n), make([]byte, n)
			cputime.Loop(b, n, func() {
				copy(dst, src)
				sink += sumGeneric(0, dst)
			})
		})
	}
	// The dispatched entry points (the kernel from minKernelLen on).
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("dispatch/%d", n), func(b *testing.B) {
			src, dst := make([]byte, n), make([]byte, n)
			cputime.Loop(b, n, func() { sink += CopySum(dst, src, 0) })
		})
	}
}
