//go:build amd64 && gc && !purego

package zucaesni

import (
	"fmt"
	"testing"

	"github.com/emmansun/gmsm/zuc"
	"github.com/gmtun/gmtun/internal/cputime"
	"github.com/gmtun/gmtun/kernels/zuclanes"
)

// BenchmarkEEA3 measures a full 8-lane batch — load keys/IVs, Init and
// XORKeyStream of size bytes on every lane — in CPU time (MB/s count all
// lanes), for these kernels and the x8 GFNI kernels of kernels/zuclanes;
// gmsm's single-lane EEA3 in the same run for reference.
func BenchmarkEEA3(b *testing.B) {
	kernels := []struct {
		name      string
		supported bool
		init      func(*zuclanes.State8)
		xor       func(*zuclanes.State8, *[Lanes][]byte, int)
	}{
		{"x8-AESNI", Supported(), Init, func(s *zuclanes.State8, d *[Lanes][]byte, n int) { XORKeyStream(s, d, d, n) }},
		{"x8-GFNI", zuclanes.X8Supported(), (*zuclanes.State8).Init,
			func(s *zuclanes.State8, d *[Lanes][]byte, n int) { s.XORKeyStream(d, d, n) }},
	}
	for _, size := range []int{64, 576, 1420, 8192} {
		for _, k := range kernels {
			b.Run(fmt.Sprintf("%s/%d", k.name, size), func(b *testing.B) {
				if !k.supported {
					b.Skipf("CPU lacks %s", k.name)
				}
				var st zuclanes.State8
				var bufs [Lanes][]byte
				for c := range bufs {
					bufs[c] = make([]byte, size)
				}
				var key, iv [16]byte
				b.ReportAllocs()
				cputime.Loop(b, size*Lanes, func() {
					for c := range Lanes {
						iv[0] = byte(c)
						st.LoadZUC128(c, &key, &iv)
					}
					k.init(&st)
					k.xor(&st, &bufs, size)
				})
			})
		}
		b.Run(fmt.Sprintf("gmsm-1lane/%d", size), func(b *testing.B) {
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
