//go:build amd64 && gc && !purego

package zuc

import (
	"fmt"
	"testing"

	"github.com/emmansun/gmsm/zuc"
)

// macBenchModes are the benchmarked MACs: tag bytes 0 means 128-EIA3.
var macBenchModes = []struct {
	name     string
	tagBytes int
}{{"EIA3", 0}, {"MAC32", 4}, {"MAC64", 8}, {"MAC128", 16}}

func macWords(bits, tagBytes int) int {
	if tagBytes == 0 {
		return EIA3KeyStreamWords(bits)
	}
	return MAC256KeyStreamWords(bits, tagBytes)
}

// BenchmarkMACTag measures the tag alone from precomputed keystream words,
// per kernel path. SetBytes counts message bytes.
func BenchmarkMACTag(b *testing.B) {
	for _, wide := range []bool{false, true} {
		path := "CLMUL"
		if wide {
			path = "AVX512"
		}
		for _, mode := range macBenchModes {
			for _, size := range benchSizes {
				b.Run(fmt.Sprintf("%s/%s/%d", path, mode.name, size), func(b *testing.B) {
					if !useMAC || (wide && !MACWide()) {
						b.Skipf("CPU lacks the %s MAC path", path)
					}
					saved := useMACAVX512
					useMACAVX512 = wide
					defer func() { useMACAVX512 = saved }()
					msg := make([]byte, size)
					ks := make([]uint32, macWords(8*size, mode.tagBytes))
					tag := make([]byte, 16)
					var sink uint32
					b.SetBytes(int64(size))
					b.ReportAllocs()
					for b.Loop() {
						if mode.tagBytes == 0 {
							sink ^= EIA3Tag(msg, 8*size, ks)
						} else {
							MAC256Tag(msg, 8*size, ks, tag[:mode.tagBytes])
						}
					}
					_ = sink
				})
			}
		}
	}
}

// BenchmarkMACBatch measures a full batch of MAC lanes on the 16-lane
// kernels: load 16 keys/IVs, Init, KeyStream of the MAC's word count on
// every lane, then 16 tags (dispatched path). SetBytes counts all lanes'
// message bytes. The gmsm rows compute one tag per packet (key setup
// included), as a per-packet MAC would.
func BenchmarkMACBatch(b *testing.B) {
	for _, mode := range []struct {
		name     string
		tagBytes int
	}{macBenchModes[0], macBenchModes[3]} {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("x16/%s/%d", mode.name, size), func(b *testing.B) {
				k := GFNI16
				if !k.Supported() {
					k = AESNI16
				}
				if !k.Supported() || !useMAC {
					b.Skip("CPU lacks the 16-lane or MAC kernels")
				}
				st := new(State16)
				words := macWords(8*size, mode.tagBytes)
				ks := make([]uint32, Lanes16*words)
				msgs := make([][]byte, Lanes16)
				for c := range msgs {
					msgs[c] = make([]byte, size)
				}
				var key128, iv128 [16]byte
				var key256 [32]byte
				var iv256 [23]byte
				var tags [Lanes16][16]byte
				var eia [Lanes16]uint32
				b.SetBytes(int64(size * Lanes16))
				b.ReportAllocs()
				for b.Loop() {
					for c := 0; c < Lanes16; c++ {
						if mode.tagBytes == 0 {
							iv128[0] = byte(c)
							st.LoadZUC128(c, &key128, &iv128)
						} else {
							iv256[0] = byte(c)
							st.LoadZUC256(c, &key256, &iv256, ZUC256MAC128)
						}
					}
					st.Init(k)
					st.KeyStream(k, ks, words, words)
					for c := 0; c < Lanes16; c++ {
						lane := ks[c*words : (c+1)*words]
						if mode.tagBytes == 0 {
							eia[c] = EIA3Tag(msgs[c], 8*size, lane)
						} else {
							MAC256Tag(msgs[c], 8*size, lane, tags[c][:mode.tagBytes])
						}
					}
				}
			})
			b.Run(fmt.Sprintf("gmsm/%s/%d", mode.name, size), func(b *testing.B) {
				msg := make([]byte, size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					var h zuc.EIA
					var err error
					if mode.tagBytes == 0 {
						h, err = zuc.NewHash(make([]byte, 16), make([]byte, 16))
					} else {
						h, err = zuc.NewHash256(make([]byte, 32), make([]byte, 23), mode.tagBytes)
					}
					if err != nil {
						b.Fatal(err)
					}
					h.Finish(msg, 8*size)
				}
			})
		}
	}
}
