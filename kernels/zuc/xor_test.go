//go:build amd64 && gc && !purego

package zuc

import (
	"bytes"
	"math/bits"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/emmansun/gmsm/zuc"
)

func gmsmXOR(t testing.TB, s laneSpec, src []byte) []byte {
	c, err := zuc.NewCipher(s.key, s.iv)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, len(src))
	c.XORKeyStream(out, src)
	return out
}

func xorLengths() []int {
	var ls []int
	for n := 0; n <= 300; n++ {
		ls = append(ls, n)
	}
	for n := 301; n <= 4400; n += 37 {
		ls = append(ls, n)
	}
	return append(ls, 4096, 4159, 4160, 4161)
}

// TestXORKeyStreamVsGmsm: lengths 0..300 and a spread up to 4.4 KiB,
// unaligned buffers, inactive (nil) lanes left untouched, in-place lanes.
func TestXORKeyStreamVsGmsm(t *testing.T) {
	forEachTier(t, func(t *testing.T, tc tierCase) {
		r := rand.New(rand.NewPCG(7, uint64(tc.lanes)))
		st := tc.newState()
		for _, n := range xorLengths() {
			specs := make([]laneSpec, tc.lanes)
			dst := make([][]byte, tc.lanes)
			src := make([][]byte, tc.lanes)
			want := make([][]byte, tc.lanes)
			backing := make([][]byte, tc.lanes)
			for c := range specs {
				specs[c] = randomSpec(r, r.IntN(2) == 0)
				load(st, c, specs[c])
				off := r.IntN(64)
				backing[c] = make([]byte, off+n+64)
				for i := range backing[c] {
					backing[c][i] = byte(r.Uint32())
				}
				in := make([]byte, n)
				for i := range in {
					in[i] = byte(r.Uint32())
				}
				switch {
				case c == 3: // inactive lane
					src[c] = in
				case c%4 == 2: // in place
					copy(backing[c][off:], in)
					dst[c] = backing[c][off : off+n : off+n]
					src[c] = dst[c]
					want[c] = gmsmXOR(t, specs[c], in)
				default:
					dst[c] = backing[c][off : off+n : off+n]
					src[c] = in[:n:n]
					want[c] = gmsmXOR(t, specs[c], in)
				}
			}
			saved := bytes.Clone(backing[3])
			st.Init()
			tc.xor(st, dst, src, n)
			for c := range specs {
				if c == 3 {
					if !bytes.Equal(backing[3], saved) {
						t.Fatalf("n=%d: inactive lane modified", n)
					}
					continue
				}
				if !bytes.Equal(dst[c], want[c]) {
					t.Fatalf("n=%d lane %d (key %d B): XOR output differs from gmsm", n, c, len(specs[c].key))
				}
			}
		}
	})
}

// TestChunkedCalls: repeated KeyStream calls of mixed sizes continue the
// keystream (block path, tail path and their alternation).
func TestChunkedCalls(t *testing.T) {
	forEachTier(t, func(t *testing.T, tc tierCase) {
		r := rand.New(rand.NewPCG(3, 3))
		chunks := []int{1, 16, 5, 33, 0, 15, 64, 17, 2, 100}
		total := 0
		for _, c := range chunks {
			total += c
		}
		st := tc.newState()
		specs := make([]laneSpec, tc.lanes)
		for c := range specs {
			specs[c] = randomSpec(r, c%2 == 0)
			load(st, c, specs[c])
		}
		st.Init()
		got := make([][]uint32, tc.lanes)
		ks := make([]uint32, tc.lanes*128)
		for _, n := range chunks {
			st.KeyStream(ks, 128, n)
			for c := range got {
				got[c] = append(got[c], ks[c*128:c*128+n]...)
			}
		}
		for c := range specs {
			want := gmsmKeyStream(t, specs[c], total)
			for i := range want {
				if got[c][i] != want[i] {
					t.Fatalf("lane %d word %d: %08x, want %08x", c, i, got[c][i], want[i])
				}
			}
		}
	})
}

