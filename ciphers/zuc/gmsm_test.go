package zuc

// Differential tests against github.com/emmansun/gmsm v0.40.0 (a test-only
// dependency): random keys, IVs, counters, byte lengths 0..4096 and random
// bit lengths, plus fuzz targets whose seeds run in every `go test`.

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	gmsm "github.com/emmansun/gmsm/zuc"
)

func gmsmEEA3(t testing.TB, key []byte, count uint32, bearer, dir uint8, src []byte, bits int) []byte {
	t.Helper()
	s, err := gmsm.NewEEACipher(key, count, uint32(bearer), uint32(dir))
	if err != nil {
		t.Fatal(err)
	}
	n := (bits + 7) / 8
	out := make([]byte, n)
	s.XORKeyStream(out, src[:n])
	if r := bits % 8; r != 0 {
		out[n-1] &= byte(0xff << (8 - r))
	}
	return out
}

func gmsmEIA3(t testing.TB, key []byte, count uint32, bearer, dir uint8, msg []byte, bits int) uint32 {
	t.Helper()
	h, err := gmsm.NewEIAHash(key, count, uint32(bearer), uint32(dir))
	if err != nil {
		t.Fatal(err)
	}
	return binary.BigEndian.Uint32(h.Finish(msg, bits))
}

func gmsmZUC256(t testing.TB, key, iv, src []byte) []byte {
	t.Helper()
	s, err := gmsm.NewCipher(key, iv)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, len(src))
	s.XORKeyStream(out, src)
	return out
}

func gmsmMAC256(t testing.TB, key, iv, msg []byte, bits, tagSize int) []byte {
	t.Helper()
	h, err := gmsm.NewHash256(key, iv, tagSize)
	if err != nil {
		t.Fatal(err)
	}
	return h.Finish(msg, bits)
}

// gmsmMAC256Agrees reports whether gmsm v0.40.0's ZUC-256 MAC is expected
// to be right for a message of bits bits. Its final-block routine
// (internal/zuc ZUC256Mac.checkSum) applies the keystream offset of the
// full words of a partial last 128-bit chunk twice for 64- and 128-bit
// tags, so it disagrees with the 2018 definition when bits mod 128 > 32
// (the published vectors, 400 and 4000 bits, do not reach that case). Those
// lengths are checked against the bit-by-bit transcription of the paper in
// ciphers/internal/zuc (TestMAC256AgainstSpec) instead. gmtun's own
// messages (header ‖ body, both multiples of 16 bytes) never hit it.
func gmsmMAC256Agrees(bits, tagSize int) bool {
	return tagSize == 4 || bits%128 <= 32
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// diffLengths returns the byte lengths to test: all of 0..4096 (every
// seventh with -short).
func diffLengths() []int {
	step := 1
	if testing.Short() {
		step = 7
	}
	var ls []int
	for n := 0; n <= 4096; n += step {
		ls = append(ls, n)
	}
	return ls
}

func TestDifferentialEEA3(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 1))
	for _, n := range diffLengths() {
		key, src := randBytes(r, 16), randBytes(r, n)
		count, bearer, dir := r.Uint32(), uint8(r.IntN(32)), uint8(r.IntN(2))
		for _, bits := range []int{8 * n, r.IntN(8*n + 1)} {
			want := gmsmEEA3(t, key, count, bearer, dir, src, bits)
			got := make([]byte, len(want))
			if err := EEA3(key, count, bearer, dir, got, src, bits); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("len %d bits %d: EEA3 differs from gmsm", n, bits)
			}
		}
		s, _ := NewEEA3(key, count, bearer, dir)
		got := make([]byte, n)
		s.XORKeyStream(got, src)
		if want := gmsmEEA3(t, key, count, bearer, dir, src, 8*n); !bytes.Equal(got, want) {
			t.Fatalf("len %d: NewEEA3 stream differs from gmsm", n)
		}
	}
}

func TestDifferentialEIA3(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 1))
	for _, n := range diffLengths() {
		key, msg := randBytes(r, 16), randBytes(r, n)
		count, bearer, dir := r.Uint32(), uint8(r.IntN(32)), uint8(r.IntN(2))
		for _, bits := range []int{8 * n, r.IntN(8*n + 1)} {
			got, err := EIA3(key, count, bearer, dir, msg, bits)
			if err != nil {
				t.Fatal(err)
			}
			if want := gmsmEIA3(t, key, count, bearer, dir, msg, bits); got != want {
				t.Fatalf("len %d bits %d: EIA3 = %08x, gmsm %08x", n, bits, got, want)
			}
		}
	}
}

func TestDifferentialZUC256(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 1))
	for _, n := range diffLengths() {
		key, iv, src := randBytes(r, 32), randBytes(r, 23), randBytes(r, n)
		s, err := NewZUC256(key, iv)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n)
		s.XORKeyStream(got, src)
		if want := gmsmZUC256(t, key, iv, src); !bytes.Equal(got, want) {
			t.Fatalf("len %d: ZUC-256 keystream differs from gmsm", n)
		}
	}
}

