//go:build amd64 && gc && !purego

package zuc

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/emmansun/gmsm/zuc"
)

// macTagBytes are the tag sizes of ZUC-256-MAC (t = 32, 64, 128 bits).
var macTagBytes = []int{4, 8, 16}

// forEachMACPath runs f once per MAC kernel path (XMM PCLMULQDQ, ZMM
// VPCLMULQDQ), forcing the dispatch flag and skipping visibly when the CPU
// lacks a path.
func forEachMACPath(t *testing.T, f func(t *testing.T)) {
	for _, wide := range []bool{false, true} {
		name := "CLMUL"
		if wide {
			name = "AVX512"
		}
		t.Run(name, func(t *testing.T) {
			needKernels(t, useMAC && (!wide || MACWide()), "the "+name+" MAC path")
			saved := useMACAVX512
			useMACAVX512 = wide
			defer func() { useMACAVX512 = saved }()
			f(t)
		})
	}
}

// prefixModel holds the bit-by-bit MAC definitions evaluated for every
// prefix length of one message: sums[L] = ⊕_{i<L, m_i=1} W^t_{off+i}, one
// 32-bit word per 32 tag bits, built one message bit at a time from the
// window function of the vector tests.
type prefixModel struct {
	ks   []uint32
	eia  []uint32     // off = 0, t = 32
	sums [][][]uint32 // per tag size index: off = t
}

func newPrefixModel(msg []byte, maxBits int, ks []uint32) *prefixModel {
	p := &prefixModel{ks: ks, eia: make([]uint32, maxBits+1), sums: make([][][]uint32, len(macTagBytes))}
	for ti, tb := range macTagBytes {
		p.sums[ti] = make([][]uint32, maxBits+1)
		p.sums[ti][0] = make([]uint32, tb/4)
	}
	for i := 0; i < maxBits; i++ {
		p.eia[i+1] = p.eia[i]
		if msgBit(msg, i) {
			p.eia[i+1] ^= window(ks, i)
		}
		for ti, tb := range macTagBytes {
			s := append([]uint32(nil), p.sums[ti][i]...)
			if msgBit(msg, i) {
				for j := range s {
					s[j] ^= window(ks, 8*tb+i+32*j)
				}
			}
			p.sums[ti][i+1] = s
		}
	}
	return p
}

// eia3 returns the 128-EIA3 tag of the first L bits.
func (p *prefixModel) eia3(L int) uint32 {
	return p.eia[L] ^ window(p.ks, L) ^ p.ks[EIA3KeyStreamWords(L)-1]
}

// mac256 returns the ZUC-256-MAC tag (bytes) of the first L bits.
func (p *prefixModel) mac256(L, ti int) []byte {
	t := 8 * macTagBytes[ti]
	out := make([]byte, t/8)
	for j, s := range p.sums[ti][L] {
		binary.BigEndian.PutUint32(out[4*j:], s^window(p.ks, 32*j)^window(p.ks, t+L+32*j))
	}
	return out
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func randomWords(r *rand.Rand, n int) []uint32 {
	w := make([]uint32, n)
	for i := range w {
		w[i] = r.Uint32()
	}
	return w
}

// macLengths returns the bit lengths of the length sweeps: every byte
// length 0..maxBytes (a spread with -short) and, for each, a random
// shorter bit length inside the last byte.
func macLengths(r *rand.Rand, maxBytes int) []int {
	step := 1
	if testing.Short() {
		step = 11
	}
	var ls []int
	for n := 0; n <= maxBytes; n += step {
		ls = append(ls, 8*n)
		if n > 0 {
			ls = append(ls, 8*n-1-r.IntN(7))
		}
	}
	return append(ls, 8*maxBytes)
}

// TestPrefixModel checks the incremental model against the direct
// definitions of vectors_test.go (eia3, zuc256MAC) on sampled lengths, so
// the sweeps below rest on the same oracle as the known-answer tests.
func TestPrefixModel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const maxBits = 3000
	msg := randomBytes(r, maxBits/8+1)
	ks := randomWords(r, maxBits/32+16)
	p := newPrefixModel(msg, maxBits, ks)
	for L := 0; L <= maxBits; L += 1 + r.IntN(97) {
		if got, want := p.eia3(L), eia3(ks, msg, L); got != want {
			t.Fatalf("EIA3 L=%d: prefix model %08x, direct %08x", L, got, want)
		}
		for ti, tb := range macTagBytes {
			want := zuc256MAC(ks, msg, L, 8*tb)
			got := p.mac256(L, ti)
			for j, w := range want {
				if g := binary.BigEndian.Uint32(got[4*j:]); g != w {
					t.Fatalf("MAC-%d L=%d word %d: prefix model %08x, direct %08x", 8*tb, L, j, g, w)
				}
			}
		}
	}
}

