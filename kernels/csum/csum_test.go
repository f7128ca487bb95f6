package csum

import (
	"bytes"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/kernels/cpu"
	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// refFold is the folded checksum of acc followed by b, computed the naive
// way of RFC 1071 §4.1 from its definition: the little-endian 16-bit
// words of b (a last odd byte as a word with a zero high byte) added to
// acc modulo 2^16-1, in network order. Like Fold, it is 0 only when acc
// and every byte are zero; any other sum ≡ 0 is 0xffff (one's-complement
// "negative zero"), which is what end-around carry arithmetic yields.
func refFold(acc uint64, b []byte) uint16 {
	zero := acc == 0
	s := acc % 0xffff
	for i := 0; i < len(b); i += 2 {
		w := uint64(b[i])
		if i+1 < len(b) {
			w |= uint64(b[i+1]) << 8
		}
		if w != 0 {
			zero = false
		}
		s = (s + w) % 0xffff
	}
	if zero {
		return 0
	}
	if s == 0 {
		s = 0xffff
	}
	return bits.ReverseBytes16(uint16(s))
}

// forEachTier runs f for every tier, a visible skip (or a failure under
// GMTUN_REQUIRE_IMPLS) for a tier the CPU lacks.
func forEachTier(t *testing.T, f func(t *testing.T, tier Tier)) {
	for _, tier := range AllTiers {
		t.Run(tier.String(), func(t *testing.T) {
			if !tier.Supported() {
				kerneltest.Unsupported(t, "CPU lacks %s (kernels/cpu flags say no, or the build has no kernels)", tier)
			}
			f(t, tier)
		})
	}
}

// randomAcc returns a starting sum: often 0, often near 2^64 (every carry
// out of the first add), else random.
func randomAcc(r *rand.Rand) uint64 {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return math.MaxUint64 - r.Uint64N(1<<16)
	case 2:
		return r.Uint64N(1 << 16)
	}
	return r.Uint64()
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestReferenceKnown(t *testing.T) {
	// RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2.
	ex := []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}
	for _, c := range []struct {
		acc  uint64
		b    []byte
		want uint16
	}{
		{0, ex, 0xddf2},
		{0, nil, 0},
		{0, make([]byte, 100), 0},
		{0, []byte{0xff, 0xff}, 0xffff},
		{0, []byte{0x12}, 0x1200},            // odd byte: the high byte in network order
		{0xffff, nil, 0xffff},                // ≡ 0, not zero
		{math.MaxUint64, nil, 0xffff},        // ≡ 0 (2^64-1 is a multiple of 2^16-1)
		{0x0102_0000_0000_0000, nil, 0x0201}, // 2^48 ≡ 1: 0x0102 in the little-endian view
	} {
		if got := refFold(c.acc, c.b); got != c.want {
			t.Errorf("refFold(%#x, % x) = %04x, want %04x", c.acc, c.b, got, c.want)
		}
		if got := Fold(Generic.Sum(c.acc, c.b)); got != c.want {
			t.Errorf("Fold(Generic.Sum(%#x, % x)) = %04x, want %04x", c.acc, c.b, got, c.want)
		}
	}
}

func TestFold(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 100000 {
		acc := r.Uint64()
		if r.IntN(8) == 0 {
			acc >>= r.UintN(64)
		}
		if got, want := Fold(acc), refFold(acc, nil); got != want {
			t.Fatalf("Fold(%#x) = %04x, want %04x", acc, got, want)
		}
	}
}

// TestGenericMatchesReference: the portable code against the naive sum on
// every length 0..4096, with random, all-0xff and all-zero data, random
// starting sums (including ones near 2^64) and offsets.
func TestGenericMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 4096+64)
	for n := 0; n <= 4096; n++ {
		off := r.IntN(64)
		b := buf[off : off+n]
		fillPattern(r, b, n)
		acc := randomAcc(r)
		if got, want := Fold(sumGeneric(acc, b)), refFold(acc, b); got != want {
			t.Fatalf("len %d acc %#x: %04x, want %04x", n, acc, got, want)
		}
	}
}

// fillPattern fills b with random bytes, or every 7th length all 0xff
// (a carry out of every add) and every 11th all zero.
func fillPattern(r *rand.Rand, b []byte, n int) {
	switch {
	case n%7 == 3:
		for i := range b {
			b[i] = 0xff
		}
	case n%11 == 5:
		clear(b)
	default:
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	}
}

