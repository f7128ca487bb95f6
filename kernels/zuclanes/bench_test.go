//go:build amd64 && gc && !purego

package zuclanes

import (
	"fmt"
	"testing"

	"github.com/emmansun/gmsm/zuc"
)

var benchSizes = []int{64, 576, 1420, 8192}

// BenchmarkEEA3 measures a full lane batch: load keys/IVs, Init and
// XORKeyStream of size bytes on every lane. SetBytes counts all lanes.
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
				b.SetBytes(int64(size * tc.lanes))
				b.ReportAllocs()
				for b.Loop() {
					for c := 0; c < tc.lanes; c++ {
						iv[0] = byte(c)
						st.LoadZUC128(c, &key, &iv)
					}
					st.Init()
					tc.xor(st, dst, src, size)
				}
			})
		}
	}
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("gmsm/%d", size), func(b *testing.B) {
			key, iv := make([]byte, 16), make([]byte, 16)
			buf := make([]byte, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				c, err := zuc.NewCipher(key, iv)
				if err != nil {
					b.Fatal(err)
				}
				c.XORKeyStream(buf, buf)
			}
		})
	}
}
