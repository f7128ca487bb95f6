package ciphers

import (
	"fmt"
	"testing"

	"github.com/gmtun/gmtun/internal/cputime"
)

// BenchmarkSuiteBatches measures Seal and Open of every suite (on the
// implementation selected for this CPU) at the batch sizes where the
// suite code's own per-batch and per-packet work weighs most: one packet,
// a small batch of short packets (smallBatch's stack descriptors), and
// full batches of short packets, next to 64 × 1420 bytes. It reports the
// thread's CPU time (cputime.Loop), which contention on a shared machine
// disturbs far less than wall-clock time.
func BenchmarkSuiteBatches(b *testing.B) {
	shapes := []struct{ n, size int }{{1, 1420}, {1, 64}, {8, 64}, {64, 64}, {MaxBatch, 64}, {64, 1420}}
	for _, id := range Suites {
		rng := newTestRand("bench batches " + id.String())
		key := suiteUnderTest{ID: id}.newKey(b, randomDirectionKeys(rng, id))
		for _, sh := range shapes {
			pkts := make([][]byte, sh.n)
			for i := range pkts {
				pkts[i] = makePacket(uint64(i), 1, make([]byte, sh.size), id.Params().TagSize)
			}
			reset := func() {
				for i := range pkts {
					pkts[i] = pkts[i][:HeaderSize+sh.size]
				}
			}
			name := fmt.Sprintf("%s/%dx%d", id, sh.n, sh.size)
			b.Run(name+"/seal", func(b *testing.B) {
				cputime.Loop(b, sh.n*sh.size, func() {
					reset()
					if err := key.Seal(pkts); err != nil {
						b.Fatal(err)
					}
				})
			})
			reset()
			sealed := sealBatch(b, key, pkts)
			b.Run(name+"/open", func(b *testing.B) {
				cputime.Loop(b, sh.n*sh.size, func() {
					for i := range pkts {
						pkts[i] = pkts[i][:len(sealed[i])]
						copy(pkts[i], sealed[i])
					}
					if m := key.Open(pkts); m.Count() != sh.n {
						b.Fatal("Open rejected a sealed packet")
					}
				})
			})
		}
	}
}
