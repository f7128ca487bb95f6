package ciphers

import (
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/zuc"
)

// TestZUC128IVs: the word-wise IV builder of the zuc-128 suite equals
// zuc.IVEEA3 / zuc.IVEIA3 (the byte-wise definitions of the standard) for
// both directions, every BEARER and random and edge COUNT values.
func TestZUC128IVs(t *testing.T) {
	rng := newTestRand("zuc128 ivs")
	counters := []uint64{0, 1, 0xffffffff, 1 << 32, 1<<37 - 1, 0x1f_8000_0001}
	for range 2000 {
		counters = append(counters, rng.Uint64()&(1<<37-1))
	}
	for _, c := range counters {
		for dir := uint8(0); dir < 2; dir++ {
			var eea, eia [zuc.IVSize128]byte
			zuc128IVs(&eea, &eia, c, dir)
			count, bearer := zuc128Params(c)
			if want := zuc.IVEEA3(count, bearer, dir); eea != want {
				t.Fatalf("c=%#x dir=%d: EEA3 IV %x, want %x", c, dir, eea, want)
			}
			if want := zuc.IVEIA3(count, bearer, dir); eia != want {
				t.Fatalf("c=%#x dir=%d: EIA3 IV %x, want %x", c, dir, eia, want)
			}
		}
	}
}
