package sm4

import (
	"bytes"
	"crypto/cipher"
	"math/rand/v2"
	"testing"

	gmsm4 "github.com/emmansun/gmsm/sm4"
)

// Differential tests against github.com/emmansun/gmsm v0.40.0 (its SM4
// through crypto/cipher's CTR and GCM), an independent implementation.

// newRand returns a deterministic generator for the named test.
func newRand(name string) *rand.Rand {
	var seed [32]byte
	copy(seed[:], "gmtun sm4 diff: "+name)
	return rand.New(rand.NewChaCha8(seed))
}

// randomBytes returns n bytes from rng.
func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// gmsmGCM returns gmsm's SM4 in crypto/cipher GCM.
func gmsmGCM(t testing.TB, key []byte) cipher.AEAD {
	b, err := gmsm4.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// diffStep is the length stride of the 0..4096 sweeps (1, or 7 under -short).
func diffStep() int {
	if testing.Short() {
		return 7
	}
	return 1
}

func TestDiffBlock(t *testing.T) {
	rng := newRand("block")
	for range 2000 {
		key, src := randomBytes(rng, KeySize), randomBytes(rng, BlockSize)
		ours, _ := NewCipher(key)
		ref, _ := gmsm4.NewCipher(key)
		got, want := make([]byte, BlockSize), make([]byte, BlockSize)
		ours.Encrypt(got, src)
		ref.Encrypt(want, src)
		if !bytes.Equal(got, want) {
			t.Fatalf("Encrypt key %x block %x: %x, gmsm %x", key, src, got, want)
		}
		ours.Decrypt(got, src)
		ref.Decrypt(want, src)
		if !bytes.Equal(got, want) {
			t.Fatalf("Decrypt key %x block %x: %x, gmsm %x", key, src, got, want)
		}
	}
}

func TestDiffCTR(t *testing.T) {
	rng := newRand("ctr")
	for n := 0; n <= 4096; n += diffStep() {
		key, iv, src := randomBytes(rng, KeySize), randomBytes(rng, BlockSize), randomBytes(rng, n)
		if n%5 == 0 { // exercise carries out of the low 64 bits
			copy(iv[8:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0 + byte(n%16)})
		}
		ref, _ := gmsm4.NewCipher(key)
		want := make([]byte, n)
		cipher.NewCTR(ref, iv).XORKeyStream(want, src)
		s, err := NewCTR(key, iv)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n)
		s.XORKeyStream(got, src)
		if !bytes.Equal(got, want) {
			t.Fatalf("len %d: CTR differs from gmsm", n)
		}
	}
}

func TestDiffGCM(t *testing.T) {
	rng := newRand("gcm")
	adLens := []int{0, 1, 12, 16, 17, 20, 64, 100}
	for n := 0; n <= 4096; n += diffStep() {
		key, nonce, pt := randomBytes(rng, KeySize), randomBytes(rng, nonceSize), randomBytes(rng, n)
		ad := randomBytes(rng, adLens[n%len(adLens)])
		ours, _ := NewGCM(key)
		ref := gmsmGCM(t, key)
		got := ours.Seal(nil, nonce, pt, ad)
		want := ref.Seal(nil, nonce, pt, ad)
		if !bytes.Equal(got, want) {
			t.Fatalf("len %d ad %d: Seal differs from gmsm\n got %x\nwant %x", n, len(ad), got, want)
		}
		if out, err := ours.Open(nil, nonce, want, ad); err != nil || !bytes.Equal(out, pt) {
			t.Fatalf("len %d ad %d: Open of gmsm's ciphertext: %v", n, len(ad), err)
		}
		if n > 0 {
			want[rng.IntN(len(want))] ^= 1
			_, errOurs := ours.Open(nil, nonce, want, ad)
			_, errRef := ref.Open(nil, nonce, want, ad)
			if errOurs == nil || errRef == nil {
				t.Fatalf("len %d: tampered ciphertext accepted (ours %v, gmsm %v)", n, errOurs, errRef)
			}
		}
	}
}

// fuzzParams cuts key and nonce/IV out of the fuzzer's bytes, zero-padded,
// so that every input is usable.
func fuzzParams(b []byte, n int) (key, rest []byte) {
	kn := make([]byte, KeySize+n)
	copy(kn, b)
	return kn[:KeySize], kn[KeySize:]
}

// FuzzGCM compares Seal and Open with gmsm for arbitrary inputs.
func FuzzGCM(f *testing.F) {
	f.Add([]byte{}, []byte{}, []byte{})
	f.Add([]byte("0123456789abcdef0123456789ab"), []byte("header"), bytes.Repeat([]byte{7}, 1420))
	f.Add(bytes.Repeat([]byte{0xff}, 28), bytes.Repeat([]byte{1}, 33), bytes.Repeat([]byte{0xff}, 17))
	f.Fuzz(func(t *testing.T, keyNonce, ad, pt []byte) {
		key, nonce := fuzzParams(keyNonce, nonceSize)
		ours, err := NewGCM(key)
		if err != nil {
			t.Fatal(err)
		}
		ref := gmsmGCM(t, key)
		got := ours.Seal(nil, nonce, pt, ad)
		want := ref.Seal(nil, nonce, pt, ad)
		if !bytes.Equal(got, want) {
			t.Fatalf("Seal differs from gmsm\n got %x\nwant %x", got, want)
		}
		// pt as a ciphertext: both must agree on rejection or acceptance.
		o1, e1 := ours.Open(nil, nonce, pt, ad)
		o2, e2 := ref.Open(nil, nonce, pt, ad)
		if (e1 == nil) != (e2 == nil) || !bytes.Equal(o1, o2) {
			t.Fatalf("Open(arbitrary) disagrees: ours %v, gmsm %v", e1, e2)
		}
		if out, err := ours.Open(nil, nonce, want, ad); err != nil || !bytes.Equal(out, pt) {
			t.Fatalf("Open of gmsm's ciphertext: %v", err)
		}
	})
}

// FuzzCTR compares NewCTR with crypto/cipher.NewCTR over gmsm's block,
// consuming the keystream in two pieces split at an arbitrary point.
func FuzzCTR(f *testing.F) {
	f.Add([]byte{}, []byte{}, uint16(0))
	f.Add(append([]byte("0123456789abcdef"), bytes.Repeat([]byte{0xff}, 16)...), bytes.Repeat([]byte{3}, 100), uint16(17))
	f.Add([]byte("0123456789abcdeffedcba9876543210"), bytes.Repeat([]byte{9}, 1420), uint16(1000))
	f.Fuzz(func(t *testing.T, keyIV, src []byte, split uint16) {
		key, iv := fuzzParams(keyIV, BlockSize)
		ref, _ := gmsm4.NewCipher(key)
		want := make([]byte, len(src))
		cipher.NewCTR(ref, iv).XORKeyStream(want, src)
		s, err := NewCTR(key, iv)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(src))
		k := min(int(split), len(src))
		s.XORKeyStream(got[:k], src[:k])
		s.XORKeyStream(got[k:], src[k:])
		if !bytes.Equal(got, want) {
			t.Fatalf("CTR differs from gmsm (len %d, split %d)", len(src), k)
		}
	})
}
