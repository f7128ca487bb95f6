//go:build amd64 && gc && !purego

package sm4

import (
	"crypto/cipher"
	"fmt"
	"testing"

	gmsm4 "github.com/emmansun/gmsm/sm4"

	"github.com/gmtun/gmtun/internal/cputime"
	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

var benchSizes = []int{64, 576, 1420, 8192}

func BenchmarkXORKeyStream(b *testing.B) {
	_, enc, _ := newKey(b, make([]byte, 16))
	for _, tier := range AllTiers {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", tier, n), func(b *testing.B) {
				if !tier.Supported() {
					kerneltest.Unsupported(b, "CPU lacks %s", tier)
				}
				buf := make([]byte, n)
				var ctr [16]byte
				cputime.Loop(b, n, func() { XORKeyStream(tier, enc, &ctr, buf, buf) })
			})
		}
	}
}

func BenchmarkEncryptBlocks(b *testing.B) {
	_, enc, _ := newKey(b, make([]byte, 16))
	for _, tier := range AllTiers {
		b.Run(fmt.Sprintf("%s/8192", tier), func(b *testing.B) {
			if !tier.Supported() {
				kerneltest.Unsupported(b, "CPU lacks %s", tier)
			}
			buf := make([]byte, 8192)
			cputime.Loop(b, len(buf), func() { EncryptBlocks(tier, enc, buf, buf) })
		})
	}
}

// BenchmarkGmsm is the baseline: gmsm v0.40.0's SM4 in crypto/cipher CTR
// and GCM (seal, no additional data).
func BenchmarkGmsm(b *testing.B) {
	blk, err := gmsm4.NewCipher(make([]byte, 16))
	if err != nil {
		b.Fatal(err)
	}
	aead, err := cipher.NewGCM(blk)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("CTR/%d", n), func(b *testing.B) {
			buf := make([]byte, n)
			iv := make([]byte, 16)
			cputime.Loop(b, n, func() { cipher.NewCTR(blk, iv).XORKeyStream(buf, buf) })
		})
		b.Run(fmt.Sprintf("GCM/%d", n), func(b *testing.B) {
			buf := make([]byte, n, n+16)
			nonce := make([]byte, 12)
			cputime.Loop(b, n, func() { aead.Seal(buf[:0], nonce, buf, nil) })
		})
	}
}
