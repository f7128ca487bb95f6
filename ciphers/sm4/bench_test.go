package sm4

import (
	"crypto/aes"
	"crypto/cipher"
	"strconv"
	"testing"

	gmsm4 "github.com/emmansun/gmsm/sm4"
)

// Benchmarks of this package next to gmsm v0.40.0 in the same run, so that
// ratios come from one process: BenchmarkGCMSeal/gmtun/1420 vs
// BenchmarkGCMSeal/gmsm/1420 and BenchmarkGCMSeal/aes-std/1420 (Go's
// crypto/aes GCM, the speed anchor). With -tags purego both sides are pure Go
// (gmsm honours the tag too; its GCM is then crypto/cipher's generic GCM).

var benchSizes = []int{64, 576, 1420, 8192}

var benchKey = []byte("0123456789abcdef")

// impls names the two implementations under comparison.
var impls = []struct {
	name  string
	block func() cipher.Block
	ctr   func(iv []byte) cipher.Stream
	gcm   func() cipher.AEAD
}{
	{
		"gmtun",
		func() cipher.Block { b, _ := NewCipher(benchKey); return b },
		func(iv []byte) cipher.Stream { s, _ := NewCTR(benchKey, iv); return s },
		func() cipher.AEAD { a, _ := NewGCM(benchKey); return a },
	},
	{
		"gmsm",
		func() cipher.Block { b, _ := gmsm4.NewCipher(benchKey); return b },
		func(iv []byte) cipher.Stream { b, _ := gmsm4.NewCipher(benchKey); return cipher.NewCTR(b, iv) },
		func() cipher.AEAD { b, _ := gmsm4.NewCipher(benchKey); a, _ := cipher.NewGCM(b); return a },
	},
	{
		// The speed anchor: Go's AES-128 (AES-NI, PCLMULQDQ GCM).
		"aes-std",
		func() cipher.Block { b, _ := aes.NewCipher(benchKey); return b },
		func(iv []byte) cipher.Stream { b, _ := aes.NewCipher(benchKey); return cipher.NewCTR(b, iv) },
		func() cipher.AEAD { b, _ := aes.NewCipher(benchKey); a, _ := cipher.NewGCM(b); return a },
	},
}

// forSizes runs f as sub-benchmarks impl/size.
func forSizes(b *testing.B, f func(b *testing.B, impl int, size int)) {
	for i, impl := range impls {
		for _, size := range benchSizes {
			b.Run(impl.name+"/"+strconv.Itoa(size), func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				f(b, i, size)
			})
		}
	}
}

// BenchmarkBlock encrypts size bytes block by block through cipher.Block.
func BenchmarkBlock(b *testing.B) {
	forSizes(b, func(b *testing.B, i, size int) {
		blk := impls[i].block()
		buf := make([]byte, size)
		for b.Loop() {
			for off := 0; off+BlockSize <= size; off += BlockSize {
				blk.Encrypt(buf[off:], buf[off:])
			}
		}
	})
}

// BenchmarkCTR XORs size bytes of keystream (one fresh stream per packet,
// as a packet cipher would use it).
func BenchmarkCTR(b *testing.B) {
	forSizes(b, func(b *testing.B, i, size int) {
		buf := make([]byte, size)
		iv := make([]byte, BlockSize)
		for b.Loop() {
			impls[i].ctr(iv).XORKeyStream(buf, buf)
		}
	})
}

// BenchmarkGCMSeal seals size bytes in place with 16 bytes of AAD.
func BenchmarkGCMSeal(b *testing.B) {
	forSizes(b, func(b *testing.B, i, size int) {
		a := impls[i].gcm()
		buf := make([]byte, size, size+tagSize)
		nonce, ad := make([]byte, nonceSize), make([]byte, 16)
		for b.Loop() {
			a.Seal(buf[:0], nonce, buf, ad)
		}
	})
}

// BenchmarkGCMOpen opens size bytes (plus tag) in place with 16 bytes of
// AAD.
func BenchmarkGCMOpen(b *testing.B) {
	forSizes(b, func(b *testing.B, i, size int) {
		a := impls[i].gcm()
		nonce, ad := make([]byte, nonceSize), make([]byte, 16)
		sealed := a.Seal(nil, nonce, make([]byte, size), ad)
		buf := make([]byte, len(sealed))
		for b.Loop() {
			copy(buf, sealed)
			if _, err := a.Open(buf[:0], nonce, buf, ad); err != nil {
				b.Fatal(err)
			}
		}
	})
}