// refNext is an independent single-lane model of one ZUC work round
// (GB/T 33133.1 §3.3–3.4) used to continue an extracted Lane.
func refNext(l *Lane) uint32 {
	s := &l.S
	x0 := (s[15]&0x7fff8000)<<1 | s[14]&0xffff
	x1 := s[11]<<16 | s[9]>>15
	x2 := s[7]<<16 | s[5]>>15
	x3 := s[2]<<16 | s[0]>>15
	z := ((x0 ^ l.R1) + l.R2) ^ x3
	w1, w2 := l.R1+x1, l.R2^x2
	u, v := w1<<16|w2>>16, w2<<16|w1>>16
	rl := bits.RotateLeft32
	u = u ^ rl(u, 2) ^ rl(u, 10) ^ rl(u, 18) ^ rl(u, 24)
	v = v ^ rl(v, 8) ^ rl(v, 14) ^ rl(v, 22) ^ rl(v, 30)
	sb := func(x uint32) uint32 {
		return uint32(sbox0Table[x>>24])<<24 | uint32(sbox1Table[x>>16&0xff])<<16 |
			uint32(sbox0Table[x>>8&0xff])<<8 | uint32(sbox1Table[x&0xff])
	}
	l.R1, l.R2 = sb(u), sb(v)
	const p = 1<<31 - 1
	acc := uint64(s[15])<<15 + uint64(s[13])<<17 + uint64(s[10])<<21 + uint64(s[4])<<20 + uint64(s[0])<<8 + uint64(s[0])
	for acc > p {
		acc = acc&p + acc>>31
	}
	copy(s[:], s[1:])
	s[15] = uint32(acc)
	return z
}

// TestLaneExtraction: a lane extracted after n words continues correctly in
// the reference model, and SetLane moves a state between lanes.
func TestLaneExtraction(t *testing.T) {
	forEachTier(t, func(t *testing.T, tc tierCase) {
		r := rand.New(rand.NewPCG(5, 5))
		for _, n := range []int{0, 7, 16, 40} {
			st := tc.newState()
			specs := make([]laneSpec, tc.lanes)
			for c := range specs {
				specs[c] = randomSpec(r, c%2 == 1)
				load(st, c, specs[c])
			}
			st.Init()
			ks := make([]uint32, tc.lanes*64)
			st.KeyStream(ks, 64, n)
			for c := range specs {
				want := gmsmKeyStream(t, specs[c], n+30)
				l := st.Lane(c)
				for i := n; i < n+30; i++ {
					if z := refNext(&l); z != want[i] {
						t.Fatalf("n=%d lane %d: continued word %d = %08x, want %08x", n, c, i, z, want[i])
					}
				}
			}
			// Move lane 1's state into lane 0 and continue in the kernel.
			l := st.Lane(1)
			st.SetLane(0, &l)
			st.KeyStream(ks, 64, 20)
			want := gmsmKeyStream(t, specs[1], n+20)[n:]
			for i := range want {
				if ks[i] != want[i] || ks[64+i] != want[i] {
					t.Fatalf("n=%d: SetLane continuation word %d: %08x/%08x, want %08x", n, i, ks[i], ks[64+i], want[i])
				}
			}
		}
	})
}

func TestZeroAllocs(t *testing.T) {
	forEachTier(t, func(t *testing.T, tc tierCase) {
		st := tc.newState()
		dst, src := make([][]byte, tc.lanes), make([][]byte, tc.lanes)
		for c := range dst {
			dst[c], src[c] = make([]byte, 1420), make([]byte, 1420)
		}
		ks := make([]uint32, tc.lanes*400)
		var key, iv [16]byte
		allocs := testing.AllocsPerRun(20, func() {
			for c := 0; c < tc.lanes; c++ {
				st.LoadZUC128(c, &key, &iv)
			}
			st.Init()
			tc.xor(st, dst, src, 1420)
			st.KeyStream(ks, 400, 357)
		})
		if allocs != 0 {
			t.Fatalf("%v allocations per batch, want 0", allocs)
		}
	})
}

