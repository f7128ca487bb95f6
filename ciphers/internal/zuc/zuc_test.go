package zuc

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"
)

const vectorDir = "../../../testdata/vectors/"

func loadVectors(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(vectorDir + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hexWord(t testing.TB, s string) uint32 {
	return binary.BigEndian.Uint32(unhex(t, s))
}

func TestKeystream128Vectors(t *testing.T) {
	var f struct {
		Vectors []struct {
			ID             string
			Key, IV        string
			KeystreamWords []struct {
				Index int
				Word  string
			} `json:"keystream_words"`
		}
	}
	loadVectors(t, "zuc128.json", &f)
	if len(f.Vectors) != 4 {
		t.Fatalf("want 4 vectors, got %d", len(f.Vectors))
	}
	for _, v := range f.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			var st State
			st.Init128((*[16]byte)(unhex(t, v.Key)), (*[16]byte)(unhex(t, v.IV)))
			maxIdx := 0
			for _, w := range v.KeystreamWords {
				maxIdx = max(maxIdx, w.Index)
			}
			z := make([]uint32, maxIdx)
			st.KeyWords(z)
			spec := specInit128(unhex(t, v.Key), unhex(t, v.IV)).words(maxIdx)
			for _, w := range v.KeystreamWords {
				want := hexWord(t, w.Word)
				if z[w.Index-1] != want {
					t.Errorf("z%d = %08x, want %08x", w.Index, z[w.Index-1], want)
				}
				if spec[w.Index-1] != want {
					t.Errorf("spec reference z%d = %08x, want %08x", w.Index, spec[w.Index-1], want)
				}
			}
		})
	}
}

func TestKeystream256Vectors(t *testing.T) {
	var f struct {
		Vectors []struct {
			ID             string
			Key, IV        string
			IV25           string   `json:"iv_25"`
			KeystreamWords []string `json:"keystream_words"`
		}
	}
	loadVectors(t, "zuc256.json", &f)
	if len(f.Vectors) != 2 {
		t.Fatalf("want 2 vectors, got %d", len(f.Vectors))
	}
	for _, v := range f.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			if got := unpackIV25(unhex(t, v.IV)); !bytes.Equal(got, unhex(t, v.IV25)) {
				t.Fatalf("unpacked IV %x, want %x", got, v.IV25)
			}
			d, _ := D256(0)
			var st State
			st.Init256((*[32]byte)(unhex(t, v.Key)), (*[23]byte)(unhex(t, v.IV)), &d)
			z := make([]uint32, len(v.KeystreamWords))
			st.KeyWords(z)
			spec := specInit256(unhex(t, v.Key), unhex(t, v.IV25), d[:]).words(len(z))
			for i, w := range v.KeystreamWords {
				want := hexWord(t, w)
				if z[i] != want || spec[i] != want {
					t.Errorf("z%d = %08x (spec %08x), want %08x", i+1, z[i], spec[i], want)
				}
			}
		})
	}
}

type eea3Vector struct {
	ID         string
	Key        string
	Count      string
	Bearer     uint8
	Direction  uint8
	LengthBits int `json:"length_bits"`
	Plaintext  string
	Ciphertext string
	Message    string
	MAC        string
}

func (v *eea3Vector) count(t testing.TB) uint32 { return hexWord(t, v.Count) }

func TestEEA3Vectors(t *testing.T) {
	var f struct{ Vectors []eea3Vector }
	loadVectors(t, "eea3.json", &f)
	if len(f.Vectors) != 5 {
		t.Fatalf("want 5 vectors, got %d", len(f.Vectors))
	}
	for _, v := range f.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			pt, ct := unhex(t, v.Plaintext), unhex(t, v.Ciphertext)
			iv := IVEEA3(v.count(t), v.Bearer, v.Direction)
			for _, dir := range []struct{ in, want []byte }{{pt, ct}, {ct, pt}} {
				var st State
				st.Init128((*[16]byte)(unhex(t, v.Key)), &iv)
				got := make([]byte, len(dir.in))
				XORKeyStreamGeneric(&st, got, dir.in)
				if r := v.LengthBits % 8; r != 0 {
					got[len(got)-1] &= byte(0xff << (8 - r))
				}
				if !bytes.Equal(got, dir.want) {
					t.Errorf("got  %x\nwant %x", got, dir.want)
				}
			}
			if got := specEEA3(unhex(t, v.Key), v.count(t), v.Bearer, v.Direction, pt, v.LengthBits); !bytes.Equal(got, ct) {
				t.Errorf("spec reference disagrees with the vector")
			}
		})
	}
}

