package zuc

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/internal/cputime"
)

// BenchmarkLone measures the shapes that used to fall back to the
// single-lane table core on the lane tiers (a lone packet of each size
// class, a group of 8 with one long packet), per implementation, in CPU
// time: the cost of keeping every packet on the lane kernels.
func BenchmarkLone(b *testing.B) {
	r := rand.New(rand.NewPCG(30, 1))
	names := append(impl.List("zuc"), impl.Generic)
	defer impl.Reset("zuc")
	shapes := [][]int{{64}, {1420}, {1600}, {2100}, {9000}, {60, 61, 62, 63, 9000, 65, 66, 67}}
	for _, lens := range shapes {
		g := newLaneBatch(r, lens)
		total := 0
		var bodies [Lanes][]byte
		for i, l := range lens {
			total += l
			bodies[i] = g.data[i][16:]
		}
		n := len(lens)
		var t128 [Lanes]uint32
		var t256 [Lanes][MAC256TagSize]byte
		prims := []struct {
			name string
			f    func()
		}{
			{"EEA3", func() { noScratch.XORKeyStreams128(&g.key128, &g.iv128, &g.data, n) }},
			{"ETM128", func() {
				noScratch.EncryptThenMAC128(&g.key128, &g.key128b, &g.iv128, &g.iv128, &bodies, &g.data, &t128, n)
			}},
			{"OPEN128", func() {
				(*Scratch)(nil).VerifyThenDecrypt128(&g.key128, &g.key128b, &g.iv128, &g.iv128, &bodies, &g.data, &t128, n)
			}},
			{"ETM256", func() {
				noScratch.EncryptThenMAC256(&g.key256, &g.key256b, &g.iv256, &bodies, &g.data, &t256, n)
			}},
		}
		for _, p := range prims {
			for _, name := range names {
				if !impl.Select("zuc", name) {
					continue
				}
				label := fmt.Sprint(lens[0])
				if n > 1 {
					label = fmt.Sprintf("%dwith%d", n, lens[4])
				}
				b.Run(fmt.Sprintf("%s/%s/%s", p.name, label, name), func(b *testing.B) {
					impl.Select("zuc", name)
					cputime.Loop(b, total, p.f)
				})
			}
		}
	}
}