// TestTiersAllLengths: every tier's Sum and CopySum against the
// reference and the portable code on every length 0..4096, with unaligned
// source and destination offsets; CopySum writes exactly dst[:len(src)].
func TestTiersAllLengths(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.New(rand.NewPCG(3, 4))
		sbuf := make([]byte, 4096+64)
		dbuf := make([]byte, 4096+64+16)
		for n := 0; n <= 4096; n++ {
			so, do := r.IntN(64), r.IntN(64)
			src := sbuf[so : so+n]
			fillPattern(r, src, n)
			acc := randomAcc(r)
			want := refFold(acc, src)
			if g := Fold(sumGeneric(acc, src)); g != want {
				t.Fatalf("len %d: generic %04x, reference %04x", n, g, want)
			}
			if got := Fold(tier.Sum(acc, src)); got != want {
				t.Fatalf("Sum len %d off %d acc %#x: %04x, want %04x", n, so, acc, got, want)
			}
			for i := range dbuf {
				dbuf[i] = 0xa5
			}
			orig := append([]byte(nil), src...)
			dst := dbuf[do : do+n+16] // longer than src: only its first n bytes change
			if got := Fold(tier.CopySum(dst, src, acc)); got != want {
				t.Fatalf("CopySum len %d offs %d/%d acc %#x: %04x, want %04x", n, so, do, acc, got, want)
			}
			if !bytes.Equal(dst[:n], src) || !bytes.Equal(src, orig) {
				t.Fatalf("CopySum len %d offs %d/%d: dst is not a copy of src, or src changed", n, so, do)
			}
			for i, c := range dbuf {
				if (i < do || i >= do+n) && c != 0xa5 {
					t.Fatalf("CopySum len %d offs %d/%d: byte %d outside dst[:len(src)] written", n, so, do, i)
				}
			}
		}
	})
}

// TestTiersOffsets: every pair of source and destination offsets 0..63
// for lengths around the kernels' steps (32-byte vectors, 128-byte
// iterations, the scalar tail), odd ones included.
func TestTiersOffsets(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.New(rand.NewPCG(5, 6))
		sbuf := make([]byte, 2048)
		dbuf := make([]byte, 2048)
		for _, n := range []int{1, 7, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 576, 1420, 1448, 1449} {
			for so := range 64 {
				for do := range 64 {
					src := sbuf[so : so+n]
					for i := range src {
						src[i] = byte(r.Uint32())
					}
					acc := randomAcc(r)
					want := refFold(acc, src)
					if got := Fold(tier.Sum(acc, src)); got != want {
						t.Fatalf("Sum len %d off %d: %04x, want %04x", n, so, got, want)
					}
					dst := dbuf[do : do+n]
					clear(dst)
					if got := Fold(tier.CopySum(dst, src, acc)); got != want || !bytes.Equal(dst, src) {
						t.Fatalf("CopySum len %d offs %d/%d: %04x, want %04x (copy equal: %v)", n, so, do, got, want, bytes.Equal(dst, src))
					}
				}
			}
		}
	})
}

// TestTiersHuge: megabytes of all-0xff (a carry out of every 64-bit add,
// every lane at its maximum) and random data, odd lengths, starting sums
// near 2^64: the kernels' lane arithmetic over 2^15 and more iterations.
func TestTiersHuge(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.New(rand.NewPCG(9, 10))
		for _, n := range []int{1 << 20, 1<<20 + 13, 3<<20 + 1, 9<<20 + 6} {
			for _, ff := range []bool{true, false} {
				src := make([]byte, n)
				if ff {
					for i := range src {
						src[i] = 0xff
					}
				} else {
					for i := range src {
						src[i] = byte(r.Uint32())
					}
				}
				acc := math.MaxUint64 - uint64(r.IntN(3))
				want := refFold(acc, src)
				if got := Fold(tier.Sum(acc, src)); got != want {
					t.Fatalf("Sum len %d 0xff %v: %04x, want %04x", n, ff, got, want)
				}
				dst := make([]byte, n)
				if got := Fold(tier.CopySum(dst, src, acc)); got != want || !bytes.Equal(dst, src) {
					t.Fatalf("CopySum len %d 0xff %v: %04x, want %04x (copy equal: %v)", n, ff, got, want, bytes.Equal(dst, src))
				}
			}
		}
	})
}

