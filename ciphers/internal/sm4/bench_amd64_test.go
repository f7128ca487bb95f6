//go:build amd64 && gc && !purego

package sm4

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"testing"

	gmsm4 "github.com/emmansun/gmsm/sm4"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/internal/cputime"
)

// BenchmarkBatchCPU measures SealBatch and OpenBatch of 64 packets (16-byte
// additional data, in place, the shape of the sm4-gcm suite), and of a
// single 1420-byte packet, per
// implementation in thread CPU time, next to Go's AES-128-GCM and gmsm's
// SM4-GCM sealing the same packets one by one, so that the ratios of the
// performance targets come from one run. Compare the cpu-MB/s medians of
// -count 6.
func BenchmarkBatchCPU(b *testing.B) {
	shapes := []struct{ n, size int }{{64, 64}, {64, 576}, {64, 1420}, {64, 8192}, {1, 1420}}
	for _, sh := range shapes {
		n, size := sh.n, sh.size
		name := fmt.Sprintf("%dx%d", n, size)
		for _, ref := range []struct {
			name string
			new  func() (cipher.Block, error)
		}{
			{"aes-gcm-std", func() (cipher.Block, error) { return aes.NewCipher(make([]byte, 16)) }},
			{"gmsm", func() (cipher.Block, error) { return gmsm4.NewCipher(make([]byte, 16)) }},
		} {
			b.Run(ref.name+"/seal/"+name, func(b *testing.B) {
				blk, err := ref.new()
				if err != nil {
					b.Fatal(err)
				}
				aead, err := cipher.NewGCM(blk)
				if err != nil {
					b.Fatal(err)
				}
				bufs := make([][]byte, n)
				for i := range bufs {
					bufs[i] = make([]byte, 16+size+16)
				}
				nonce := make([]byte, 12)
				cputime.Loop(b, n*size, func() {
					for _, p := range bufs {
						aead.Seal(p[16:16], nonce, p[16:16+size], p[:16])
					}
				})
			})
		}
		for _, impl2 := range append(impl.List(ImplPackage), impl.Generic) {
			for _, open := range []bool{false, true} {
				op := "seal"
				if open {
					op = "open"
				}
				b.Run(impl2+"/"+op+"/"+name, func(b *testing.B) {
					if !impl.Select(ImplPackage, impl2) {
						b.Skipf("CPU lacks %s", impl2)
					}
					defer impl.Reset(ImplPackage)
					g, err := NewGCM(make([]byte, 16))
					if err != nil {
						b.Fatal(err)
					}
					ps := make([]Packet, n)
					for i := range ps {
						buf := make([]byte, 16+size+16)
						ps[i] = Packet{AAD: buf[:16], Text: buf[16 : 16+size], Tag: (*[TagSize]byte)(buf[16+size:])}
						ps[i].Nonce[11] = byte(i)
					}
					ok := make([]bool, n)
					if open {
						g.SealBatch(ps)
						saved := make([][]byte, n)
						for i := range ps {
							saved[i] = append([]byte(nil), ps[i].Text...)
						}
						cputime.Loop(b, n*size, func() {
							for i := range ps {
								copy(ps[i].Text, saved[i])
							}
							g.OpenBatch(ps, ok)
						})
						for i := range ok {
							if !ok[i] {
								b.Fatalf("packet %d did not verify", i)
							}
						}
						return
					}
					cputime.Loop(b, n*size, func() { g.SealBatch(ps) })
				})
			}
		}
	}
}
