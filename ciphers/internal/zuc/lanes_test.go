package zuc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
)

// laneBatch is one call's worth of random inputs for the batch primitives.
type laneBatch struct {
	key128 [KeySize128]byte
	iv128  [Lanes][IVSize128]byte
	key256 [KeySize256]byte
	iv256  [Lanes][IVSize256]byte
	data   [Lanes][]byte // nil = idle lane
	n      int
}

// newLaneBatch returns random keys and IVs and n lanes of the given
// lengths (-1 = idle lane); every buffer starts 0..3 bytes into its
// allocation so the kernels also see unaligned pointers.
func newLaneBatch(r *rand.Rand, lens []int) *laneBatch {
	b := &laneBatch{n: len(lens)}
	fill(r, b.key128[:])
	fill(r, b.key256[:])
	for i, l := range lens {
		fill(r, b.iv128[i][:])
		fill(r, b.iv256[i][:])
		if l < 0 {
			continue
		}
		off := r.IntN(4)
		buf := make([]byte, off+l)
		fill(r, buf)
		b.data[i] = buf[off : off+l : off+l]
	}
	return b
}

// clone returns copies of the lane buffers (nil stays nil).
func (b *laneBatch) clone() *[Lanes][]byte {
	var out [Lanes][]byte
	for i, d := range b.data {
		if d != nil {
			out[i] = append(make([]byte, 0, len(d)), d...)
		}
	}
	return &out
}

// checkLanes runs every batch primitive on b as dispatched and as the
// generic reference and fails on any difference, including writes to idle
// lanes' tags.
func checkLanes(t *testing.T, b *laneBatch, what string) {
	t.Helper()
	got, want := b.clone(), b.clone()
	XORKeyStreams128(&b.key128, &b.iv128, got, b.n)
	XORKeyStreams128Generic(&b.key128, &b.iv128, want, b.n)
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: XORKeyStreams128 lane %d (len %d) differs from generic", what, i, len(want[i]))
		}
	}
	got, want = b.clone(), b.clone()
	XORKeyStreams256(&b.key256, &b.iv256, got, b.n)
	XORKeyStreams256Generic(&b.key256, &b.iv256, want, b.n)
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: XORKeyStreams256 lane %d (len %d) differs from generic", what, i, len(want[i]))
		}
	}

	var t128, w128 [Lanes]uint32
	for i := range t128 {
		t128[i], w128[i] = 0xdeadbeef, 0xdeadbeef
	}
	msgs := b.clone()
	EIA3Tags(&b.key128, &b.iv128, msgs, &t128, b.n)
	EIA3TagsGeneric(&b.key128, &b.iv128, msgs, &w128, b.n)
	if t128 != w128 {
		t.Fatalf("%s: EIA3Tags = %08x, generic %08x", what, t128, w128)
	}
	var t256, w256 [Lanes][MAC256TagSize]byte
	for i := range t256 {
		t256[i][0], w256[i][0] = 0xa5, 0xa5
	}
	MAC256Tags(&b.key256, &b.iv256, msgs, &t256, b.n)
	MAC256TagsGeneric(&b.key256, &b.iv256, msgs, &w256, b.n)
	if t256 != w256 {
		t.Fatalf("%s: MAC256Tags differ from generic:\n got %x\nwant %x", what, t256, w256)
	}
	for i := range msgs {
		if !bytes.Equal(msgs[i], b.data[i]) {
			t.Fatalf("%s: a MAC primitive modified message %d", what, i)
		}
	}
}

func TestLanesEqualLengths(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		lengths := []int{4095, 4096, 4097, 4112, 4140, 8192, 65535}
		step := 1
		if testing.Short() {
			step = 13
		}
		for l := 0; l <= 320; l += step {
			lengths = append(lengths, l)
		}
		for l := 321; l < 4096; l += 37 * step {
			lengths = append(lengths, l)
		}
		for _, l := range lengths {
			for _, n := range []int{1, 2, Lanes} {
				if l >= 8192 && n == 2 {
					continue
				}
				lens := make([]int, n)
				for i := range lens {
					lens[i] = l
				}
				checkLanes(t, newLaneBatch(r, lens), fmt.Sprintf("%d lanes of %d bytes", n, l))
			}
		}
	})
}

func TestLanesMixed(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		rounds := 300
		if testing.Short() {
			rounds = 40
		}
		for round := range rounds {
			n := r.IntN(Lanes + 1)
			lens := make([]int, n)
			for i := range lens {
				switch r.IntN(8) {
				case 0:
					lens[i] = -1 // idle
				case 1:
					lens[i] = r.IntN(8) // partial words, empty
				case 2:
					lens[i] = 1420 - r.IntN(4)
				case 3:
					lens[i] = 4000 + r.IntN(300) // around the MAC scratch limit
				default:
					lens[i] = r.IntN(1437)
				}
			}
			checkLanes(t, newLaneBatch(r, lens), fmt.Sprintf("round %d lens %v", round, lens))
		}
		// One long lane among short ones, and the x8 halves unevenly used.
		checkLanes(t, newLaneBatch(r, []int{65535, 3, 64, 64, 7, -1, 0, 1}), "one long lane")
		checkLanes(t, newLaneBatch(r, []int{-1, -1, -1, -1, -1, -1, -1, -1, 100, 200, 300}), "upper half only")
		checkLanes(t, newLaneBatch(r, []int{5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 9}), "sparse")
	})
}

func TestLanesAllocs(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		lens := make([]int, Lanes)
		for i := range lens {
			lens[i] = 1400 + i
		}
		b := newLaneBatch(r, lens)
		bufs := b.clone()
		var t128 [Lanes]uint32
		var t256 [Lanes][MAC256TagSize]byte
		a := testing.AllocsPerRun(20, func() {
			XORKeyStreams128(&b.key128, &b.iv128, bufs, b.n)
			EIA3Tags(&b.key128, &b.iv128, bufs, &t128, b.n)
			XORKeyStreams256(&b.key256, &b.iv256, bufs, b.n)
			MAC256Tags(&b.key256, &b.iv256, bufs, &t256, b.n)
		})
		if a != 0 {
			t.Errorf("%v allocations per batch, want 0", a)
		}
	})
}

// FuzzLanes compares the dispatched batch primitives with the generic ones
// on fuzzer-chosen lane counts and lengths (the seed corpus runs in go
// test).
func FuzzLanes(f *testing.F) {
	f.Add(uint64(1), []byte{16, 0, 5, 200, 255, 3})
	f.Add(uint64(2), []byte{100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100})
	f.Add(uint64(3), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint64(4), []byte{255, 0})
	f.Fuzz(func(t *testing.T, seed uint64, shape []byte) {
		r := rand.New(rand.NewPCG(seed, 9))
		n := min(len(shape), Lanes)
		lens := make([]int, n)
		for i := range lens {
			// 0..2295 bytes, with idle lanes for 0xff.
			lens[i] = int(shape[i]) * 9
			if shape[i] == 0xff {
				lens[i] = -1
			}
		}
		checkLanes(t, newLaneBatch(r, lens), fmt.Sprintf("lens %v", lens))
	})
}
