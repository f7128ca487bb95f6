package zuc

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/cryptotest"
)

func loadVectors(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("../../testdata/vectors/" + name)
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

type vector3GPP struct {
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

func TestEEA3Vectors(t *testing.T) {
	var f struct{ Vectors []vector3GPP }
	loadVectors(t, "eea3.json", &f)
	if len(f.Vectors) != 5 {
		t.Fatalf("want 5 vectors, got %d", len(f.Vectors))
	}
	for _, v := range f.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			key, pt, ct := unhex(t, v.Key), unhex(t, v.Plaintext), unhex(t, v.Ciphertext)
			count := binary.BigEndian.Uint32(unhex(t, v.Count))
			for _, c := range []struct{ in, want []byte }{{pt, ct}, {ct, pt}} {
				// Set the trailing bits of the input: EEA3 must clear them.
				in := bytes.Clone(c.in)
				if r := v.LengthBits % 8; r != 0 {
					in[len(in)-1] |= 0xff >> r
				}
				got := make([]byte, len(in)+2)
				if err := EEA3(key, count, v.Bearer, v.Direction, got, in, v.LengthBits); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got[:len(in)], c.want) || got[len(in)] != 0 || got[len(in)+1] != 0 {
					t.Errorf("EEA3 = %x\nwant   %x", got, c.want)
				}
				// In place.
				if err := EEA3(key, count, v.Bearer, v.Direction, in, in, v.LengthBits); err != nil || !bytes.Equal(in, c.want) {
					t.Errorf("in-place EEA3 = %x, %v", in, err)
				}
			}
			s, err := NewEEA3(key, count, v.Bearer, v.Direction)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(pt))
			s.XORKeyStream(got, pt)
			n := v.LengthBits / 8
			if !bytes.Equal(got[:n], ct[:n]) {
				t.Errorf("NewEEA3 stream differs in the whole bytes")
			}
		})
	}
}

func TestEIA3Vectors(t *testing.T) {
	var f struct{ Vectors []vector3GPP }
	loadVectors(t, "eia3.json", &f)
	if len(f.Vectors) != 5 {
		t.Fatalf("want 5 vectors, got %d", len(f.Vectors))
	}
	for _, v := range f.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			key, msg := unhex(t, v.Key), unhex(t, v.Message)
			count := binary.BigEndian.Uint32(unhex(t, v.Count))
			want := binary.BigEndian.Uint32(unhex(t, v.MAC))
			got, err := EIA3(key, count, v.Bearer, v.Direction, msg, v.LengthBits)
			if err != nil || got != want {
				t.Errorf("EIA3 = %08x, %v; want %08x", got, err, want)
			}
			// Bits past the length are not input.
			if r := v.LengthBits % 8; r != 0 {
				m := bytes.Clone(msg)
				m[len(m)-1] ^= 0xff >> r
				if got, _ := EIA3(key, count, v.Bearer, v.Direction, m, v.LengthBits); got != want {
					t.Errorf("trailing bits changed the MAC")
				}
			}
			// A flipped message bit changes it.
			if v.LengthBits > 0 {
				m := bytes.Clone(msg)
				m[0] ^= 0x80
				if got, _ := EIA3(key, count, v.Bearer, v.Direction, m, v.LengthBits); got == want {
					t.Errorf("flipping bit 0 left the MAC unchanged")
				}
			}
		})
	}
}

func TestZUC256Vectors(t *testing.T) {
	var f struct {
		Vectors []struct {
			ID             string
			Key, IV        string
			KeystreamWords []string `json:"keystream_words"`
		}
	}
	loadVectors(t, "zuc256.json", &f)
	if len(f.Vectors) != 2 {
		t.Fatalf("want 2 vectors, got %d", len(f.Vectors))
	}
	for _, v := range f.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			s, err := NewZUC256(unhex(t, v.Key), unhex(t, v.IV))
			if err != nil {
				t.Fatal(err)
			}
			ks := make([]byte, 4*len(v.KeystreamWords))
			s.XORKeyStream(ks, ks)
			want := unhex(t, joinHex(v.KeystreamWords))
			if !bytes.Equal(ks, want) {
				t.Errorf("keystream %x\nwant      %x", ks, want)
			}
		})
	}
}

func joinHex(words []string) string {
	var b bytes.Buffer
	for _, w := range words {
		b.WriteString(w)
	}
	return b.String()
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
	sizes := map[int]int{}
	for _, v := range f.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			sizes[v.TagBits]++
			tag, err := MAC256(unhex(t, v.Key), unhex(t, v.IV), unhex(t, v.Message), v.LengthBits, v.TagBits/8)
			if want := unhex(t, v.Tag); err != nil || !bytes.Equal(tag, want) {
				t.Errorf("MAC256 = %x, %v; want %x", tag, err, want)
			}
		})
	}
	if sizes[32] != 4 || sizes[64] != 4 || sizes[128] != 4 {
		t.Errorf("tag sizes covered: %v", sizes)
	}
}

