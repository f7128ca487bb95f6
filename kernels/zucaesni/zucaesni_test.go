//go:build amd64 && gc && !purego

package zucaesni

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/emmansun/gmsm/zuc"
	"github.com/gmtun/gmtun/kernels/zuclanes"
)

func need(t testing.TB) {
	t.Helper()
	if !Supported() {
		t.Skip("CPU lacks AVX2 + AES-NI: the zucaesni kernels are not tested")
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLayout checks that the kernels' view of a zuclanes.State8 is its
// row layout (cell i of lane c at word 8i+c, R1 and R2 in rows 16, 17).
func TestLayout(t *testing.T) {
	var st zuclanes.State8
	r := rand.New(rand.NewPCG(1, 2))
	for c := range Lanes {
		l := zuclanes.Lane{R1: r.Uint32(), R2: r.Uint32()}
		for i := range l.S {
			l.S[i] = r.Uint32() & p31
		}
		st.SetLane(c, &l)
	}
	w := words(&st)
	for c := range Lanes {
		l := st.Lane(c)
		for i := range l.S {
			if w[i*Lanes+c] != l.S[i] {
				t.Fatalf("lane %d cell %d not at word %d", c, i, i*Lanes+c)
			}
		}
		if w[16*Lanes+c] != l.R1 || w[17*Lanes+c] != l.R2 {
			t.Fatalf("lane %d R1/R2 misplaced", c)
		}
	}
}

// TestVectors runs the published ZUC-128 (ETSI/SAGE Document 3) and
// ZUC-256 (2018 paper) keystream vectors in every lane position, and checks
// the test reference on them too.
func TestVectors(t *testing.T) {
	need(t)
	var z128 struct {
		Vectors []struct {
			ID, Key, IV    string
			KeystreamWords []struct {
				Index int
				Word  string
			} `json:"keystream_words"`
		}
	}
	var z256 struct {
		Vectors []struct {
			ID, Key, IV    string
			KeystreamWords []string `json:"keystream_words"`
		}
	}
	readJSON(t, "zuc128.json", &z128)
	readJSON(t, "zuc256.json", &z256)
	type vec struct {
		id   string
		spec laneSpec
		want map[int]uint32 // 0-based word index
	}
	var vs []vec
	for _, v := range z128.Vectors {
		w := map[int]uint32{}
		for _, k := range v.KeystreamWords {
			w[k.Index-1] = binary.BigEndian.Uint32(unhex(t, k.Word))
		}
		vs = append(vs, vec{v.ID, laneSpec{key: unhex(t, v.Key), iv: unhex(t, v.IV)}, w})
	}
	for _, v := range z256.Vectors {
		w := map[int]uint32{}
		for i, k := range v.KeystreamWords {
			w[i] = binary.BigEndian.Uint32(unhex(t, k))
		}
		vs = append(vs, vec{v.ID, laneSpec{key: unhex(t, v.Key), iv: unhex(t, v.IV)}, w})
	}
	if len(vs) < 4 {
		t.Fatalf("only %d vectors", len(vs))
	}
	maxW := 0
	for _, v := range vs {
		for i := range v.want {
			maxW = max(maxW, i+1)
		}
	}
	for _, v := range vs {
		z := refOf(v.spec)
		for i := 0; i < maxW; i++ {
			got := z.word()
			if w, ok := v.want[i]; ok && got != w {
				t.Fatalf("reference %s word %d = %08x, want %08x", v.id, i, got, w)
			}
		}
	}
	stride := (maxW + 15) / 16 * 16
	for rot := range Lanes {
		var st State8
		for k, v := range vs {
			load(&st.State8, (k+rot)%Lanes, v.spec)
			if (k+1)%Lanes != 0 && k != len(vs)-1 {
				continue
			}
			st.Init()
			ks := make([]uint32, Lanes*stride)
			st.KeyStream(ks, stride, stride)
			for j := k / Lanes * Lanes; j <= k; j++ {
				c := (j + rot) % Lanes
				for i, w := range vs[j].want {
					if got := ks[c*stride+i]; got != w {
						t.Errorf("%s lane %d word %d = %08x, want %08x", vs[j].id, c, i, got, w)
					}
				}
			}
		}
	}
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("../../testdata/vectors/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestGMSM compares ZUC-128 and ZUC-256 keystream lanes with gmsm.
func TestGMSM(t *testing.T) {
	need(t)
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 20; iter++ {
		var st State8
		var specs [Lanes]laneSpec
		for c := range specs {
			specs[c] = randomSpec(r)
			specs[c].c = zuclanes.ZUC256Keystream
			load(&st.State8, c, specs[c])
		}
		st.Init()
		n := 1 + r.IntN(700)
		var dst, src [Lanes][]byte
		for c := range dst {
			dst[c] = make([]byte, n)
			src[c] = make([]byte, n)
		}
		st.XORKeyStream(&dst, &src, n)
		for c, s := range specs {
			g, err := zuc.NewCipher(s.key, s.iv)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, n)
			g.XORKeyStream(want, want)
			if !bytes.Equal(dst[c], want) {
				t.Fatalf("iter %d lane %d (%d-byte key) differs from gmsm", iter, c, len(s.key))
			}
		}
	}
}

// TestKeyStream compares KeyStream over successive calls of random lengths
// (whole blocks and tails) with the reference, random ZUC-128/256 lanes.
func TestKeyStream(t *testing.T) {
	need(t)
	r := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 30; iter++ {
		var st zuclanes.State8
		var refs [Lanes]*ref
		for c := range refs {
			s := randomSpec(r)
			load(&st, c, s)
			refs[c] = refOf(s)
		}
		Init(&st)
		for call := 0; call < 4; call++ {
			n := r.IntN(70)
			stride := n + r.IntN(5)
			ks := make([]uint32, Lanes*stride+3)
			KeyStream(&st, ks, stride, n)
			for c, z := range refs {
				for i := 0; i < n; i++ {
					if want := z.word(); ks[c*stride+i] != want {
						t.Fatalf("iter %d call %d lane %d word %d: %08x, want %08x", iter, call, c, i, ks[c*stride+i], want)
					}
				}
			}
		}
	}
}

// xorCase runs one XORKeyStream check: lanes of length n at random
// unaligned offsets, random lanes inactive (nil), half in place, then a
// second call of m bytes continuing the keystream; bytes outside the
// lanes must stay untouched.
func xorCase(t testing.TB, r *rand.Rand, specs *[Lanes]laneSpec, n, m int) {
	var st State8
	var refs [Lanes]*ref
	for c := range specs {
		load(&st.State8, c, specs[c])
		refs[c] = refOf(specs[c])
	}
	st.Init()
	var want, back, srcBack [Lanes][]byte
	var dst, src, dst2, src2 [Lanes][]byte
	for c := range dst {
		ks := refs[c].bytes(n)
		ks2 := refs[c].bytes(m)
		if r.IntN(5) == 0 {
			continue // inactive lane: state advances, nothing written
		}
		off := r.IntN(32)
		back[c] = make([]byte, off+n+m+32)
		for i := range back[c] {
			back[c][i] = byte(r.Uint32())
		}
		srcBack[c] = back[c]
		if r.IntN(2) == 0 {
			srcBack[c] = make([]byte, len(back[c]))
			for i := range srcBack[c] {
				srcBack[c][i] = byte(r.Uint32())
			}
		}
		want[c] = bytes.Clone(back[c])
		for i := 0; i < n; i++ {
			want[c][off+i] = srcBack[c][off+i] ^ ks[i]
		}
		for i := 0; i < m; i++ {
			want[c][off+n+i] = srcBack[c][off+n+i] ^ ks2[i]
		}
		dst[c], src[c] = back[c][off:off+n], srcBack[c][off:off+n]
		dst2[c], src2[c] = back[c][off+n:off+n+m], srcBack[c][off+n:off+n+m]
	}
	st.XORKeyStream(&dst, &src, n)
	st.XORKeyStream(&dst2, &src2, m)
	for c := range want {
		if want[c] != nil && !bytes.Equal(back[c], want[c]) {
			t.Fatalf("n=%d m=%d lane %d differs from the reference", n, m, c)
		}
	}
}

// TestXORKeyStream covers every length 0..4096 and 8192, mixed ZUC-128 /
// ZUC-256 lanes with random keys and IVs.
func TestXORKeyStream(t *testing.T) {
	need(t)
	r := rand.New(rand.NewPCG(7, 8))
	lengths := []int{8192}
	for n := 0; n <= 4096; n++ {
		lengths = append(lengths, n)
	}
	if testing.Short() {
		lengths = lengths[:300]
	}
	for _, n := range lengths {
		var specs [Lanes]laneSpec
		for c := range specs {
			specs[c] = randomSpec(r)
		}
		xorCase(t, r, &specs, n, r.IntN(130))
	}
}

// TestMatchesGFNI compares with the x8 GFNI kernels of kernels/zuclanes
// where the CPU has them.
func TestMatchesGFNI(t *testing.T) {
	need(t)
	if !zuclanes.X8Supported() {
		t.Skip("CPU lacks the zuclanes x8 GFNI kernels")
	}
	r := rand.New(rand.NewPCG(9, 10))
	for iter := 0; iter < 50; iter++ {
		var a, b zuclanes.State8
		for c := range Lanes {
			s := randomSpec(r)
			load(&a, c, s)
			load(&b, c, s)
		}
		Init(&a)
		b.Init()
		n := r.IntN(600)
		ka, kb := make([]uint32, Lanes*n), make([]uint32, Lanes*n)
		KeyStream(&a, ka, n, n)
		b.KeyStream(kb, n, n)
		for i := range ka {
			if ka[i] != kb[i] {
				t.Fatalf("iter %d: word %d differs from the GFNI kernel", iter, i)
			}
		}
	}
}

// FuzzXORKeyStream compares the kernels with the reference on fuzzed keys,
// IVs and lengths.
func FuzzXORKeyStream(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef"), []byte("iv-iv-iv-iv-iv-iv-iv-iv"), uint16(100), uint8(3), uint64(1))
	f.Fuzz(func(t *testing.T, key, iv []byte, n uint16, m uint8, seed uint64) {
		need(t)
		r := rand.New(rand.NewPCG(seed, uint64(n)))
		var specs [Lanes]laneSpec
		for c := range specs {
			specs[c] = randomSpec(r)
			if c == 0 {
				if len(key) >= 32 && len(iv) >= 23 {
					specs[c].key, specs[c].iv = key[:32], iv[:23]
				} else if len(key) >= 16 && len(iv) >= 16 {
					specs[c] = laneSpec{key: key[:16], iv: iv[:16]}
				}
			}
		}
		xorCase(t, r, &specs, int(n%9000), int(m))
	})
}
