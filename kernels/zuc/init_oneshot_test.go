//go:build amd64 && gc && !purego

package zuc

import (
	"bytes"
	"encoding/binary"
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
			pf := prefetchSlices(r, n)
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

// prefetchSlices returns, for odd n, prefetch slices for an n-word
// keystream call (some nil, some shorter than the keystream, some empty),
// and nil for even n.
func prefetchSlices(r *rand.Rand, n int) *[Lanes16][]byte {
	if n%2 == 0 {
		return nil
	}
	pf := new([Lanes16][]byte)
	for c := range pf {
		if c%5 != 4 {
			pf[c] = make([]byte, r.IntN(4*n+1))
		}
	}
	return pf
}

// TestInitKeyStreamPair checks the paired kernel against two InitKeyStream
// calls on the same states (themselves checked against gmsm above): every
// word count up to 100 and MTU-sized ones, random ZUC-128 and ZUC-256
// lanes, a different key set per state, the first state's words as
// big-endian bytes, nothing written past the blocks or the buffer.
func TestInitKeyStreamPair(t *testing.T) {
	forEachKernels16(t, func(t *testing.T, k Kernels16) {
		if !k.Paired() {
			mustPanic(t, "unpaired kernels", func() {
				var a, b State16
				a.InitKeyStreamPair(k, &b, make([]byte, 4*Lanes16*16), make([]uint32, Lanes16*16), 16, 16, nil)
			})
			return
		}
		r := rand.New(rand.NewPCG(25, 26))
		specs := make([]laneSpec, 2*Lanes16)
		for c := range specs {
			specs[c] = randomSpec(r, r.IntN(2) == 1)
		}
		ns := []int{}
		for n := 0; n <= 100; n++ {
			ns = append(ns, n)
		}
		ns = append(ns, 355, 357, 359, 400, 1024)
		var a, b State16
		loadAll := func() {
			for c := 0; c < Lanes16; c++ {
				load(&a, c, specs[c])
				load(&b, c, specs[Lanes16+c])
			}
		}
		for _, n := range ns {
			whole := (n + BlockWords - 1) / BlockWords * BlockWords
			stride := whole + 5
			want := [2][]uint32{make([]uint32, Lanes16*stride), make([]uint32, Lanes16*stride)}
			got := [2][]uint32{make([]uint32, Lanes16*stride), make([]uint32, Lanes16*stride)}
			gotBytes := make([]byte, 4*Lanes16*stride+1) // +1: the byte past the end stays
			for i := range got {
				for j := range got[i] {
					got[i][j], want[i][j] = 0xdeadbeef, 0xdeadbeef
				}
			}
			for j := range gotBytes {
				gotBytes[j] = 0xa5
			}
			loadAll()
			a.InitKeyStream(k, want[0], stride, n, nil)
			b.InitKeyStream(k, want[1], stride, n, nil)
			loadAll()
			// Every other count with prefetch slices (some nil, some short):
			// only prefetched, they must change nothing.
			pf := prefetchSlices(r, n)
			a.InitKeyStreamPair(k, &b, gotBytes[:4*Lanes16*stride], got[1], stride, n, pf)
			for j := range got[0] { // a's words, big-endian bytes; untouched past the blocks
				if j%stride >= whole {
					got[0][j] = 0xdeadbeef
					if binary.BigEndian.Uint32(gotBytes[4*j:]) != 0xa5a5a5a5 {
						t.Fatalf("n=%d lane %d: word %d past the blocks written", n, j/stride, j%stride)
					}
					continue
				}
				got[0][j] = binary.BigEndian.Uint32(gotBytes[4*j:])
			}
			if gotBytes[len(gotBytes)-1] != 0xa5 {
				t.Fatalf("n=%d: byte past the buffer written", n)
			}
			for i := range got {
				for j := range got[i] {
					if got[i][j] != want[i][j] {
						t.Fatalf("n=%d state %d lane %d word %d: %08x, want %08x", n, i, j/stride, j%stride, got[i][j], want[i][j])
					}
				}
			}
		}
		mustPanic(t, "short stride", func() {
			a.InitKeyStreamPair(k, &b, make([]byte, 4*Lanes16*20), make([]uint32, Lanes16*20), 17, 17, nil)
		})
		mustPanic(t, "short word buffer", func() {
			a.InitKeyStreamPair(k, &b, make([]byte, 4*Lanes16*32), make([]uint32, Lanes16*32-1), 32, 32, nil)
		})
		mustPanic(t, "short byte buffer", func() {
			a.InitKeyStreamPair(k, &b, make([]byte, 4*Lanes16*32-1), make([]uint32, Lanes16*32), 32, 32, nil)
		})
	})
}

// TestInitXORKeyStreamPair checks the paired XOR kernel against
// InitXORKeyStream on the first state and InitKeyStream on the second:
// random per-lane lengths (nil, empty, shorter and longer than the second
// state's keystream, equal lengths for the unmasked blocks), in place and
// out of place, nothing written past a lane's length or the blocks.
func TestInitXORKeyStreamPair(t *testing.T) {
	forEachKernels16(t, func(t *testing.T, k Kernels16) {
		if !k.Paired() {
			mustPanic(t, "unpaired kernels", func() {
				var a, b State16
				var d [Lanes16][]byte
				a.InitXORKeyStreamPair(k, &d, &d, &b, make([]uint32, Lanes16*16), 16, 16)
			})
			return
		}
		r := rand.New(rand.NewPCG(27, 28))
		specs := make([]laneSpec, 2*Lanes16)
		for c := range specs {
			specs[c] = randomSpec(r, r.IntN(2) == 1)
		}
		var a, b State16
		loadAll := func() {
			for c := 0; c < Lanes16; c++ {
				load(&a, c, specs[c])
				load(&b, c, specs[Lanes16+c])
			}
		}
		for round := 0; round < 300; round++ {
			base := r.IntN(1600)
			var lens [Lanes16]int
			for c := range lens {
				switch {
				case round%3 == 0:
					lens[c] = base
				case r.IntN(8) == 0:
					lens[c] = -1 // nil lane
				default:
					lens[c] = max(0, base-r.IntN(130))
				}
			}
			n := r.IntN(450)
			longest := 0
			for _, l := range lens {
				longest = max(longest, l)
			}
			nb := max((longest+BlockBytes-1)/BlockBytes, (n+BlockWords-1)/BlockWords)
			stride := nb*BlockWords + r.IntN(3)
			inPlace := round%2 == 0
			var src, want, got [Lanes16][]byte
			for c, l := range lens {
				if l < 0 {
					continue
				}
				src[c] = make([]byte, l+8) // 8 guard bytes past the lane
				for i := range src[c] {
					src[c][i] = byte(r.Uint32())
				}
				want[c] = bytes.Clone(src[c])
				got[c] = bytes.Clone(src[c])
			}
			wantKS := make([]uint32, Lanes16*stride)
			gotKS := make([]uint32, Lanes16*stride)
			var wd, gd, gs [Lanes16][]byte
			for c, l := range lens {
				if l < 0 {
					continue
				}
				wd[c] = want[c][:l]
				gd[c], gs[c] = got[c][:l], got[c][:l]
				if !inPlace {
					gd[c] = make([]byte, l+8)
					copy(gd[c], got[c])
					gs[c] = got[c][:l]
					got[c] = gd[c]
					gd[c] = gd[c][:l]
				}
			}
			loadAll()
			a.InitXORKeyStream(k, &wd, &wd)
			b.InitKeyStream(k, wantKS, stride, nb*BlockWords, nil)
			loadAll()
			a.InitXORKeyStreamPair(k, &gd, &gs, &b, gotKS, stride, n)
			for c, l := range lens {
				// The lane's bytes and the 8 guard bytes past it (the
				// source's in both buffers, never written).
				if l >= 0 && !bytes.Equal(got[c][:l+8], want[c][:l+8]) {
					t.Fatalf("round %d lane %d (len %d, in place %v): output differs", round, c, l, inPlace)
				}
			}
			for i := range gotKS {
				if i%stride < nb*BlockWords && gotKS[i] != wantKS[i] {
					t.Fatalf("round %d: keystream lane %d word %d: %08x, want %08x", round, i/stride, i%stride, gotKS[i], wantKS[i])
				}
				if i%stride >= nb*BlockWords && gotKS[i] != 0 {
					t.Fatalf("round %d: keystream lane %d word %d past the blocks written", round, i/stride, i%stride)
				}
			}
		}
	})
}
