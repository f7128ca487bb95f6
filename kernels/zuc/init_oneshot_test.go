//go:build amd64 && gc && !purego

package zuc

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestInitXORKeyStreamVsGmsm: every lane its own length (equal lengths,
// lengths 0..300 around the block size, spreads up to 4.4 KiB), unaligned
// buffers with guard bytes on both sides that must stay untouched, nil
// lanes, in-place lanes, ZUC-128 and ZUC-256 lanes mixed.
func TestInitXORKeyStreamVsGmsm(t *testing.T) {
	forEachKernels16(t, func(t *testing.T, k Kernels16) {
		r := rand.New(rand.NewPCG(21, 22))
		var st State16
		const guard = 80
		shapes := [][Lanes16]int{}
		for _, n := range []int{0, 1, 3, 4, 5, 63, 64, 65, 127, 128, 129, 1420, 1436, 4400} {
			var l [Lanes16]int
			for c := range l {
				l[c] = n
			}
			shapes = append(shapes, l)
		}
		for range 60 {
			var l [Lanes16]int
			top := []int{70, 300, 1500, 4400}[r.IntN(4)]
			for c := range l {
				l[c] = r.IntN(top + 1)
			}
			shapes = append(shapes, l)
		}
		for _, lens := range shapes {
			var dst, src [Lanes16][]byte
			var want, backing [Lanes16][]byte
			var offs [Lanes16]int
			for c := range dst {
				spec := randomSpec(r, r.IntN(2) == 0)
				load(&st, c, spec)
				n := lens[c]
				offs[c] = guard + r.IntN(64)
				backing[c] = make([]byte, offs[c]+n+guard)
				for i := range backing[c] {
					backing[c][i] = byte(r.Uint32())
				}
				in := make([]byte, n)
				for i := range in {
					in[i] = byte(r.Uint32())
				}
				switch {
				case c == 5: // nil lane: nothing touched
					want[c] = bytes.Clone(backing[c])
					continue
				case c%3 == 0: // in place
					copy(backing[c][offs[c]:], in)
					dst[c] = backing[c][offs[c] : offs[c]+n : offs[c]+n]
					src[c] = dst[c]
				default:
					dst[c] = backing[c][offs[c] : offs[c]+n : offs[c]+n]
					src[c] = in
				}
				w := bytes.Clone(backing[c])
				copy(w[offs[c]:], gmsmXOR(t, spec, in))
				want[c] = w
			}
			st.InitXORKeyStream(k, &dst, &src)
			for c := range dst {
				if !bytes.Equal(backing[c], want[c]) {
					i := 0
					for backing[c][i] == want[c][i] {
						i++
					}
					t.Fatalf("lengths %v lane %d: byte %d (payload starts at %d, length %d) = %02x, want %02x",
						lens, c, i, offs[c], lens[c], backing[c][i], want[c][i])
				}
			}
		}
	})
}

// TestInitKeyStreamVsGmsm: word counts 0..100 and a few long ones; whole
// blocks are written, nothing past ⌈n/16⌉·16 words of a lane.
func TestInitKeyStreamVsGmsm(t *testing.T) {
	forEachKernels16(t, func(t *testing.T, k Kernels16) {
		r := rand.New(rand.NewPCG(23, 24))
		var st State16
		specs := make([]laneSpec, Lanes16)
		want := make([][]uint32, Lanes16)
		const maxWords = 1100
		for c := range specs {
			specs[c] = randomSpec(r, c%2 == 1)
			want[c] = gmsmKeyStream(t, specs[c], maxWords+16)
		}
		ns := []int{}
		for n := 0; n <= 100; n++ {
			ns = append(ns, n)
		}
		ns = append(ns, 355, 357, 359, 1024, maxWords)
		for _, n := range ns {
			whole := (n + BlockWords - 1) / BlockWords * BlockWords
			stride := whole + 3
			ks := make([]uint32, Lanes16*stride)
			for i := range ks {
				ks[i] = 0xdeadbeef
			}
			for c := range specs {
				load(&st, c, specs[c])
			}
			// Every other count with prefetch slices (some nil, some
			// shorter than the keystream, one empty): only prefetched,
			// they must change nothing.
			var pf *[Lanes16][]byte
			if n%2 == 1 {
				pf = new([Lanes16][]byte)
				for c := range pf {
					if c%5 != 4 {
						pf[c] = make([]byte, r.IntN(4*n+1))
					}
				}
			}
			st.InitKeyStream(k, ks, stride, n, pf)
			for c := range specs {
				for i := 0; i < stride; i++ {
					got := ks[c*stride+i]
					switch {
					case i < whole && got != want[c][i]:
						t.Fatalf("n=%d lane %d word %d: %08x, want %08x", n, c, i, got, want[c][i])
					case i >= whole && got != 0xdeadbeef:
						t.Fatalf("n=%d lane %d: word %d past the blocks written", n, c, i)
					}
				}
			}
		}
		mustPanic(t, "short stride", func() { st.InitKeyStream(k, make([]uint32, Lanes16*20), 17, 17, nil) })
	})
}

// TestPrefetchable: nil lanes take the first non-nil lane, else the
// fallback; the others are kept.
func TestPrefetchable(t *testing.T) {
	var a, b, fb byte
	var p [Lanes16]*byte
	if got := prefetchable(p, &fb); got != [Lanes16]*byte{&fb, &fb, &fb, &fb, &fb, &fb, &fb, &fb, &fb, &fb, &fb, &fb, &fb, &fb, &fb, &fb} {
		t.Fatalf("all nil: %v, want every lane at the fallback", got)
	}
	p[3], p[9] = &a, &b
	got := prefetchable(p, &fb)
	for c, q := range got {
		want := &a
		if c == 9 {
			want = &b
		}
		if q != want {
			t.Fatalf("lane %d: %p, want %p", c, q, want)
		}
	}
	if p[0] != nil {
		t.Fatal("prefetchable changed its argument")
	}
}

// TestLoadLanes: the bulk loaders leave exactly the state that per-lane
// LoadZUC128 / LoadZUC256 calls leave (two keys, distinct IVs, stale R1,
// R2 and LFSR contents overwritten).
func TestLoadLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	fill := func(b []byte) {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	}
	stale := func(s *State16) {
		for i := range s.w {
			s.w[i] = r.Uint32()
		}
	}
	for range 20 {
		var k0, k1 [16]byte
		var ivs [Lanes16][16]byte
		fill(k0[:])
		fill(k1[:])
		for c := range ivs {
			fill(ivs[c][:])
		}
		var got, want State16
		stale(&got)
		stale(&want)
		got.LoadZUC128Lanes(&k0, &k1, &ivs)
		for c := range ivs {
			key := &k0
			if c >= 8 {
				key = &k1
			}
			want.LoadZUC128(c, key, &ivs[c])
		}
		if !equalRows(&got, &want) {
			t.Fatal("LoadZUC128Lanes differs from LoadZUC128 per lane")
		}

		var K0, K1 [32]byte
		var ivs256 [Lanes16][23]byte
		fill(K0[:])
		fill(K1[:])
		for c := range ivs256 {
			fill(ivs256[c][:])
		}
		d0, d1 := ZUC256Constants(r.IntN(4)), ZUC256Constants(r.IntN(4))
		stale(&got)
		stale(&want)
		got.LoadZUC256Lanes(&K0, &K1, &ivs256, d0, d1)
		for c := range ivs256 {
			key, d := &K0, d0
			if c >= 8 {
				key, d = &K1, d1
			}
			want.LoadZUC256(c, key, &ivs256[c], d)
		}
		if !equalRows(&got, &want) {
			t.Fatal("LoadZUC256Lanes differs from LoadZUC256 per lane")
		}
	}
}