func TestEIA3Vectors(t *testing.T) {
	var f struct{ Vectors []eea3Vector }
	loadVectors(t, "eia3.json", &f)
	if len(f.Vectors) != 5 {
		t.Fatalf("want 5 vectors, got %d", len(f.Vectors))
	}
	for _, v := range f.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			msg := unhex(t, v.Message)
			want := hexWord(t, v.MAC)
			iv := IVEIA3(v.count(t), v.Bearer, v.Direction)
			var st State
			st.Init128((*[16]byte)(unhex(t, v.Key)), &iv)
			if got := EIA3Generic(&st, msg, v.LengthBits); got != want {
				t.Errorf("EIA3Generic = %08x, want %08x", got, want)
			}
			if got := specEIA3(unhex(t, v.Key), v.count(t), v.Bearer, v.Direction, msg, v.LengthBits); got != want {
				t.Errorf("spec reference = %08x, want %08x", got, want)
			}
		})
	}
}

func TestMAC256Vectors(t *testing.T) {
	var f struct {
		Vectors []struct {
			ID         string
			Key, IV    string
			Message    string
			LengthBits int `json:"length_bits"`
			TagBits    int `json:"tag_bits"`
			Tag        string
		}
	}
	loadVectors(t, "zuc256_mac.json", &f)
	if len(f.Vectors) != 12 {
		t.Fatalf("want 12 vectors, got %d", len(f.Vectors))
	}
	for _, v := range f.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			key, iv, msg, want := unhex(t, v.Key), unhex(t, v.IV), unhex(t, v.Message), unhex(t, v.Tag)
			d, ok := D256(v.TagBits / 8)
			if !ok {
				t.Fatalf("no constants for %d-bit tags", v.TagBits)
			}
			var st State
			st.Init256((*[32]byte)(key), (*[23]byte)(iv), &d)
			got := make([]byte, v.TagBits/8)
			MAC256Generic(&st, msg, v.LengthBits, got)
			if !bytes.Equal(got, want) {
				t.Errorf("MAC256Generic = %x, want %x", got, want)
			}
			spec := specMAC256(key, iv, msg, v.LengthBits, v.TagBits)
			for q, w := range spec {
				if w != binary.BigEndian.Uint32(want[4*q:]) {
					t.Errorf("spec reference word %d = %08x, want %x", q, w, want[4*q:4*q+4])
				}
			}
		})
	}
}

func TestD256(t *testing.T) {
	for _, n := range []int{-1, 1, 2, 3, 12, 32} {
		if _, ok := D256(n); ok {
			t.Errorf("D256(%d) accepted", n)
		}
	}
	seen := map[[16]byte]bool{}
	for _, n := range []int{0, 4, 8, 16} {
		d, ok := D256(n)
		if !ok || seen[d] {
			t.Errorf("D256(%d) = %x, %v: missing or not distinct", n, d, ok)
		}
		seen[d] = true
	}
}

func TestClmulLo(t *testing.T) {
	ref := func(x, y uint64) uint64 {
		var z uint64
		for i := range 64 {
			if y>>i&1 == 1 {
				z ^= x << i
			}
		}
		return z
	}
	r := rand.New(rand.NewPCG(1, 2))
	cases := [][2]uint64{{0, 0}, {^uint64(0), ^uint64(0)}, {1, ^uint64(0)}, {^uint64(0), 1}, {1 << 63, 1 << 63}}
	for range 20000 {
		cases = append(cases, [2]uint64{r.Uint64(), r.Uint64()})
	}
	for _, c := range cases {
		if got, want := clmulLo(c[0], c[1]), ref(c[0], c[1]); got != want {
			t.Fatalf("clmulLo(%#x, %#x) = %#x, want %#x", c[0], c[1], got, want)
		}
	}
}

