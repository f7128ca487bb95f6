//go:build amd64 && gc && !purego

package sm4bs

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"testing"

	gmsm4 "github.com/emmansun/gmsm/sm4"
)

// testSBox is the SM4 S-box τ of GB/T 32907-2016 §6.2.1, used only by the
// test key schedule (the kernel itself is checked against gmsm, an
// independent implementation).
var testSBox = [256]byte{
	0xd6, 0x90, 0xe9, 0xfe, 0xcc, 0xe1, 0x3d, 0xb7, 0x16, 0xb6, 0x14, 0xc2, 0x28, 0xfb, 0x2c, 0x05,
	0x2b, 0x67, 0x9a, 0x76, 0x2a, 0xbe, 0x04, 0xc3, 0xaa, 0x44, 0x13, 0x26, 0x49, 0x86, 0x06, 0x99,
	0x9c, 0x42, 0x50, 0xf4, 0x91, 0xef, 0x98, 0x7a, 0x33, 0x54, 0x0b, 0x43, 0xed, 0xcf, 0xac, 0x62,
	0xe4, 0xb3, 0x1c, 0xa9, 0xc9, 0x08, 0xe8, 0x95, 0x80, 0xdf, 0x94, 0xfa, 0x75, 0x8f, 0x3f, 0xa6,
	0x47, 0x07, 0xa7, 0xfc, 0xf3, 0x73, 0x17, 0xba, 0x83, 0x59, 0x3c, 0x19, 0xe6, 0x85, 0x4f, 0xa8,
	0x68, 0x6b, 0x81, 0xb2, 0x71, 0x64, 0xda, 0x8b, 0xf8, 0xeb, 0x0f, 0x4b, 0x70, 0x56, 0x9d, 0x35,
	0x1e, 0x24, 0x0e, 0x5e, 0x63, 0x58, 0xd1, 0xa2, 0x25, 0x22, 0x7c, 0x3b, 0x01, 0x21, 0x78, 0x87,
	0xd4, 0x00, 0x46, 0x57, 0x9f, 0xd3, 0x27, 0x52, 0x4c, 0x36, 0x02, 0xe7, 0xa0, 0xc4, 0xc8, 0x9e,
	0xea, 0xbf, 0x8a, 0xd2, 0x40, 0xc7, 0x38, 0xb5, 0xa3, 0xf7, 0xf2, 0xce, 0xf9, 0x61, 0x15, 0xa1,
	0xe0, 0xae, 0x5d, 0xa4, 0x9b, 0x34, 0x1a, 0x55, 0xad, 0x93, 0x32, 0x30, 0xf5, 0x8c, 0xb1, 0xe3,
	0x1d, 0xf6, 0xe2, 0x2e, 0x82, 0x66, 0xca, 0x60, 0xc0, 0x29, 0x23, 0xab, 0x0d, 0x53, 0x4e, 0x6f,
	0xd5, 0xdb, 0x37, 0x45, 0xde, 0xfd, 0x8e, 0x2f, 0x03, 0xff, 0x6a, 0x72, 0x6d, 0x6c, 0x5b, 0x51,
	0x8d, 0x1b, 0xaf, 0x92, 0xbb, 0xdd, 0xbc, 0x7f, 0x11, 0xd9, 0x5c, 0x41, 0x1f, 0x10, 0x5a, 0xd8,
	0x0a, 0xc1, 0x31, 0x88, 0xa5, 0xcd, 0x7b, 0xbd, 0x2d, 0x74, 0xd0, 0x12, 0xb8, 0xe5, 0xb4, 0xb0,
	0x89, 0x69, 0x97, 0x4a, 0x0c, 0x96, 0x77, 0x7e, 0x65, 0xb9, 0xf1, 0x09, 0xc5, 0x6e, 0xc6, 0x84,
	0x18, 0xf0, 0x7d, 0xec, 0x3a, 0xdc, 0x4d, 0x20, 0x79, 0xee, 0x5f, 0x3e, 0xd7, 0xcb, 0x39, 0x48,
}

// expandKey is the SM4 key schedule of GB/T 32907-2016 §7.3 (variable-time
// table lookups; test use only).
func expandKey(key []byte) (enc, dec [32]uint32) {
	fk := [4]uint32{0xa3b1bac6, 0x56aa3350, 0x677d9197, 0xb27022dc}
	var k [36]uint32
	for i := 0; i < 4; i++ {
		k[i] = binary.BigEndian.Uint32(key[4*i:]) ^ fk[i]
	}
	for i := 0; i < 32; i++ {
		var ck uint32
		for j := 0; j < 4; j++ {
			ck = ck<<8 | uint32((4*i+j)*7%256)
		}
		a := k[i+1] ^ k[i+2] ^ k[i+3] ^ ck
		var b uint32
		for j := 0; j < 4; j++ {
			b |= uint32(testSBox[byte(a>>(8*j))]) << (8 * j)
		}
		k[i+4] = k[i] ^ b ^ bits.RotateLeft32(b, 13) ^ bits.RotateLeft32(b, 23)
		enc[i] = k[i+4]
	}
	for i := range dec {
		dec[i] = enc[31-i]
	}
	return enc, dec
}

