//go:build amd64 && gc && !purego

package sm4bs

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	gmsm4 "github.com/emmansun/gmsm/sm4"
	"github.com/gmtun/gmtun/kernels/cpu"
	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
	"github.com/gmtun/gmtun/kernels/internal/sm4ref"
)

// expandKey returns the test key schedule (kernels/internal/sm4ref).
func expandKey(key []byte) (enc, dec [32]uint32) { return sm4ref.ExpandKey(key) }

// form is one of the package's two kernel forms, so every test runs both.
type form struct {
	name      string
	tier      string // the kernels/cpu tier name of its features
	batch     int    // blocks per pass
	supported func() bool
	ecb       func(rk *[32]uint32, dst, src []byte)
	ctr       func(rk *[32]uint32, ctr *[16]byte, dst, src []byte)
	transpose func(dst, src *byte)
}

var forms = []form{
	{"AVX2", cpu.TierAVX2, BatchBlocks, Supported, EncryptBlocks, XORKeyStream, transposeAVX2},
	{"AVX512", cpu.TierAVX512, BatchBlocks512, Supported512, EncryptBlocks512, XORKeyStream512, transposeAVX512},
}

// runForms runs f as a subtest per form, skipping (or failing, see
// kerneltest) the forms the CPU lacks.
func runForms(t *testing.T, f func(t *testing.T, fm form)) {
	for _, fm := range forms {
		t.Run(fm.name, func(t *testing.T) {
			if !fm.supported() {
				kerneltest.Unsupported(t, "sm4bs: CPU lacks %s; %s bitsliced kernel not tested", fm.tier, fm.name)
			}
			f(t, fm)
		})
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
	runForms(t, func(t *testing.T, fm form) {
		for _, v := range f.Vectors {
			if v.Iterations > 1 && testing.Short() {
				continue
			}
			key, _ := hex.DecodeString(v.Key)
			pt, _ := hex.DecodeString(v.Plaintext)
			_, enc, dec := newKey(t, key)
			// Every block of a full batch holds the plaintext, so each
			// lane must reach the vector independently.
			buf := bytes.Repeat(pt, fm.batch)
			for i := 0; i < v.Iterations; i++ {
				fm.ecb(enc, buf, buf)
			}
			for i := 0; i < fm.batch; i++ {
				if got := hex.EncodeToString(buf[16*i : 16*i+16]); got != v.Ciphertext {
					t.Fatalf("%s: block %d = %s, want %s", v.ID, i, got, v.Ciphertext)
				}
			}
			if v.Iterations == 1 {
				one := append([]byte(nil), buf[:16]...)
				fm.ecb(dec, one, one)
				if !bytes.Equal(one, pt) {
					t.Errorf("%s: decryption with reversed round keys failed", v.ID)
				}
			}
		}
	})
}

// TestEncryptBlocks compares with gmsm on random keys and data for block
// counts around and across batch boundaries, unaligned and in place.
func TestEncryptBlocks(t *testing.T) {
	runForms(t, func(t *testing.T, fm form) {
		r := rand.NewChaCha8([32]byte{1})
		counts := []int{1, 2, 89, 255, 256, 257, 511, 512, 513, 768, 1000, 1023, 1024, 1025, 4096}
		for _, n := range counts {
			for _, inPlace := range []bool{false, true} {
				t.Run(fmt.Sprintf("%d/inplace=%v", n, inPlace), func(t *testing.T) {
					checkECB(t, fm, r, n, inPlace)
				})
			}
		}
	})
}

// TestEveryBlockCount runs ECB and CTR at every block count from 1 to
// 1100 (across the first batch boundaries of both forms), on random keys,
// counters (low words near the inc32 wrap half the time) and alignments,
// alternating in place and out of place.
func TestEveryBlockCount(t *testing.T) {
	runForms(t, func(t *testing.T, fm form) {
		r := rand.NewChaCha8([32]byte{4})
		for n := 1; n <= 1100; n++ {
			inPlace := n%2 == 0
			checkECB(t, fm, r, n, inPlace)
			low := uint32(r.Uint64())
			if n%2 == 1 {
				low = -uint32(r.Uint64() % 1200)
			}
			checkCTR(t, fm, r, 16*n+int(r.Uint64()%16), low, inPlace)
			if t.Failed() {
				t.Fatalf("failed at %d blocks", n)
			}
		}
	})
}

// checkECB encrypts n random blocks at a random alignment with a random
// key and compares with gmsm; out of place it also checks that nothing is
// written past the output.
func checkECB(t *testing.T, fm form, r *rand.ChaCha8, n int, inPlace bool) {
	t.Helper()
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
	fm.ecb(enc, dst, src)
	if !bytes.Equal(dst[:len(want)], want) {
		t.Errorf("%d blocks: ciphertext differs from gmsm (first diff at byte %d)", n, firstDiff(dst, want))
		return
	}
	if !inPlace {
		for i := len(want); i < len(dst); i++ {
			if dst[i] != 0xa5 {
				t.Errorf("%d blocks: wrote past the output at %d", n, i)
				return
			}
		}
	}
}

// checkCTR runs the keystream over n bytes with a random key and counter
// whose low word is low, against the gmsm-based GCTR, and checks the
// counter advance.
func checkCTR(t *testing.T, fm form, r *rand.ChaCha8, n int, low uint32, inPlace bool) {
	t.Helper()
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
	fm.ctr(enc, &c, dst, src)
	if !bytes.Equal(dst, want) {
		t.Errorf("%d bytes, low %#x: output differs from reference GCTR (first diff at byte %d)", n, low, firstDiff(dst, want))
		return
	}
	binary.BigEndian.PutUint32(ctr[12:], low+uint32(n/16))
	if c != ctr {
		t.Errorf("%d bytes: counter after = %x, want %x", n, c, ctr)
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
	runForms(t, func(t *testing.T, fm form) {
		r := rand.NewChaCha8([32]byte{2})
		counts := []int{16, 89*16 + 12, 255 * 16, 4096, 4096 + 16, 1420, 8192, 8192 + 16, 16384, 65536 + 7}
		lows := []uint32{0, 0xffffff80, 0xfffffffe, 0x7fffffff, 0xfffffe01}
		for _, n := range counts {
			for _, low := range lows {
				for _, inPlace := range []bool{false, true} {
					t.Run(fmt.Sprintf("%d/%#x/inplace=%v", n, low, inPlace), func(t *testing.T) {
						checkCTR(t, fm, r, n, low, inPlace)
					})
				}
			}
		}
	})
}

// TestTransposeLayout checks the documented plane layout of the forward
// transpose against a bit-by-bit model: with lanes = batch/128 blocks per
// row, block (batch/8)g + lanes·j + L sits at plane bit 128L + 8j + g.
func TestTransposeLayout(t *testing.T) {
	runForms(t, func(t *testing.T, fm form) {
		r := rand.NewChaCha8([32]byte{3})
		n := fm.batch * BlockSize
		src := randomBytes(r, n)
		dst := make([]byte, n)
		fm.transpose(&dst[0], &src[0])
		pb := fm.batch / 8
		for p := 0; p < 16; p++ {
			for bit := 0; bit < 8; bit++ {
				row := dst[pb*(16*bit+p):][:pb]
				for q := 0; q < fm.batch; q++ {
					i := pb*(q&7) + fm.batch/128*((q>>3)&15) + q>>7
					want := src[16*i+p] >> bit & 1
					if got := row[q/8] >> (q % 8) & 1; got != want {
						t.Fatalf("plane (byte %d, bit %d) position %d = %d, want bit of block %d = %d", p, bit, q, got, i, want)
					}
				}
			}
		}
	})
}

func TestNoAllocs(t *testing.T) {
	runForms(t, func(t *testing.T, fm form) {
		_, enc, _ := newKey(t, make([]byte, 16))
		buf := make([]byte, 1420)
		var ctr [16]byte
		if n := testing.AllocsPerRun(20, func() { fm.ctr(enc, &ctr, buf, buf) }); n != 0 {
			t.Errorf("XORKeyStream allocates %v times per call", n)
		}
		if n := testing.AllocsPerRun(20, func() { fm.ecb(enc, buf[:1408], buf[:1408]) }); n != 0 {
			t.Errorf("EncryptBlocks allocates %v times per call", n)
		}
	})
}

func TestArgumentPanics(t *testing.T) {
	runForms(t, func(t *testing.T, fm form) {
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
		mustPanic("partial block", func() { fm.ecb(enc, make([]byte, 32), make([]byte, 17)) })
		mustPanic("short dst", func() { fm.ecb(enc, make([]byte, 16), make([]byte, 32)) })
		var ctr [16]byte
		mustPanic("short ctr dst", func() { fm.ctr(enc, &ctr, make([]byte, 16), make([]byte, 32)) })
	})
}

func FuzzXORKeyStream(f *testing.F)    { fuzzForm(f, forms[0]) }
func FuzzXORKeyStream512(f *testing.F) { fuzzForm(f, forms[1]) }

// fuzzForm checks XORKeyStream (in place) and EncryptBlocks of fm against
// the references on arbitrary keys, counters and data.
func fuzzForm(f *testing.F, fm form) {
	f.Add(make([]byte, 16), make([]byte, 16), make([]byte, 100))
	f.Add(bytes.Repeat([]byte{0xff}, 16), bytes.Repeat([]byte{0xff}, 16), make([]byte, 4200))
	f.Add(make([]byte, 16), bytes.Repeat([]byte{0xff}, 16), make([]byte, 8300))
	f.Fuzz(func(t *testing.T, key, ctrb, data []byte) {
		if !fm.supported() {
			kerneltest.Unsupported(t, "sm4bs: CPU lacks %s", fm.tier)
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
		fm.ctr(enc, &c, got, got)
		if !bytes.Equal(got, want) {
			t.Fatalf("differs from reference GCTR at byte %d", firstDiff(got, want))
		}
		if len(data) >= 16 {
			ecb := make([]byte, len(data)/16*16)
			fm.ecb(enc, ecb, data[:len(ecb)])
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