func TestDifferentialMAC256(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 1))
	for i, n := range diffLengths() {
		key, iv, msg := randBytes(r, 32), randBytes(r, 23), randBytes(r, n)
		tagSize := []int{4, 8, 16}[i%3]
		for _, bits := range []int{8 * n, r.IntN(8*n + 1)} {
			got, err := MAC256(key, iv, msg, bits, tagSize)
			if err != nil {
				t.Fatal(err)
			}
			if !gmsmMAC256Agrees(bits, tagSize) {
				continue
			}
			if want := gmsmMAC256(t, key, iv, msg, bits, tagSize); !bytes.Equal(got, want) {
				t.Fatalf("len %d bits %d tag %d: MAC256 = %x, gmsm %x", n, bits, tagSize, got, want)
			}
		}
	}
}

// fuzzBits maps a fuzzer-chosen integer to a bit length in 0..8·n.
func fuzzBits(b uint16, n int) int { return int(b) % (8*n + 1) }

func FuzzEEA3(f *testing.F) {
	f.Add(make([]byte, 16), uint32(0), uint8(0), uint8(0), []byte{}, uint16(0))
	f.Add(bytes.Repeat([]byte{0xff}, 16), uint32(0xffffffff), uint8(31), uint8(1), bytes.Repeat([]byte{0xa5}, 200), uint16(1597))
	f.Add([]byte("0123456789abcdef"), uint32(7), uint8(3), uint8(0), bytes.Repeat([]byte{1}, 64), uint16(512))
	f.Fuzz(func(t *testing.T, key []byte, count uint32, bearer, dir uint8, src []byte, b uint16) {
		if len(key) != 16 {
			if EEA3(key, count, bearer%32, dir%2, src, src, 0) == nil {
				t.Fatal("accepted a bad key")
			}
			return
		}
		bearer, dir = bearer%32, dir%2
		bits := fuzzBits(b, len(src))
		got := make([]byte, (bits+7)/8)
		if err := EEA3(key, count, bearer, dir, got, src, bits); err != nil {
			t.Fatal(err)
		}
		if want := gmsmEEA3(t, key, count, bearer, dir, src, bits); !bytes.Equal(got, want) {
			t.Fatalf("EEA3 differs from gmsm")
		}
	})
}

func FuzzEIA3(f *testing.F) {
	f.Add(make([]byte, 16), uint32(0), uint8(0), uint8(0), []byte{0}, uint16(1))
	f.Add(bytes.Repeat([]byte{0x5a}, 16), uint32(0x561eb2dd), uint8(28), uint8(1), bytes.Repeat([]byte{0x3c}, 709), uint16(5670))
	f.Fuzz(func(t *testing.T, key []byte, count uint32, bearer, dir uint8, msg []byte, b uint16) {
		if len(key) != 16 {
			if _, err := EIA3(key, count, bearer%32, dir%2, msg, 0); err == nil {
				t.Fatal("accepted a bad key")
			}
			return
		}
		bearer, dir = bearer%32, dir%2
		bits := fuzzBits(b, len(msg))
		got, err := EIA3(key, count, bearer, dir, msg, bits)
		if err != nil {
			t.Fatal(err)
		}
		if want := gmsmEIA3(t, key, count, bearer, dir, msg, bits); got != want {
			t.Fatalf("EIA3 = %08x, gmsm %08x", got, want)
		}
	})
}

func FuzzZUC256(f *testing.F) {
	f.Add(make([]byte, 32), make([]byte, 23), []byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0xff}, 23), bytes.Repeat([]byte{7}, 333))
	f.Fuzz(func(t *testing.T, key, iv, src []byte) {
		s, err := NewZUC256(key, iv)
		if len(key) != 32 || len(iv) != 23 {
			if err == nil {
				t.Fatal("accepted a bad key or IV")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(src))
		s.XORKeyStream(got, src)
		if want := gmsmZUC256(t, key, iv, src); !bytes.Equal(got, want) {
			t.Fatal("ZUC-256 keystream differs from gmsm")
		}
	})
}

func FuzzMAC256(f *testing.F) {
	f.Add(make([]byte, 32), make([]byte, 23), make([]byte, 50), uint16(400), uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0xff}, 23), bytes.Repeat([]byte{0x11}, 500), uint16(4000), uint8(2))
	f.Add(make([]byte, 32), make([]byte, 23), []byte{0xde, 0xad}, uint16(13), uint8(1))
	f.Fuzz(func(t *testing.T, key, iv, msg []byte, b uint16, ts uint8) {
		tagSize := []int{4, 8, 16}[ts%3]
		bits := fuzzBits(b, len(msg))
		got, err := MAC256(key, iv, msg, bits, tagSize)
		if len(key) != 32 || len(iv) != 23 {
			if err == nil {
				t.Fatal("accepted a bad key or IV")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !gmsmMAC256Agrees(bits, tagSize) {
			return
		}
		if want := gmsmMAC256(t, key, iv, msg, bits, tagSize); !bytes.Equal(got, want) {
			t.Fatalf("MAC256 = %x, gmsm %x", got, want)
		}
	})
}