func TestStreamConformance(t *testing.T) {
	key := bytes.Repeat([]byte{0x3c}, 32)
	iv := bytes.Repeat([]byte{0xa5}, 23)
	t.Run("EEA3", func(t *testing.T) {
		cryptotest.TestStream(t, func() cipher.Stream {
			s, err := NewEEA3(key[:16], 0x12345678, 7, 1)
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("ZUC256", func(t *testing.T) {
		cryptotest.TestStream(t, func() cipher.Stream {
			s, err := NewZUC256(key, iv)
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

func TestErrors(t *testing.T) {
	k16, k32, iv := make([]byte, 16), make([]byte, 32), make([]byte, 23)
	buf := make([]byte, 10)
	type result struct {
		name string
		err  error
	}
	var cases []result
	add := func(name string, err error) { cases = append(cases, result{name, err}) }
	for _, k := range [][]byte{nil, k16[:15], k32} {
		_, err := NewEEA3(k, 0, 0, 0)
		add("NewEEA3 key", err)
		add("EEA3 key", EEA3(k, 0, 0, 0, buf, buf, 8))
		_, err = EIA3(k, 0, 0, 0, buf, 8)
		add("EIA3 key", err)
	}
	_, err := NewEEA3(k16, 0, 32, 0)
	add("NewEEA3 bearer", err)
	_, err = NewEEA3(k16, 0, 0, 2)
	add("NewEEA3 direction", err)
	add("EEA3 bearer", EEA3(k16, 0, 32, 0, buf, buf, 8))
	add("EEA3 direction", EEA3(k16, 0, 0, 2, buf, buf, 8))
	add("EEA3 bits<0", EEA3(k16, 0, 0, 0, buf, buf, -1))
	add("EEA3 bits>len", EEA3(k16, 0, 0, 0, buf, buf, 81))
	add("EEA3 short dst", EEA3(k16, 0, 0, 0, buf[:1], buf, 9))
	add("EEA3 overlap", EEA3(k16, 0, 0, 0, buf[1:], buf[:9], 72))
	_, err = EIA3(k16, 0, 32, 0, buf, 8)
	add("EIA3 bearer", err)
	_, err = EIA3(k16, 0, 0, 2, buf, 8)
	add("EIA3 direction", err)
	_, err = EIA3(k16, 0, 0, 0, buf, -1)
	add("EIA3 bits<0", err)
	_, err = EIA3(k16, 0, 0, 0, buf, 81)
	add("EIA3 bits>len", err)
	for _, k := range [][]byte{nil, k16, k32[:31], append(k32, 0)} {
		_, err = NewZUC256(k, iv)
		add("NewZUC256 key", err)
		_, err = MAC256(k, iv, buf, 8, 16)
		add("MAC256 key", err)
	}
	for _, v := range [][]byte{nil, iv[:16], iv[:22], append(iv, 0)} {
		_, err = NewZUC256(k32, v)
		add("NewZUC256 iv", err)
		_, err = MAC256(k32, v, buf, 8, 16)
		add("MAC256 iv", err)
	}
	for _, ts := range []int{-4, 0, 1, 2, 3, 5, 12, 32} {
		_, err = MAC256(k32, iv, buf, 8, ts)
		add("MAC256 tag size", err)
	}
	_, err = MAC256(k32, iv, buf, -1, 4)
	add("MAC256 bits<0", err)
	_, err = MAC256(k32, iv, buf, 81, 4)
	add("MAC256 bits>len", err)
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		} else if msg := c.err.Error(); len(msg) < 5 || msg[:5] != "zuc: " {
			t.Errorf("%s: error %q lacks the package prefix", c.name, msg)
		}
	}
	// Edge cases that are valid.
	if err := EEA3(k16, 0, 31, 1, nil, nil, 0); err != nil {
		t.Errorf("empty EEA3: %v", err)
	}
	if _, err := EIA3(k16, 0, 31, 1, nil, 0); err != nil {
		t.Errorf("empty EIA3: %v", err)
	}
	if _, err := MAC256(k32, iv, nil, 0, 8); err != nil {
		t.Errorf("empty MAC256: %v", err)
	}
	if err := EEA3(k16, 0, 0, 0, buf, buf, 80); err != nil {
		t.Errorf("in-place EEA3: %v", err)
	}
}

func TestStreamPanics(t *testing.T) {
	s, _ := NewEEA3(make([]byte, 16), 0, 0, 0)
	for _, f := range []func(){
		func() { s.XORKeyStream(make([]byte, 3), make([]byte, 4)) },
		func() { b := make([]byte, 9); s.XORKeyStream(b[1:], b[:8]) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}

func TestNoAllocs(t *testing.T) {
	k16, buf := make([]byte, 16), make([]byte, 1500)
	allocs := testing.AllocsPerRun(50, func() {
		if err := EEA3(k16, 1, 2, 1, buf, buf, 8*1420-3); err != nil {
			t.Fatal(err)
		}
		if _, err := EIA3(k16, 1, 2, 1, buf, 8*1436+1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("EEA3+EIA3: %v allocations, want 0", allocs)
	}
	s, _ := NewZUC256(make([]byte, 32), make([]byte, 23))
	allocs = testing.AllocsPerRun(50, func() { s.XORKeyStream(buf[:1421], buf[:1421]) })
	if allocs != 0 {
		t.Errorf("stream XORKeyStream: %v allocations, want 0", allocs)
	}
}
