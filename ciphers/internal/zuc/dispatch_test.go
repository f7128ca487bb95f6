package zuc

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
)

// dispatchShapes are the batch shapes an attacker can force on the data
// plane: lone packets of every size class (partial words, past the MTU
// keystream buffer, past the 2 KiB lane buffer, jumbo), groups with one
// long packet among short ones (15 forged short packets beside a real
// long one), groups of 5–8 with one long packet, and ragged tails.
func dispatchShapes() [][]int {
	shapes := [][]int{}
	for _, l := range []int{1, 2, 3, 4, 5, 7, 63, 64, 65, 100, 1419, 1420, 1500, 1533, 1600, 2041, 2048, 2100, 4096, 9000} {
		shapes = append(shapes, []int{l})
	}
	for _, long := range []int{1600, 2100, 9000} {
		for _, n := range []int{2, 4, 5, 6, 7, 8, 9, 16} {
			lens := make([]int, n)
			for i := range lens {
				lens[i] = 60 + i
			}
			lens[n/2] = long
			shapes = append(shapes, lens)
		}
	}
	shapes = append(shapes,
		[]int{1, 2, 3},                  // all partial words
		[]int{5, 9, 13, 17, 21, 25, 29}, // ragged tails, one 8-lane state
		[]int{-1, 1500, -1, 3},          // idle lanes
		[]int{1500, 1501, 1502, 1503, 1504, 1505, 1506, 1507, 1508, 1509, 1510, 1511, 1512, 1513, 1514, 1515},
	)
	return shapes
}

// runAllPrimitives runs every batch primitive on b, on fresh memory and on
// a Scratch, including forged opens.
func runAllPrimitives(b *laneBatch, sc *Scratch) {
	split := func(msgs *[Lanes][]byte) *[Lanes][]byte {
		var bodies [Lanes][]byte
		for i, m := range msgs {
			if m != nil {
				bodies[i] = m[min(len(m), 16):]
			}
		}
		return &bodies
	}
	var t128 [Lanes]uint32
	var t256 [Lanes][MAC256TagSize]byte
	sc.XORKeyStreams128(&b.key128, &b.iv128, b.clone(), b.n)
	sc.XORKeyStreams256(&b.key256, &b.iv256, b.clone(), b.n)
	sc.EIA3Tags(&b.key128, &b.iv128, b.clone(), &t128, b.n)
	sc.MAC256Tags(&b.key256, &b.iv256, b.clone(), &t256, b.n)
	m := b.clone()
	sc.EncryptThenMAC128(&b.key128, &b.key128b, &b.iv128, &b.iv128, split(m), m, &t128, b.n)
	sc.VerifyThenDecrypt128(&b.key128, &b.key128b, &b.iv128, &b.iv128, split(m), m, &t128, b.n)
	t128[0] ^= 1
	sc.VerifyThenDecrypt128(&b.key128, &b.key128b, &b.iv128, &b.iv128, split(m), m, &t128, b.n)
	m = b.clone()
	sc.EncryptThenMAC256(&b.key256, &b.key256b, &b.iv256, split(m), m, &t256, b.n)
	sc.VerifyThenDecrypt256(&b.key256, &b.key256b, &b.iv256, split(m), m, &t256, b.n)
	t256[0][0] ^= 1
	sc.VerifyThenDecrypt256(&b.key256, &b.key256b, &b.iv256, split(m), m, &t256, b.n)
	if sc == nil {
		noScratch.XORKeyStreams128(&b.key128, &b.iv128, b.clone(), b.n)
		noScratch.XORKeyStreams256(&b.key256, &b.iv256, b.clone(), b.n)
		noScratch.EIA3Tags(&b.key128, &b.iv128, b.clone(), &t128, b.n)
		noScratch.MAC256Tags(&b.key256, &b.iv256, b.clone(), &t256, b.n)
		m = b.clone()
		noScratch.EncryptThenMAC128(&b.key128, &b.key128b, &b.iv128, &b.iv128, split(m), m, &t128, b.n)
		m = b.clone()
		noScratch.EncryptThenMAC256(&b.key256, &b.key256b, &b.iv256, split(m), m, &t256, b.n)
	}
}

// TestLaneTiersNeverRunPortableCore proves the dispatch half of the
// constant-time promise: while a lane tier is selected, no batch
// primitive, for any shape of batch an attacker can force (lone, long,
// partial-word and mixed-length packets, forged tags), runs the portable
// single-lane core — every keystream word, key and IV load comes from the
// lane kernels. On the generic tier the same calls must reach the
// portable core (the hook works). The outputs themselves are compared
// with the generic primitives by the other lane tests.
func TestLaneTiersNeverRunPortableCore(t *testing.T) {
	var calls atomic.Int64
	coreHook = func() { calls.Add(1) }
	defer func() { coreHook = nil }()
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		generic := impl.Selected("zuc") == impl.Generic
		r := rand.New(rand.NewPCG(10, 1))
		for _, lens := range dispatchShapes() {
			b := newLaneBatch(r, lens)
			var sc Scratch
			for _, s := range []*Scratch{nil, &sc} {
				calls.Store(0)
				runAllPrimitives(b, s)
				got := calls.Load()
				switch {
				case generic && got == 0:
					t.Fatalf("lengths %v: the generic tier never entered the portable core (hook broken)", lens)
				case !generic && got != 0:
					t.Errorf("lengths %v (scratch %v): %d entries into the portable core on tier %s",
						lens, s != nil, got, impl.Selected("zuc"))
				}
			}
		}
	})
}

// TestDispatchShapesMatchGeneric checks the dispatched primitives against
// the generic ones on the shapes of TestLaneTiersNeverRunPortableCore.
func TestDispatchShapesMatchGeneric(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(10, 2))
		for _, lens := range dispatchShapes() {
			checkLanes(t, newLaneBatch(r, lens), fmt.Sprintf("lengths %v", lens))
		}
	})
}
