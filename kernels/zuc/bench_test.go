//go:build amd64 && gc && !purego

package zuc

import (
	"fmt"
	"testing"

	"github.com/emmansun/gmsm/zuc"
	"github.com/gmtun/gmtun/internal/cputime"
)

var benchSizes = []int{64, 576, 1420, 8192}

// BenchmarkEEA3 measures a full lane batch: load keys/IVs, Init and
// XORKeyStream of size bytes on every lane, in CPU time (cpu-MB/s counts
// all lanes); gmsm's single-lane EEA3 in the same run for reference.
func BenchmarkEEA3(b *testing.B) {
	for _, tc := range tiers {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", tc.name, size), func(b *testing.B) {
				if !tc.supported {
					b.Skipf("CPU lacks %s", tc.name)
				}
				st := tc.newState()
				dst := make([][]byte, tc.lanes)
				src := make([][]byte, tc.lanes)
				for c := range dst {
					dst[c] = make([]byte, size)
					src[c] = make([]byte, size)
				}
				var key, iv [16]byte
				cputime.Loop(b, size*tc.lanes, func() {
					for c := 0; c < tc.lanes; c++ {
						iv[0] = byte(c)
						st.LoadZUC128(c, &key, &iv)
					}
					st.Init()
					tc.xor(st, dst, src, size)
				})
			})
		}
	}
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("gmsm/%d", size), func(b *testing.B) {
			key, iv := make([]byte, 16), make([]byte, 16)
			buf := make([]byte, size)
			cputime.Loop(b, size, func() {
				c, err := zuc.NewCipher(key, iv)
				if err != nil {
					b.Fatal(err)
				}
				c.XORKeyStream(buf, buf)
			})
		})
	}
}

// BenchmarkRoundCost reports the CPU time of one vector round (all lanes
// of a tier advance one word) for the three round flavours: Init (33
// non-output rounds), KeyStream (words to memory) and XORKeyStream (bytes
// XORed into lane buffers 1484 bytes apart). Lanes sit at offsets that
// are not multiples of 4 KiB (see BenchmarkXORAliasing for those).
func BenchmarkRoundCost(b *testing.B) {
	const words = 1024 // 64 blocks per call
	const stride = words + 16
	for _, tc := range tiers {
		if !tc.supported {
			continue
		}
		st := tc.newState()
		ks := make([]uint32, tc.lanes*stride)
		buf := make([]byte, tc.lanes*(4*words+1484))
		dst := make([][]byte, tc.lanes)
		for c := range dst {
			dst[c] = buf[c*(4*words+1484):][:4*words]
		}
		report := func(b *testing.B, rounds int, f func()) {
			cputime.Loop(b, 4*rounds*tc.lanes, f)
		}
		b.Run(tc.name+"/Init", func(b *testing.B) { report(b, 33, st.Init) })
		b.Run(tc.name+"/KeyStream", func(b *testing.B) {
			report(b, words, func() { st.KeyStream(ks, stride, words) })
		})
		b.Run(tc.name+"/XOR", func(b *testing.B) {
			report(b, words, func() { tc.xor(st, dst, dst, 4*words) })
		})
	}
}

// BenchmarkInitXOR measures the one-call path of the 16-lane tier: load
// keys/IVs, then InitXORKeyStream of size bytes on every lane (buffers
// size+64 bytes apart), or InitKeyStream of the EIA3 keystream of a
// size-byte message; CPU time, all lanes counted.
func BenchmarkInitXOR(b *testing.B) {
	for _, k := range kernels16 {
		for _, size := range benchSizes {
			var st State16
			buf := make([]byte, Lanes16*(size+64))
			var d [Lanes16][]byte
			for c := range d {
				d[c] = buf[c*(size+64):][:size]
			}
			var key, iv [16]byte
			load := func() {
				for c := 0; c < Lanes16; c++ {
					iv[0] = byte(c)
					st.LoadZUC128(c, &key, &iv)
				}
			}
			b.Run(fmt.Sprintf("x16-%s/XOR/%d", k, size), func(b *testing.B) {
				if !k.Supported() {
					b.Skipf("CPU lacks %s", k)
				}
				cputime.Loop(b, size*Lanes16, func() {
					load()
					st.InitXORKeyStream(k, &d, &d)
				})
			})
			words := EIA3KeyStreamWords(8 * size)
			stride := (words + BlockWords - 1) / BlockWords * BlockWords
			ks := make([]uint32, Lanes16*stride)
			b.Run(fmt.Sprintf("x16-%s/KeyStream/%d", k, size), func(b *testing.B) {
				if !k.Supported() {
					b.Skipf("CPU lacks %s", k)
				}
				cputime.Loop(b, size*Lanes16, func() {
					load()
					st.InitKeyStream(k, ks, stride, words, nil)
				})
			})
		}
	}
}

// BenchmarkInitKeyStreamPair compares the paired kernel with the two
// InitKeyStream calls it replaces: two states of 16 ZUC-128 lanes each,
// size bytes of keystream per lane (bytes of both states counted), keys
// and IVs loaded in every iteration; CPU time.
func BenchmarkInitKeyStreamPair(b *testing.B) {
	k := GFNI16
	for _, size := range benchSizes {
		words := (size + 3) / 4
		stride := (words + BlockWords - 1) / BlockWords * BlockWords
		ksA := make([]uint32, Lanes16*stride)
		ksB := make([]uint32, Lanes16*stride)
		ksBytes := make([]byte, 4*Lanes16*stride)
		var s, t State16
		var key, iv [16]byte
		load := func() {
			for c := 0; c < Lanes16; c++ {
				iv[0] = byte(c)
				s.LoadZUC128(c, &key, &iv)
				iv[1] = 1
				t.LoadZUC128(c, &key, &iv)
			}
		}
		b.Run(fmt.Sprintf("two-calls/%d", size), func(b *testing.B) {
			if !k.Supported() {
				b.Skipf("CPU lacks %s", k)
			}
			cputime.Loop(b, 2*Lanes16*size, func() {
				load()
				s.InitKeyStream(k, ksA, stride, words, nil)
				t.InitKeyStream(k, ksB, stride, words, nil)
			})
		})
		b.Run(fmt.Sprintf("pair/%d", size), func(b *testing.B) {
			if !k.Supported() {
				b.Skipf("CPU lacks %s", k)
			}
			cputime.Loop(b, 2*Lanes16*size, func() {
				load()
				s.InitKeyStreamPair(k, &t, ksBytes, ksB, stride, words, nil)
			})
		})
	}
}