func requireAVX2(t testing.TB) {
	t.Helper()
	if !Supported() {
		t.Skip("sm4bs: CPU lacks AVX2; bitsliced kernel not tested")
	}
}

func newKey(t testing.TB, key []byte) (cipher.Block, *[32]uint32, *[32]uint32) {
	t.Helper()
	b, err := gmsm4.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	enc, dec := expandKey(key)
	return b, &enc, &dec
}

func randomBytes(r *rand.ChaCha8, n int) []byte {
	b := make([]byte, n)
	_, _ = r.Read(b)
	return b
}

// refXORKeyStream is GCTR over whole blocks with inc32, built from gmsm's
// one-block cipher: the oracle for XORKeyStream.
func refXORKeyStream(b cipher.Block, ctr [16]byte, dst, src []byte) {
	var ks [16]byte
	for i := 0; i+16 <= len(src); i += 16 {
		b.Encrypt(ks[:], ctr[:])
		for j := 0; j < 16; j++ {
			dst[i+j] = src[i+j] ^ ks[j]
		}
		binary.BigEndian.PutUint32(ctr[12:], binary.BigEndian.Uint32(ctr[12:])+1)
	}
}

func TestGBT32907Vectors(t *testing.T) {
	requireAVX2(t)
	var f struct {
		Vectors []struct {
			ID, Key, Plaintext, Ciphertext string
			Iterations                     int
		}
	}
	data, err := os.ReadFile("../../testdata/vectors/sm4.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors in sm4.json")
	}
	for _, v := range f.Vectors {
		if v.Iterations > 1 && testing.Short() {
			continue
		}
		key, _ := hex.DecodeString(v.Key)
		pt, _ := hex.DecodeString(v.Plaintext)
		_, enc, dec := newKey(t, key)
		// Every block of a full batch holds the plaintext, so each lane
		// must reach the vector independently.
		buf := bytes.Repeat(pt, BatchBlocks)
		for i := 0; i < v.Iterations; i++ {
			EncryptBlocks(enc, buf, buf)
		}
		for i := 0; i < BatchBlocks; i++ {
			if got := hex.EncodeToString(buf[16*i : 16*i+16]); got != v.Ciphertext {
				t.Fatalf("%s: block %d = %s, want %s", v.ID, i, got, v.Ciphertext)
			}
		}
		if v.Iterations == 1 {
			one := append([]byte(nil), buf[:16]...)
			EncryptBlocks(dec, one, one)
			if !bytes.Equal(one, pt) {
				t.Errorf("%s: decryption with reversed round keys failed", v.ID)
			}
		}
	}
}