// TestPiecesAcrossTiers: a sum taken in even-length pieces, each on any
// tier and the last possibly odd, folds like the sum of the whole (raw
// sums differ between tiers but stay congruent).
func TestPiecesAcrossTiers(t *testing.T) {
	var tiers []Tier
	for _, tier := range AllTiers {
		if tier.Supported() {
			tiers = append(tiers, tier)
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	for range 3000 {
		b := randomBytes(r, r.IntN(3000))
		acc := randomAcc(r)
		want := refFold(acc, b)
		got, rest := acc, b
		dst := make([]byte, len(b))
		d := dst
		for len(rest) > 0 {
			k := min(2*r.IntN(len(rest)/2+1), len(rest))
			if k == 0 && len(rest) == 1 {
				k = 1
			}
			tier := tiers[r.IntN(len(tiers))]
			if r.IntN(2) == 0 {
				got = tier.Sum(got, rest[:k])
			} else {
				got = tier.CopySum(d[:k], rest[:k], got)
			}
			d = d[k:]
			rest = rest[k:]
		}
		if Fold(got) != want {
			t.Fatalf("len %d in pieces: %04x, want %04x", len(b), Fold(got), want)
		}
	}
}

// TestDispatch: Sum and CopySum run the best tier (the kernel from
// minKernelLen on) and agree with it around the threshold; Best follows
// the CPU flags.
func TestDispatch(t *testing.T) {
	wantBest := Generic
	if haveKernels && cpu.X86.AVX2 {
		wantBest = AVX2
	}
	if Best() != wantBest {
		t.Fatalf("Best() = %v, want %v (kernels in this build: %v, cpu.X86.AVX2: %v)", Best(), wantBest, haveKernels, cpu.X86.AVX2)
	}
	r := rand.New(rand.NewPCG(13, 14))
	for n := 0; n <= 3*minKernelLen; n++ {
		src := randomBytes(r, n)
		acc := randomAcc(r)
		want := refFold(acc, src)
		if got := Fold(Sum(acc, src)); got != want {
			t.Fatalf("Sum len %d: %04x, want %04x", n, got, want)
		}
		dst := make([]byte, n+1)
		if got := Fold(CopySum(dst, src, acc)); got != want || !bytes.Equal(dst[:n], src) || dst[n] != 0 {
			t.Fatalf("CopySum len %d: %04x, want %04x, copy %v", n, got, want, bytes.Equal(dst[:n], src))
		}
		// The raw sums are those of the tier the length dispatches to.
		tier := Best()
		if n < minKernelLen {
			tier = Generic
		}
		if got, want := Sum(acc, src), tier.Sum(acc, src); got != want {
			t.Fatalf("Sum len %d: raw %#x, %v gives %#x", n, got, tier, want)
		}
	}
}

func TestTierNamesAndPanics(t *testing.T) {
	if AVX2.String() != cpu.TierAVX2 || Generic.String() != cpu.TierGeneric || Tier(0).String() != "invalid" {
		t.Fatalf("names %q %q %q", AVX2, Generic, Tier(0))
	}
	if Tier(0).Supported() || !Generic.Supported() {
		t.Fatal("Tier(0) supported, or Generic not")
	}
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	mustPanic("Tier(0).Sum", func() { Tier(0).Sum(0, []byte{1, 2}) })
	mustPanic("Tier(0).CopySum", func() { Tier(0).CopySum(make([]byte, 2), []byte{1, 2}, 0) })
	mustPanic("CopySum with a short dst", func() { CopySum(make([]byte, 99), make([]byte, 100), 0) })
	for _, tier := range AllTiers {
		if tier.Supported() {
			mustPanic(tier.String()+".CopySum with a short dst", func() { tier.CopySum(make([]byte, 99), make([]byte, 100), 0) })
		} else {
			mustPanic("unsupported "+tier.String()+".Sum", func() { tier.Sum(0, make([]byte, 100)) })
		}
	}
}

func TestNoAllocs(t *testing.T) {
	src, dst := make([]byte, 1448), make([]byte, 1448)
	var sink uint64
	for _, tier := range AllTiers {
		if !tier.Supported() {
			continue
		}
		if a := testing.AllocsPerRun(100, func() {
			sink += tier.Sum(0, src) + tier.CopySum(dst, src, 0) + Sum(0, src) + CopySum(dst, src, 0)
		}); a != 0 {
			t.Errorf("%v: %v allocations per call", tier, a)
		}
	}
	if sink != 0 {
		t.Errorf("sum of zeros is %#x, want 0", sink)
	}
}