func TestArgumentPanics(t *testing.T) {
	forEachTier(t, func(t *testing.T, tc tierCase) {
		st := tc.newState()
		mustPanic := func(name string, f func()) {
			t.Helper()
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}
		var key, iv [16]byte
		mustPanic("lane out of range", func() { st.LoadZUC128(tc.lanes, &key, &iv) })
		mustPanic("short keystream buffer", func() { st.KeyStream(make([]uint32, 10), 10, 10) })
		mustPanic("stride < n", func() { st.KeyStream(make([]uint32, 1000), 5, 6) })
		dst, src := make([][]byte, tc.lanes), make([][]byte, tc.lanes)
		dst[0], src[0] = make([]byte, 10), make([]byte, 9)
		mustPanic("short src", func() { tc.xor(st, dst, src, 10) })
		mustPanic("bad ZUC-256 constants", func() { st.LoadZUC256(0, new([32]byte), new([23]byte), 4) })
	})
}

// TestAVX2UsesOnlyVEXRegisters: the x8 tiers must run without AVX-512, so
// their code may not touch Y16–Y31, ZMM or opmask registers (EVEX-only).
func TestAVX2UsesOnlyVEXRegisters(t *testing.T) {
	b, err := os.ReadFile("zuc_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	evex := regexp.MustCompile(`\bY(1[6-9]|2[0-9]|3[01])\b|\bZ[0-9]+\b|\bK[0-7]\b|VPTERNLOG|VPROL|VPSHLD|VMOVDQU32`)
	funcs := 0
	for _, fn := range strings.Split(string(b), "TEXT ")[1:] {
		if !strings.HasPrefix(fn, "·") || !strings.Contains(fn[:40], "8GFNI(SB)") && !strings.Contains(fn[:40], "8AESNI(SB)") {
			continue
		}
		funcs++
		if m := evex.FindString(fn); m != "" {
			t.Errorf("%s uses EVEX-only %q", fn[:strings.Index(fn, "(")], m)
		}
	}
	if funcs != 10 {
		t.Fatalf("found %d 8-lane functions, want 10", funcs)
	}
}

// xorStackBuffers XORs the keystream into lane buffers that live in a
// local array; it allocates only if the buffers escape to the heap.
//
//go:noinline
func xorStackBuffers(st *State16, k Kernels16) byte {
	var bufs [Lanes16][96]byte
	var d [Lanes16][]byte
	for c := range d {
		d[c] = bufs[c][:]
	}
	st.XORKeyStream(k, &d, &d, len(bufs[0]))
	return bufs[3][5]
}

// TestXORStackBuffersDoNotEscape: lane slices pointing into the caller's
// stack stay there (XORKeyStream must not leak its arguments' contents).
func TestXORStackBuffersDoNotEscape(t *testing.T) {
	forEachKernels16(t, func(t *testing.T, k Kernels16) {
		var st State16
		st.Init(k)
		if n := testing.AllocsPerRun(20, func() { xorStackBuffers(&st, k) }); n != 0 {
			t.Fatalf("%v allocations per call, want 0 (lane buffers escape)", n)
		}
	})
}

// TestAESNI16UsesOnlySkylakeSP: the 16-lane AES-NI kernels and the key
// loading kernels they share must run on AVX-512 F/BW/VL/DQ with 128-bit
// AES-NI: no VBMI/VBMI2, GFNI, VPCLMULQDQ, and AESENCLAST only in its VEX
// form (XMM operands X0–X15; the EVEX form, X16–X31, YMM or ZMM, needs VAES).
func TestAESNI16UsesOnlySkylakeSP(t *testing.T) {
	b, err := os.ReadFile("zuc_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	banned := regexp.MustCompile(`VPSHLD|VPSHRD|GF2P8|VPERMB|VPERMT2B|VPERMI2B|VPMULTISHIFTQB|VPCOMPRESSB|VPEXPANDB|VPCLMUL|` +
		`VAES\w+\s+[^\n]*\b([YZ][0-9]+|X(1[6-9]|2[0-9]|3[01]))\b`)
	funcs := 0
	for _, fn := range strings.Split(string(b), "TEXT ")[1:] {
		head := fn[:strings.Index(fn, "(")]
		if !strings.HasSuffix(head, "16AESNI") && !strings.HasPrefix(head, "·loadZUC") {
			continue
		}
		funcs++
		if m := banned.FindString(fn); m != "" {
			t.Errorf("%s uses %q, which the AVX-512+AES-NI tier lacks", head, m)
		}
	}
	if funcs != 9 {
		t.Fatalf("found %d 16-lane AES-NI and key loading functions, want 9", funcs)
	}
}