// TestKeystreamAgainstSpec compares the unrolled generator (through
// KeyWords, which mixes 16-round blocks and single rounds) and the block
// XOR with the spec transcription for random keys and IVs.
func TestKeystreamAgainstSpec(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 40 {
		key, iv := make([]byte, 16), make([]byte, 16)
		fill(r, key)
		fill(r, iv)
		n := iter * 7
		spec := specInit128(key, iv).words(n + 64)
		var st State
		st.Init128((*[16]byte)(key), (*[16]byte)(iv))
		z := make([]uint32, n)
		st.KeyWords(z)
		more := make([]uint32, 64)
		st.KeyWords(more)
		z = append(z, more...)
		for i := range z {
			if z[i] != spec[i] {
				t.Fatalf("iter %d: word %d = %08x, want %08x", iter, i, z[i], spec[i])
			}
		}
		// XORKeyStreamGeneric over n bytes equals the first n keystream bytes.
		st.Init128((*[16]byte)(key), (*[16]byte)(iv))
		buf := make([]byte, 4*n+3)
		fill(r, buf)
		out := make([]byte, len(buf))
		XORKeyStreamGeneric(&st, out, buf)
		for i := range buf {
			if out[i]^buf[i] != byte(spec[i/4]>>(24-8*(i%4))) {
				t.Fatalf("iter %d: XOR byte %d wrong", iter, i)
			}
		}
	}
}

func fill(r *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

// TestEIA3AgainstSpec checks every bit length 0..1600 (and some long ones)
// against the bit-by-bit transcription.
func TestEIA3AgainstSpec(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	lengths := make([]int, 0, 1700)
	for n := 0; n <= 1600; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 4095, 4096, 4097, 8*1436, 8*1436+5)
	if testing.Short() {
		lengths = lengths[:300]
	}
	for _, n := range lengths {
		key := make([]byte, 16)
		fill(r, key)
		msg := make([]byte, (n+7)/8)
		fill(r, msg)
		count, bearer, dir := r.Uint32(), uint8(r.IntN(32)), uint8(r.IntN(2))
		iv := IVEIA3(count, bearer, dir)
		var st State
		st.Init128((*[16]byte)(key), &iv)
		got := EIA3Generic(&st, msg, n)
		if want := specEIA3(key, count, bearer, dir, msg, n); got != want {
			t.Fatalf("bits %d: EIA3Generic = %08x, spec %08x", n, got, want)
		}
	}
}

func TestMAC256AgainstSpec(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	step := 1
	if testing.Short() {
		step = 7
	}
	for _, tagSize := range []int{4, 8, 16} {
		for n := 0; n <= 1300; n += step {
			key, iv := make([]byte, 32), make([]byte, 23)
			fill(r, key)
			fill(r, iv)
			msg := make([]byte, (n+7)/8+r.IntN(3))
			fill(r, msg)
			d, _ := D256(tagSize)
			var st State
			st.Init256((*[32]byte)(key), (*[23]byte)(iv), &d)
			got := make([]byte, tagSize)
			MAC256Generic(&st, msg, n, got)
			spec := specMAC256(key, iv, msg, n, 8*tagSize)
			for q, w := range spec {
				if binary.BigEndian.Uint32(got[4*q:]) != w {
					t.Fatalf("tag %d bytes, bits %d: word %d = %x, spec %08x", tagSize, n, q, got[4*q:4*q+4], w)
				}
			}
		}
	}
}

func TestIVs(t *testing.T) {
	// Document 1 v1.7 §3.3 and §4.3, worked by hand for COUNT = 0x01020304,
	// BEARER = 0x1f, DIRECTION = 1.
	eea := IVEEA3(0x01020304, 0x1f, 1)
	wantEEA := [16]byte{1, 2, 3, 4, 0xfc, 0, 0, 0, 1, 2, 3, 4, 0xfc, 0, 0, 0}
	if eea != wantEEA {
		t.Errorf("IVEEA3 = %x, want %x", eea, wantEEA)
	}
	eia := IVEIA3(0x01020304, 0x1f, 1)
	wantEIA := [16]byte{1, 2, 3, 4, 0xf8, 0, 0, 0, 0x81, 2, 3, 4, 0xf8, 0, 0x80, 0}
	if eia != wantEIA {
		t.Errorf("IVEIA3 = %x, want %x", eia, wantEIA)
	}
}

func TestNoAllocs(t *testing.T) {
	key128, iv128 := new([16]byte), new([16]byte)
	key256, iv256 := new([32]byte), new([23]byte)
	msg := make([]byte, 1500)
	out := make([]byte, 1500)
	tag := make([]byte, 16)
	d, _ := D256(16)
	allocs := testing.AllocsPerRun(50, func() {
		var st State
		st.Init128(key128, iv128)
		XORKeyStreamGeneric(&st, out, msg[:1421])
		st.Init128(key128, iv128)
		EIA3Generic(&st, msg, 8*1421+3)
		st.Init256(key256, iv256, &d)
		MAC256Generic(&st, msg, 8*1436, tag)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run, want 0", allocs)
	}
}
