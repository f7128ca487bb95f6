//go:build amd64 && gc && !purego

package sm4

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"

	gmsm4 "github.com/emmansun/gmsm/sm4"

	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// forEachTier runs f for every tier the CPU supports and logs the others
// visibly, naming the missing feature.
func forEachTier(t *testing.T, f func(t *testing.T, tier Tier)) {
	for _, tier := range AllTiers {
		t.Run(tier.String(), func(t *testing.T) {
			if !tier.Supported() {
				kerneltest.Unsupported(t, "CPU lacks %s (kernels/cpu flags say no)", tier)
			}
			f(t, tier)
		})
	}
}

func newKey(t testing.TB, key []byte) (cipher.Block, *[32]uint32, *[32]uint32) {
	b, err := gmsm4.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	enc, dec := expandKey(key)
	return b, &enc, &dec
}

func randomKey(r *rand.ChaCha8) []byte {
	k := make([]byte, 16)
	r.Read(k)
	return k
}

func mustHex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVectorsSingleBlock(t *testing.T) {
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
	forEachTier(t, func(t *testing.T, tier Tier) {
		for _, v := range f.Vectors {
			if v.Iterations > 1000 && testing.Short() {
				continue
			}
			_, enc, dec := newKey(t, mustHex(t, v.Key))
			pt := mustHex(t, v.Plaintext)
			buf := append([]byte(nil), pt...)
			for i := 0; i < v.Iterations; i++ {
				EncryptBlocks(tier, enc, buf, buf)
			}
			if got := hex.EncodeToString(buf); got != v.Ciphertext {
				t.Errorf("%s: got %s want %s", v.ID, got, v.Ciphertext)
			}
			if v.Iterations == 1 {
				EncryptBlocks(tier, dec, buf, buf)
				if !bytes.Equal(buf, pt) {
					t.Errorf("%s: decryption with reversed round keys failed", v.ID)
				}
			}
		}
	})
}

func TestVectorsModes(t *testing.T) {
	var f struct {
		Vectors []struct {
			ID, Mode, Key, IV, Plaintext, Ciphertext string
		}
	}
	data, err := os.ReadFile("../../testdata/vectors/sm4_modes.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	forEachTier(t, func(t *testing.T, tier Tier) {
		checked := 0
		for _, v := range f.Vectors {
			_, enc, _ := newKey(t, mustHex(t, v.Key))
			pt, want := mustHex(t, v.Plaintext), mustHex(t, v.Ciphertext)
			got := make([]byte, len(pt))
			switch v.Mode {
			case "ECB":
				EncryptBlocks(tier, enc, got, pt)
			case "CTR":
				var ctr [16]byte
				copy(ctr[:], mustHex(t, v.IV))
				if binary.BigEndian.Uint32(ctr[12:]) > 0xffffffff-uint32(len(pt)/16) {
					continue // would need a 128-bit increment, not inc32
				}
				XORKeyStream(tier, enc, &ctr, got, pt)
			default:
				continue
			}
			checked++
			if !bytes.Equal(got, want) {
				t.Errorf("%s: got %x want %x", v.ID, got, want)
			}
		}
		if checked == 0 {
			t.Fatal("no ECB/CTR vectors found")
		}
	})
}

// buffers returns src and dst views of n bytes at the given misalignments,
// or one in-place buffer when inPlace.
func buffers(r *rand.ChaCha8, n, srcOff, dstOff int, inPlace bool) (dst, src []byte) {
	sb := make([]byte, n+srcOff+16)
	r.Read(sb)
	src = sb[srcOff : srcOff+n]
	if inPlace {
		return src, src
	}
	db := make([]byte, n+dstOff+16)
	return db[dstOff : dstOff+n], src
}

func TestEncryptBlocksAllLengths(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{1})
		for nb := 0; nb <= 256; nb++ {
			b, enc, dec := newKey(t, randomKey(r))
			n := nb * 16
			inPlace := nb%3 == 0
			dst, src := buffers(r, n, nb%7, nb%5, inPlace)
			orig := append([]byte(nil), src...)
			want := make([]byte, n)
			for i := 0; i < n; i += 16 {
				b.Encrypt(want[i:], orig[i:])
			}
			guard := append([]byte(nil), dst[:cap(dst)][n:]...)
			EncryptBlocks(tier, enc, dst, src)
			if !bytes.Equal(dst, want) {
				t.Fatalf("%d blocks (in place %v): mismatch", nb, inPlace)
			}
			if !bytes.Equal(dst[:cap(dst)][n:], guard) {
				t.Fatalf("%d blocks: wrote past the end of dst", nb)
			}
			if !inPlace && !bytes.Equal(src, orig) {
				t.Fatalf("%d blocks: src modified", nb)
			}
			back := make([]byte, n)
			EncryptBlocks(tier, dec, back, dst)
			if !bytes.Equal(back, orig) {
				t.Fatalf("%d blocks: decryption mismatch", nb)
			}
		}
	})
}