// TestEncryptBlocks compares with gmsm on random keys and data for block
// counts around and across batch boundaries, unaligned and in place.
func TestEncryptBlocks(t *testing.T) {
	requireAVX2(t)
	r := rand.NewChaCha8([32]byte{1})
	counts := []int{1, 2, 89, 255, 256, 257, 511, 512, 768, 1000, 4096}
	for _, n := range counts {
		for _, inPlace := range []bool{false, true} {
			name := fmt.Sprintf("%d/inplace=%v", n, inPlace)
			t.Run(name, func(t *testing.T) {
				blk, enc, _ := newKey(t, randomBytes(r, 16))
				off := int(r.Uint64() % 16)
				src := randomBytes(r, n*16+off)[off:]
				want := make([]byte, len(src))
				for i := 0; i < len(src); i += 16 {
					blk.Encrypt(want[i:], src[i:i+16])
				}
				var dst []byte
				if inPlace {
					dst = src
				} else {
					dst = make([]byte, len(src)+32+1)[1:]
					for i := range dst {
						dst[i] = 0xa5
					}
				}
				EncryptBlocks(enc, dst, src)
				if !bytes.Equal(dst[:len(want)], want) {
					t.Fatalf("ciphertext differs from gmsm (first diff at byte %d)", firstDiff(dst, want))
				}
				if !inPlace {
					for i := len(want); i < len(dst); i++ {
						if dst[i] != 0xa5 {
							t.Fatalf("wrote past the output at %d", i)
						}
					}
				}
			})
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range b {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestXORKeyStream compares with gmsm-based GCTR, including counters that
// wrap the 32-bit inc32 word inside a batch and a trailing partial block.
func TestXORKeyStream(t *testing.T) {
	requireAVX2(t)
	r := rand.NewChaCha8([32]byte{2})
	counts := []int{16, 89*16 + 12, 255 * 16, 4096, 4096 + 16, 1420, 16384, 65536 + 7}
	lows := []uint32{0, 0xffffff80, 0xfffffffe, 0x7fffffff}
	for _, n := range counts {
		for _, low := range lows {
			for _, inPlace := range []bool{false, true} {
				t.Run(fmt.Sprintf("%d/%#x/inplace=%v", n, low, inPlace), func(t *testing.T) {
					blk, enc, _ := newKey(t, randomBytes(r, 16))
					var ctr [16]byte
					copy(ctr[:], randomBytes(r, 16))
					binary.BigEndian.PutUint32(ctr[12:], low)
					off := int(r.Uint64() % 16)
					src := randomBytes(r, n+off)[off:]
					whole := n / 16 * 16
					want := make([]byte, n)
					copy(want, src)
					refXORKeyStream(blk, ctr, want, src)
					var dst []byte
					if inPlace {
						dst = src
					} else {
						dst = make([]byte, n)
						copy(dst[whole:], src[whole:])
					}
					c := ctr
					XORKeyStream(enc, &c, dst, src)
					if !bytes.Equal(dst, want) {
						t.Fatalf("output differs from reference GCTR (first diff at byte %d)", firstDiff(dst, want))
					}
					binary.BigEndian.PutUint32(ctr[12:], low+uint32(n/16))
					if c != ctr {
						t.Fatalf("counter after = %x, want %x", c, ctr)
					}
				})
			}
		}
	}
}

// TestTransposeLayout checks the documented plane layout of the forward
// transpose against a bit-by-bit model.
func TestTransposeLayout(t *testing.T) {
	requireAVX2(t)
	r := rand.NewChaCha8([32]byte{3})
	src := randomBytes(r, batchBytes)
	dst := make([]byte, batchBytes)
	transposeAVX2(&dst[0], &src[0])
	for p := 0; p < 16; p++ {
		for bit := 0; bit < 8; bit++ {
			row := dst[32*(16*bit+p):][:32]
			for q := 0; q < 256; q++ {
				i := 32*(q&7) + 2*((q>>3)&15) + q>>7
				want := src[16*i+p] >> bit & 1
				if got := row[q/8] >> (q % 8) & 1; got != want {
					t.Fatalf("plane (byte %d, bit %d) position %d = %d, want bit of block %d = %d", p, bit, q, got, i, want)
				}
			}
		}
	}
}

func TestNoAllocs(t *testing.T) {
	requireAVX2(t)
	_, enc, _ := newKey(t, make([]byte, 16))
	buf := make([]byte, 1420)
	var ctr [16]byte
	if n := testing.AllocsPerRun(20, func() { XORKeyStream(enc, &ctr, buf, buf) }); n != 0 {
		t.Errorf("XORKeyStream allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(20, func() { EncryptBlocks(enc, buf[:1408], buf[:1408]) }); n != 0 {
		t.Errorf("EncryptBlocks allocates %v times per call", n)
	}
}

func TestArgumentPanics(t *testing.T) {
	requireAVX2(t)
	_, enc, _ := newKey(t, make([]byte, 16))
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	mustPanic("partial block", func() { EncryptBlocks(enc, make([]byte, 32), make([]byte, 17)) })
	mustPanic("short dst", func() { EncryptBlocks(enc, make([]byte, 16), make([]byte, 32)) })
	var ctr [16]byte
	mustPanic("short ctr dst", func() { XORKeyStream(enc, &ctr, make([]byte, 16), make([]byte, 32)) })
}

func FuzzXORKeyStream(f *testing.F) {
	f.Add(make([]byte, 16), make([]byte, 16), make([]byte, 100))
	f.Add(bytes.Repeat([]byte{0xff}, 16), bytes.Repeat([]byte{0xff}, 16), make([]byte, 4200))
	f.Fuzz(func(t *testing.T, key, ctrb, data []byte) {
		if !Supported() {
			t.Skip("sm4bs: CPU lacks AVX2")
		}
		if len(key) != 16 || len(ctrb) != 16 {
			return
		}
		blk, enc, _ := newKey(t, key)
		var ctr [16]byte
		copy(ctr[:], ctrb)
		want := append([]byte(nil), data...)
		refXORKeyStream(blk, ctr, want, data)
		got := append([]byte(nil), data...)
		c := ctr
		XORKeyStream(enc, &c, got, got)
		if !bytes.Equal(got, want) {
			t.Fatalf("differs from reference GCTR at byte %d", firstDiff(got, want))
		}
		if len(data) >= 16 {
			ecb := make([]byte, len(data)/16*16)
			EncryptBlocks(enc, ecb, data[:len(ecb)])
			for i := 0; i < len(ecb); i += 16 {
				var w [16]byte
				blk.Encrypt(w[:], data[i:i+16])
				if !bytes.Equal(ecb[i:i+16], w[:]) {
					t.Fatalf("EncryptBlocks differs from gmsm at block %d", i/16)
				}
			}
		}
	})
}
