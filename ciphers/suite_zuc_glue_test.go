package ciphers

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"

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

// TestZUCOpenSmallForged covers the small-batch open path of both zuc
// suites (1..4 packets in one lane call that generates the keystream
// before the tags are checked) and the batch sizes around it, on every
// implementation: batches of all-genuine, all-forged and mixed packets
// (every tampering of testSuiteTamper), at MTU-sized, short, empty and
// long bodies. Every forged packet must be rejected and left byte for
// byte as it arrived, every genuine one verified and decrypted.
func TestZUCOpenSmallForged(t *testing.T) {
	for _, s := range []suiteUnderTest{zuc128Suite, zuc256Suite} {
		t.Run(s.ID.String(), func(t *testing.T) {
			impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
				testZUCOpenSmallForged(t, s)
			})
		})
	}
}

func testZUCOpenSmallForged(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("open small forged " + s.ID.String())
	p := s.ID.Params()
	key := s.newKey(t, randomDirectionKeys(rng, s.ID))
	sizes := []int{0, 1, 15, 64, 576, 1420, 1424, 1500, 1520, 3000}
	for _, n := range []int{1, 2, 3, 4, 5, 8, 9, 16, 17} {
		for _, size := range sizes {
			for pattern := range 3 { // all genuine, all forged, mixed
				tm := tamperings[rng.IntN(len(tamperings))]
				pkts := make([][]byte, n)
				c0 := rng.Uint64N(1 << 30)
				for i := range pkts {
					body := make([]byte, max(0, size-rng.IntN(3)))
					fillRandom(rng, body)
					pkts[i] = makePacket(c0+uint64(i), 7, body, p.TagSize+1)
				}
				sealed := sealBatch(t, key, pkts)
				tampered := make([]bool, n)
				for i := range sealed {
					if pattern == 1 || pattern == 2 && rng.IntN(2) == 0 {
						sealed[i], tampered[i] = tm.f(rng, sealed[i], p.TagSize)
					}
				}
				arrived := clonePackets(sealed)
				mask := key.Open(sealed)
				what := fmt.Sprintf("%d packets of %d bytes, pattern %d, %s", n, size, pattern, tm.name)
				for i := range sealed {
					switch {
					case tampered[i] && mask.Has(i):
						t.Fatalf("%s: forged packet %d verified", what, i)
					case tampered[i] && !bytes.Equal(sealed[i], arrived[i]):
						t.Fatalf("%s: forged packet %d was modified", what, i)
					case !tampered[i] && !mask.Has(i):
						t.Fatalf("%s: genuine packet %d rejected", what, i)
					case !tampered[i] && !bytes.Equal(sealed[i], pkts[i]):
						t.Fatalf("%s: genuine packet %d decrypted wrongly", what, i)
					}
				}
			}
		}
	}
}