// TestMACVsModel: random keystream words and messages, every byte length
// 0..4096 plus random bit lengths, the keystream slice cut to exactly the
// documented number of words, the message slice to ⌈bits/8⌉ bytes (its
// trailing bits random).
func TestMACVsModel(t *testing.T) {
	forEachMACPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(21, 22))
		const maxBytes = 4096
		msg := randomBytes(r, maxBytes)
		ks := randomWords(r, MAC256KeyStreamWords(8*maxBytes, 16))
		p := newPrefixModel(msg, 8*maxBytes, ks)
		tag := make([]byte, 16)
		for _, L := range macLengths(r, maxBytes) {
			m := msg[: (L+7)/8 : (L+7)/8]
			w := EIA3KeyStreamWords(L)
			if got, want := EIA3Tag(m, L, ks[:w:w]), p.eia3(L); got != want {
				t.Fatalf("EIA3 L=%d: %08x, want %08x", L, got, want)
			}
			for ti, tb := range macTagBytes {
				w := MAC256KeyStreamWords(L, tb)
				MAC256Tag(m, L, ks[:w:w], tag[:tb])
				if want := p.mac256(L, ti); !bytes.Equal(tag[:tb], want) {
					t.Fatalf("MAC-%d L=%d: %x, want %x", 8*tb, L, tag[:tb], want)
				}
			}
		}
	})
}

// TestMACPathsAgree compares the two kernel paths on long random inputs
// (every block count class of the AVX-512 loops: ×8, ×4 and single).
func TestMACPathsAgree(t *testing.T) {
	needKernels(t, MACWide(), "the AVX512 MAC path")
	r := rand.New(rand.NewPCG(31, 32))
	saved := useMACAVX512
	defer func() { useMACAVX512 = saved }()
	for _, n := range []int{16, 48, 64, 112, 128, 144, 192, 240, 256, 1420, 9000, 65535} {
		msg := randomBytes(r, n)
		ks := randomWords(r, MAC256KeyStreamWords(8*n, 16))
		var tags [2][4][]byte
		for k, wide := range []bool{false, true} {
			useMACAVX512 = wide
			tags[k][0] = binary.BigEndian.AppendUint32(nil, EIA3Tag(msg, 8*n, ks))
			for ti, tb := range macTagBytes {
				tags[k][1+ti] = make([]byte, tb)
				MAC256Tag(msg, 8*n, ks, tags[k][1+ti])
			}
		}
		for i := range tags[0] {
			if !bytes.Equal(tags[0][i], tags[1][i]) {
				t.Fatalf("n=%d tag %d: CLMUL %x, AVX512 %x", n, i, tags[0][i], tags[1][i])
			}
		}
	}
}

// TestMACUnaligned: every message offset 0..15 and keystream word offset
// 0..3 gives the tag of the aligned copy.
func TestMACUnaligned(t *testing.T) {
	forEachMACPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(41, 42))
		for _, n := range []int{0, 1, 15, 16, 17, 63, 64, 65, 130, 1420} {
			L := 8*n - min(n, 3)
			msg := randomBytes(r, n)
			ks := randomWords(r, MAC256KeyStreamWords(L, 16))
			p := newPrefixModel(msg, L, ks)
			mbuf := make([]byte, n+16)
			kbuf := make([]uint32, len(ks)+4)
			for mo := 0; mo < 16; mo++ {
				for ko := 0; ko < 4; ko++ {
					m := mbuf[mo : mo+n]
					copy(m, msg)
					k := kbuf[ko : ko+len(ks)]
					copy(k, ks)
					if got, want := EIA3Tag(m, L, k), p.eia3(L); got != want {
						t.Fatalf("n=%d offsets %d/%d: EIA3 %08x, want %08x", n, mo, ko, got, want)
					}
					tag := make([]byte, 16)
					MAC256Tag(m, L, k, tag)
					if want := p.mac256(L, 2); !bytes.Equal(tag, want) {
						t.Fatalf("n=%d offsets %d/%d: MAC-128 %x, want %x", n, mo, ko, tag, want)
					}
				}
			}
		}
	})
}