func TestXORKeyStreamAllLengths(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{2})
		for n := 0; n <= 4096; n++ {
			b, enc, _ := newKey(t, randomKey(r))
			var ctr [16]byte
			r.Read(ctr[:])
			if n%4 == 0 {
				// Make the low 32 bits wrap inside the call.
				binary.BigEndian.PutUint32(ctr[12:], 0xffffffff-uint32(n%64))
			}
			inPlace := n%3 == 1
			dst, src := buffers(r, n, n%9, n%11, inPlace)
			orig := append([]byte(nil), src...)
			whole := n &^ 15
			want := make([]byte, whole)
			refXORKeyStream(b, ctr, want, orig)
			guard := append([]byte(nil), dst[whole:cap(dst)]...)
			c := ctr
			XORKeyStream(tier, enc, &c, dst, src)
			if !bytes.Equal(dst[:whole], want) {
				t.Fatalf("len %d (in place %v, ctr %x): mismatch", n, inPlace, ctr)
			}
			if !bytes.Equal(dst[whole:cap(dst)], guard) {
				t.Fatalf("len %d: wrote past the whole blocks", n)
			}
			wantCtr := ctr
			inc32(&wantCtr, n/16)
			if c != wantCtr || !bytes.Equal(c[:12], ctr[:12]) {
				t.Fatalf("len %d: counter %x, want %x", n, c, wantCtr)
			}
		}
	})
}

func TestInc32(t *testing.T) {
	c := [16]byte{15: 0xfe, 14: 0xff, 13: 0xff, 12: 0xff, 11: 0x07}
	inc32(&c, 3)
	want := [16]byte{15: 0x01, 11: 0x07}
	if c != want {
		t.Fatalf("inc32 wrap: %x want %x", c, want)
	}
}

func TestNoAllocs(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		_, enc, _ := newKey(t, make([]byte, 16))
		buf := make([]byte, 1420)
		var ctr [16]byte
		a := testing.AllocsPerRun(20, func() {
			XORKeyStream(tier, enc, &ctr, buf, buf)
			EncryptBlocks(tier, enc, buf[:1408], buf[:1408])
		})
		if a != 0 {
			t.Fatalf("%v allocations per call", a)
		}
	})
}

func TestUnsupportedTierPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("invalid tier did not panic")
		}
	}()
	var rk [32]uint32
	EncryptBlocks(Tier(0), &rk, make([]byte, 16), make([]byte, 16))
}

func FuzzXORKeyStream(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), []byte("fedcba9876543210"), make([]byte, 100))
	f.Add(make([]byte, 16), bytes.Repeat([]byte{0xff}, 16), make([]byte, 1420))
	f.Fuzz(func(t *testing.T, key, ctrIn, data []byte) {
		if len(key) != 16 || len(ctrIn) != 16 {
			return
		}
		b, enc, _ := newKey(t, key)
		var ctr [16]byte
		copy(ctr[:], ctrIn)
		whole := len(data) &^ 15
		want := make([]byte, whole)
		refXORKeyStream(b, ctr, want, data)
		for _, tier := range AllTiers {
			if !tier.Supported() {
				continue
			}
			got := make([]byte, len(data))
			c := ctr
			XORKeyStream(tier, enc, &c, got, data)
			if !bytes.Equal(got[:whole], want) {
				t.Fatalf("%s: mismatch", tier)
			}
			ecb := make([]byte, whole)
			EncryptBlocks(tier, enc, ecb, data[:whole])
			for i := 0; i < whole; i += 16 {
				var w [16]byte
				b.Encrypt(w[:], data[i:])
				if !bytes.Equal(ecb[i:i+16], w[:]) {
					t.Fatalf("%s: ECB block %d mismatch", tier, i/16)
				}
			}
		}
	})
}