// equalRows compares the LFSR, R1 and R2 rows of two states.
func equalRows(a, b *State16) bool {
	for i := 0; i < rowScratch*Lanes16; i++ {
		if a.w[i] != b.w[i] {
			return false
		}
	}
	return true
}

// FuzzInitXORKeyStream: random keys, IVs and per-lane lengths (0..2047,
// some lanes nil) through InitXORKeyStream, each lane compared with gmsm
// and the bytes around it checked untouched.
func FuzzInitXORKeyStream(f *testing.F) {
	f.Add(uint64(1), uint64(2), []byte{0x10, 0x05, 0xff, 0x40})
	f.Add(uint64(3), uint64(4), []byte{})
	f.Fuzz(func(t *testing.T, seed1, seed2 uint64, shape []byte) {
		for _, k := range kernels16 {
			if k.Supported() {
				fuzzInitXOR(t, k, rand.New(rand.NewPCG(seed1, seed2)), shape)
			}
		}
		for _, k := range kernels16 {
			needKernels(t, k.Supported(), "the 16-lane kernels "+k.String())
		}
	})
}

// fuzzInitXOR is one FuzzInitXORKeyStream case on the kernels k.
func fuzzInitXOR(t *testing.T, k Kernels16, r *rand.Rand, shape []byte) {
	var st State16
	var dst [Lanes16][]byte
	var backing, want [Lanes16][]byte
	for c := range dst {
		spec := randomSpec(r, r.IntN(2) == 0)
		load(&st, c, spec)
		n := r.IntN(2048)
		if c < len(shape) {
			n = int(shape[c]) * 8 // lengths from the input: 0..2040
		}
		backing[c] = make([]byte, n+130)
		for i := range backing[c] {
			backing[c][i] = byte(r.Uint32())
		}
		want[c] = bytes.Clone(backing[c])
		if r.IntN(8) == 0 {
			continue // nil lane
		}
		off := 1 + r.IntN(64)
		dst[c] = backing[c][off : off+n : off+n]
		copy(want[c][off:], gmsmXOR(t, spec, dst[c]))
	}
	st.InitXORKeyStream(k, &dst, &dst)
	for c := range dst {
		if !bytes.Equal(backing[c], want[c]) {
			t.Fatalf("lane %d (length %d): output or surrounding bytes differ from gmsm", c, len(dst[c]))
		}
	}
}
