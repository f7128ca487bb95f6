//go:build amd64 && gc && !purego

package sm4bs

import (
	"fmt"
	"testing"

	"github.com/gmtun/gmtun/internal/cputime"
	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
	"github.com/gmtun/gmtun/kernels/sm4ctr"
)

// benchImpl is one SM4 kernel under comparison: a bitsliced form of this
// package (AVX2, 256 blocks a pass; AVX-512, 512) or one of the sm4ctr
// tiers.
type benchImpl struct {
	name      string
	supported bool
	ctr       func(rk *[32]uint32, ctr *[16]byte, dst, src []byte)
	ecb       func(rk *[32]uint32, dst, src []byte)
}

func benchImpls() []benchImpl {
	impls := []benchImpl{
		{"Bitsliced", Supported(), XORKeyStream, EncryptBlocks},
		{"Bitsliced512", Supported512(), XORKeyStream512, EncryptBlocks512},
	}
	for _, t := range sm4ctr.AllTiers {
		impls = append(impls, benchImpl{t.String(), t.Supported(),
			func(rk *[32]uint32, ctr *[16]byte, dst, src []byte) { sm4ctr.XORKeyStream(t, rk, ctr, dst, src) },
			func(rk *[32]uint32, dst, src []byte) { sm4ctr.EncryptBlocks(t, rk, dst, src) }})
	}
	return impls
}

// BenchmarkCTR compares the CTR keystream XOR of every tier: one packet
// (1420 bytes rounded up to 89 whole blocks, which the bitsliced forms pad
// to a 256- or 512-block batch) and 4, 8, 16 and 64 KiB. Read cpu-ns/op and cpu-MB/s
// (thread CPU time) on a shared machine.
func BenchmarkCTR(b *testing.B) {
	_, enc, _ := newKey(b, make([]byte, 16))
	sizes := []struct {
		name string
		n    int
	}{{"pkt89blk", 89 * BlockSize}, {"4KiB", 4 << 10}, {"8KiB", 8 << 10}, {"16KiB", 16 << 10}, {"64KiB", 64 << 10}}
	for _, sz := range sizes {
		for _, im := range benchImpls() {
			b.Run(fmt.Sprintf("%s/%s", sz.name, im.name), func(b *testing.B) {
				if !im.supported {
					kerneltest.Unsupported(b, "CPU lacks %s", im.name)
				}
				buf := make([]byte, sz.n)
				var ctr [16]byte
				cputime.Loop(b, sz.n, func() { im.ctr(enc, &ctr, buf, buf) })
			})
		}
	}
}

// BenchmarkECB compares ECB encryption of one full bitsliced batch of
// each form (4 and 8 KiB).
func BenchmarkECB(b *testing.B) {
	_, enc, _ := newKey(b, make([]byte, 16))
	for _, kib := range []int{4, 8} {
		for _, im := range benchImpls() {
			b.Run(fmt.Sprintf("%dKiB/%s", kib, im.name), func(b *testing.B) {
				if !im.supported {
					kerneltest.Unsupported(b, "CPU lacks %s", im.name)
				}
				buf := make([]byte, kib<<10)
				cputime.Loop(b, len(buf), func() { im.ecb(enc, buf, buf) })
			})
		}
	}
}
