package cryptotest

import (
	"bytes"
	"crypto/cipher"
	"fmt"
	"testing"
)

// aeadLengths is the plaintext length grid of TestAEAD.
var aeadLengths = []int{0, 1, 15, 16, 17, 31, 32, 33, 255, 256, 1420, 8192}

// aeadADLengths is the additional-data length grid of TestAEAD.
var aeadADLengths = []int{0, 1, 13, 16, 20, 64}

// TestAEAD checks the cipher.AEAD contract of the AEADs mk returns (each
// call a fresh AEAD with the same key). It checks that:
//   - Seal/Open roundtrip over a grid of plaintext and additional-data
//     lengths, with len(Seal) = len(plaintext) + Overhead;
//   - inputs (nonce, plaintext, additional data, ciphertext) are never
//     modified;
//   - results are appended to dst with its prefix preserved, whether or
//     not dst has spare capacity;
//   - exact overlap (in-place Seal and Open) works and inexact overlap of
//     dst with the input panics;
//   - a wrong nonce, additional data, ciphertext bit, tag bit, or
//     truncated ciphertext is rejected, and the output bytes are zeroed;
//   - a nonce of the wrong size panics in Seal and Open.
func TestAEAD(t *testing.T, mk func() cipher.AEAD) {
	a := mk()
	ns, ov := a.NonceSize(), a.Overhead()
	if ns <= 0 || ov <= 0 {
		t.Fatalf("NonceSize %d, Overhead %d", ns, ov)
	}
	t.Run("Roundtrip", func(t *testing.T) {
		rng := newRand("aead roundtrip")
		for _, n := range aeadLengths {
			for _, adLen := range aeadADLengths {
				nonce, pt, ad := randomBytes(rng, ns), randomBytes(rng, n), randomBytes(rng, adLen)
				var ct []byte
				mustNotModify(t, "Seal", func() { ct = a.Seal(nil, nonce, pt, ad) }, nonce, pt, ad)
				if len(ct) != n+ov {
					t.Fatalf("len %d ad %d: Seal returned %d bytes, want %d", n, adLen, len(ct), n+ov)
				}
				if n >= 16 && bytes.Equal(ct[:n], pt) {
					t.Fatalf("len %d: ciphertext equals plaintext", n)
				}
				if again := mk().Seal(nil, nonce, pt, ad); !bytes.Equal(again, ct) {
					t.Fatalf("len %d ad %d: Seal not deterministic", n, adLen)
				}
				var got []byte
				var err error
				mustNotModify(t, "Open", func() { got, err = a.Open(nil, nonce, ct, ad) }, nonce, ct, ad)
				if err != nil || !bytes.Equal(got, pt) {
					t.Fatalf("len %d ad %d: Open(Seal(p)) = %x, %v", n, adLen, got, err)
				}
			}
		}
	})
	t.Run("Append", func(t *testing.T) {
		rng := newRand("aead append")
		for _, n := range []int{0, 1, 17, 1420} {
			nonce, pt, ad := randomBytes(rng, ns), randomBytes(rng, n), randomBytes(rng, 20)
			want := a.Seal(nil, nonce, pt, ad)
			prefix := randomBytes(rng, 7)
			for _, spare := range []int{0, n + ov - 1, n + ov, n + ov + 100} {
				dst := make([]byte, len(prefix), len(prefix)+spare)
				copy(dst, prefix)
				out := a.Seal(dst, nonce, pt, ad)
				if !bytes.Equal(out[:len(prefix)], prefix) || !bytes.Equal(out[len(prefix):], want) {
					t.Fatalf("len %d spare %d: Seal(dst) ≠ dst ‖ Seal(nil)", n, spare)
				}
				dst = make([]byte, len(prefix), len(prefix)+spare)
				copy(dst, prefix)
				out, err := a.Open(dst, nonce, want, ad)
				if err != nil || !bytes.Equal(out[:len(prefix)], prefix) || !bytes.Equal(out[len(prefix):], pt) {
					t.Fatalf("len %d spare %d: Open(dst) ≠ dst ‖ plaintext (%v)", n, spare, err)
				}
			}
		}
	})
	t.Run("InPlace", func(t *testing.T) {
		rng := newRand("aead in place")
		for _, n := range aeadLengths {
			nonce, pt, ad := randomBytes(rng, ns), randomBytes(rng, n), randomBytes(rng, 16)
			want := a.Seal(nil, nonce, pt, ad)
			buf := make([]byte, n, n+ov)
			copy(buf, pt)
			ct := a.Seal(buf[:0], nonce, buf, ad)
			if !bytes.Equal(ct, want) {
				t.Fatalf("len %d: in-place Seal differs", n)
			}
			if &ct[0] != &buf[:1][0] {
				t.Fatalf("len %d: in-place Seal did not reuse the buffer", n)
			}
			out, err := a.Open(ct[:0], nonce, ct, ad)
			if err != nil || !bytes.Equal(out, pt) {
				t.Fatalf("len %d: in-place Open failed: %v", n, err)
			}
		}
	})
	t.Run("InexactOverlap", func(t *testing.T) {
		rng := newRand("aead overlap")
		nonce, ad := randomBytes(rng, ns), randomBytes(rng, 16)
		for _, n := range []int{16, 100} {
			buf := make([]byte, n+ov+32)
			mustPanic(t, fmt.Sprintf("Seal(buf[1:1], buf[:%d])", n), func() { a.Seal(buf[1:1], nonce, buf[:n], ad) })
			mustPanic(t, fmt.Sprintf("Seal(buf[:0], buf[1:%d])", n+1), func() { a.Seal(buf[:0], nonce, buf[1:n+1], ad) })
			ct := a.Seal(nil, nonce, randomBytes(rng, n), ad)
			buf = append(ct, make([]byte, 32)...)
			mustPanic(t, "Open(ct[1:1], ct)", func() { _, _ = a.Open(buf[1:1], nonce, buf[:len(ct)], ad) })
			// Also the output must not overlap the additional data.
			adBuf := make([]byte, n+ov+16)
			mustPanic(t, "Seal with dst over additional data", func() { a.Seal(adBuf[:0], nonce, make([]byte, n), adBuf[:16]) })
		}
	})
	t.Run("Reject", func(t *testing.T) {
		rng := newRand("aead reject")
		for _, n := range []int{0, 1, 16, 33, 1420} {
			nonce, pt, ad := randomBytes(rng, ns), randomBytes(rng, n), randomBytes(rng, 13)
			ct := a.Seal(nil, nonce, pt, ad)
			type attempt struct {
				nonce, ct, ad []byte
			}
			flip := func(b []byte, i int) []byte { c := bytes.Clone(b); c[i] ^= 1 << (i % 8); return c }
			attempts := map[string]attempt{
				"wrong nonce":     {flip(nonce, rng.IntN(ns)), ct, ad},
				"wrong ad":        {nonce, ct, flip(ad, rng.IntN(len(ad)))},
				"extra ad":        {nonce, ct, append(bytes.Clone(ad), 0)},
				"missing ad":      {nonce, ct, nil},
				"tag bit":         {nonce, flip(ct, n+rng.IntN(ov)), ad},
				"truncated":       {nonce, ct[:len(ct)-1], ad},
				"too short":       {nonce, ct[:ov-1], ad},
				"appended byte":   {nonce, append(bytes.Clone(ct), 0), ad},
				"ciphertext only": {nonce, ct[:n], ad},
			}
			if n > 0 {
				attempts["ciphertext bit"] = attempt{nonce, flip(ct, rng.IntN(n)), ad}
			}
			for name, at := range attempts {
				// dst has room, pre-filled with a pattern that must not survive
				// in the output region.
				dst := bytes.Repeat([]byte{0xee}, 4+len(at.ct)+16)[:4]
				out, err := a.Open(dst, at.nonce, at.ct, at.ad)
				if err == nil {
					t.Fatalf("len %d: %s accepted", n, name)
				}
				if out != nil {
					t.Errorf("len %d: %s returned non-nil output", n, name)
				}
				if !bytes.Equal(dst[:4], []byte{0xee, 0xee, 0xee, 0xee}) {
					t.Errorf("len %d: %s changed the dst prefix", n, name)
				}
				if outLen := len(at.ct) - ov; outLen > 0 {
					region := dst[4 : 4+outLen]
					if !bytes.Equal(region, make([]byte, outLen)) {
						t.Errorf("len %d: %s: output region not zeroed: %x", n, name, region)
					}
				}
			}
		}
	})
	t.Run("NonceSize", func(t *testing.T) {
		ct := a.Seal(nil, make([]byte, ns), []byte("x"), nil)
		for _, bad := range []int{0, ns - 1, ns + 1, 2 * ns} {
			mustPanic(t, fmt.Sprintf("Seal with %d-byte nonce", bad), func() { a.Seal(nil, make([]byte, bad), []byte("x"), nil) })
			mustPanic(t, fmt.Sprintf("Open with %d-byte nonce", bad), func() { _, _ = a.Open(nil, make([]byte, bad), ct, nil) })
		}
	})
}