// macKeyStream returns the first n keystream words of spec from the first
// supported lane tier (spec in lane 1, unrelated keys elsewhere): gmsm has
// no keystream for the ZUC-256 MAC constants.
func macKeyStream(t testing.TB, s laneSpec, n int) []uint32 {
	t.Helper()
	for _, tc := range tiers {
		if !tc.supported {
			continue
		}
		st := tc.newState()
		for c := 0; c < tc.lanes; c++ {
			load(st, c, laneSpec{key: make([]byte, 16), iv: []byte("unrelated lane..")})
		}
		load(st, 1, s)
		st.Init()
		ks := make([]uint32, tc.lanes*max(n, 1))
		st.KeyStream(ks, max(n, 1), n)
		return ks[max(n, 1) : max(n, 1)+n]
	}
	needKernels(t, false, "every lane tier (to produce ZUC-256 MAC keystream)")
	return nil
}

// TestMACVectors: the 128-EIA3 (ETSI/SAGE Document 3) and ZUC-256-MAC
// (2018 paper) vectors through EIA3Tag and MAC256Tag.
func TestMACVectors(t *testing.T) {
	var e struct {
		Vectors []struct {
			ID, Key, Count, Message, Mac string
			Bearer, Direction            int
			LengthBits                   int `json:"length_bits"`
		}
	}
	readJSON(t, "eia3.json", &e)
	var z struct {
		Vectors []struct {
			ID, Key, IV, Message, Tag string
			LengthBits                int `json:"length_bits"`
			TagBits                   int `json:"tag_bits"`
		}
	}
	readJSON(t, "zuc256_mac.json", &z)
	if len(e.Vectors) < 5 || len(z.Vectors) < 6 {
		t.Fatalf("only %d EIA3 and %d ZUC-256-MAC vectors read", len(e.Vectors), len(z.Vectors))
	}
	forEachMACPath(t, func(t *testing.T) {
		for _, v := range e.Vectors {
			iv := make([]byte, 16)
			copy(iv, unhex(t, v.Count))
			iv[4] = byte(v.Bearer << 3)
			copy(iv[8:], iv[:8])
			iv[8] ^= byte(v.Direction << 7)
			iv[14] ^= byte(v.Direction << 7)
			s := laneSpec{key: unhex(t, v.Key), iv: iv}
			ks := gmsmKeyStream(t, s, EIA3KeyStreamWords(v.LengthBits))
			if got, want := EIA3Tag(unhex(t, v.Message), v.LengthBits, ks), hexWord(t, v.Mac); got != want {
				t.Errorf("%s: MAC %08x, want %08x", v.ID, got, want)
			}
		}
		for _, v := range z.Vectors {
			c := map[int]ZUC256Constants{32: ZUC256MAC32, 64: ZUC256MAC64, 128: ZUC256MAC128}[v.TagBits]
			s := laneSpec{key: unhex(t, v.Key), iv: unhex(t, v.IV), c: c}
			ks := macKeyStream(t, s, MAC256KeyStreamWords(v.LengthBits, v.TagBits/8))
			tag := make([]byte, v.TagBits/8)
			MAC256Tag(unhex(t, v.Message), v.LengthBits, ks, tag)
			if want := unhex(t, v.Tag); !bytes.Equal(tag, want) {
				t.Errorf("%s: tag %x, want %x", v.ID, tag, want)
			}
		}
	})
}

// gmsmMAC256TailBug reports whether gmsm v0.40.0 computes a wrong
// ZUC-256-MAC for a message of L bits and a tag of tb bytes. Its tail code
// (internal/zuc/eia256.go, checkSum) shifts the keystream window in
// k0[0:t/32] for the whole tail words and then reads the window for the
// last partial word at k0[kIdx:], kIdx = ⌈(L mod 128)/32⌉ − 1; the two
// overlap when 1 ≤ kIdx < t/32, i.e. for 64- and 128-bit tags with
// 33 ≤ L mod 128 ≤ t. Those lengths are checked against the bit-level
// models (TestMACVsModel, TestPrefixModel) instead.
func gmsmMAC256TailBug(L, tb int) bool {
	kIdx := (L%128+31)/32 - 1
	return kIdx >= 1 && kIdx < tb/4
}

