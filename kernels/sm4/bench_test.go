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

// BenchmarkXORPiecesBatch is the keystream of a batch as the SM4-GCM batch
// path of the AVX-512+AES-NI tier hands it over: 64 packets of 1420 bytes,
// each a tag-mask piece and a text piece, on every tier (the packed tiers
// in calls of MaxPieceBlocks), and 64 KiB through XORKeyStream.
func BenchmarkXORPiecesBatch(b *testing.B) {
	_, enc, _ := newKey(b, make([]byte, 16))
	const packets, size = 64, 1420
	bufs := make([]byte, packets*size)
	tags := make([]byte, packets*16)
	ps := make([]Piece, 0, 2*packets)
	for i := range packets {
		ps = append(ps, Piece{Dst: &tags[16*i], N: 16})
		ps = append(ps, Piece{Dst: &bufs[size*i], Src: &bufs[size*i], N: size})
	}
	for _, tier := range AllTiers {
		b.Run(fmt.Sprintf("%s/64x1420", tier), func(b *testing.B) {
			if !tier.Supported() {
				kerneltest.Unsupported(b, "CPU lacks %s", tier)
			}
			cputime.Loop(b, len(bufs), func() { XORPiecesBatch(tier, enc, ps) })
		})
		b.Run(fmt.Sprintf("%s/CTR64KiB", tier), func(b *testing.B) {
			if !tier.Supported() {
				kerneltest.Unsupported(b, "CPU lacks %s", tier)
			}
			buf := make([]byte, 64<<10)
			var ctr [16]byte
			cputime.Loop(b, len(buf), func() { XORKeyStream(tier, enc, &ctr, buf, buf) })
		})
	}
}

// BenchmarkBitslicedPass is one 512-block pass of the bitsliced kernel,
// one call each: ECB (blocks through the input transpose, as
// XORPiecesBatch runs it) against CTR from one counter (counter planes
// built in registers). Read cpu-ns/op.
func BenchmarkBitslicedPass(b *testing.B) {
	if !AVX512AESNI.Supported() {
		kerneltest.Unsupported(b, "CPU lacks %s", AVX512AESNI)
	}
	_, enc, _ := newKey(b, make([]byte, 16))
	var buf [bitslicedPassBytes]byte
	b.Run("ECB", func(b *testing.B) {
		cputime.Loop(b, len(buf), func() { encryptBlocksBitsliced(enc, &buf[0], &buf[0], BitslicedBlocks) })
	})
	b.Run("CTR", func(b *testing.B) {
		var ctr [16]byte
		cputime.Loop(b, len(buf), func() { xorKeyStreamBitsliced(enc, &ctr, &buf[0], &buf[0], BitslicedBlocks) })
	})
}