// TestMACVsGmsm: random keys and IVs, keystream from the lane kernels
// (every ZUC-256 MAC constant set), tags against gmsm's NewHash (EIA3 with
// a raw IV) and NewHash256 Finish, for every byte length 0..4096 and a
// random bit length next to each (except gmsm's defective tail lengths,
// see gmsmMAC256TailBug).
func TestMACVsGmsm(t *testing.T) {
	var tc *tierCase
	for i := range tiers {
		if tiers[i].supported {
			tc = &tiers[i]
			break
		}
	}
	if tc == nil {
		needKernels(t, false, "every lane tier")
	}
	forEachMACPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(51, 52))
		const maxBytes = 4096
		lengths := macLengths(r, maxBytes)
		st := tc.newState()
		stride := MAC256KeyStreamWords(8*maxBytes, 16)
		ks := make([]uint32, tc.lanes*stride)
		msgs := make([][]byte, tc.lanes)
		specs := make([]laneSpec, tc.lanes)
		bitsOf := make([]int, tc.lanes)
		modes := 1 + len(macTagBytes) // EIA3, MAC-32, MAC-64, MAC-128
		skipped := 0
		defer func() { t.Logf("%d MAC-64/128 cases left to the models (gmsm tail defect)", skipped) }()
		per := tc.lanes / modes
		for i := 0; i < len(lengths); i += per {
			for c := 0; c < per*modes; c++ {
				L := lengths[min(i+c/modes, len(lengths)-1)]
				mode := c % modes
				if mode == 0 {
					specs[c] = randomSpec(r, false)
				} else {
					specs[c] = randomSpec(r, true)
					specs[c].c = ZUC256MAC32 + ZUC256Constants(mode-1)
				}
				bitsOf[c] = L
				msgs[c] = randomBytes(r, (L+7)/8)
				load(st, c, specs[c])
			}
			st.Init()
			st.KeyStream(ks, stride, stride)
			for c := 0; c < per*modes; c++ {
				L, mode, m := bitsOf[c], c%modes, msgs[c]
				lane := ks[c*stride : (c+1)*stride]
				if mode == 0 {
					h, err := zuc.NewHash(specs[c].key, specs[c].iv)
					if err != nil {
						t.Fatal(err)
					}
					want := h.Finish(m, L)
					got := binary.BigEndian.AppendUint32(nil, EIA3Tag(m, L, lane))
					if !bytes.Equal(got, want) {
						t.Fatalf("EIA3 L=%d: %x, gmsm %x", L, got, want)
					}
					continue
				}
				tb := macTagBytes[mode-1]
				if gmsmMAC256TailBug(L, tb) {
					skipped++
					continue
				}
				h, err := zuc.NewHash256(specs[c].key, specs[c].iv, tb)
				if err != nil {
					t.Fatal(err)
				}
				want := h.Finish(m, L)
				got := make([]byte, tb)
				MAC256Tag(m, L, lane, got)
				if !bytes.Equal(got, want) {
					t.Fatalf("MAC-%d L=%d: %x, gmsm %x", 8*tb, L, got, want)
				}
			}
		}
	})
}

// TestMACAllocs: the tag functions allocate nothing.
func TestMACAllocs(t *testing.T) {
	forEachMACPath(t, func(t *testing.T) {
		msg := make([]byte, 1421)
		ks := make([]uint32, MAC256KeyStreamWords(8*len(msg), 16))
		tag := make([]byte, 16)
		var sink uint32
		n := testing.AllocsPerRun(100, func() {
			sink ^= EIA3Tag(msg, 8*len(msg)-3, ks)
			MAC256Tag(msg, 8*len(msg)-3, ks, tag)
			MAC256Tag(msg, 8*len(msg), ks, tag[:4])
		})
		if n != 0 {
			t.Errorf("%v allocations per run, want 0", n)
		}
		_ = sink
	})
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

// TestMACArgumentPanics: short keystream, short message, bad tag size.
func TestMACArgumentPanics(t *testing.T) {
	needKernels(t, useMAC, "PCLMULQDQ")
	msg := make([]byte, 100)
	ks := make([]uint32, 100)
	mustPanic(t, "EIA3 short keystream", func() { EIA3Tag(msg, 800, ks[:EIA3KeyStreamWords(800)-1]) })
	mustPanic(t, "EIA3 short message", func() { EIA3Tag(msg[:99], 793, ks) })
	mustPanic(t, "EIA3 negative length", func() { EIA3Tag(msg, -1, ks) })
	mustPanic(t, "MAC tag size 12", func() { MAC256Tag(msg, 8, ks, make([]byte, 12)) })
	mustPanic(t, "MAC short keystream", func() {
		MAC256Tag(msg, 800, ks[:MAC256KeyStreamWords(800, 16)-1], make([]byte, 16))
	})
	// The exact lengths are accepted.
	EIA3Tag(msg, 800, ks[:EIA3KeyStreamWords(800)])
	MAC256Tag(msg[:1], 1, ks[:MAC256KeyStreamWords(1, 16)], make([]byte, 16))
}
