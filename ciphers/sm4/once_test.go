package sm4

import (
	"bytes"
	"crypto/rand"
	"testing"
)

// TestOnceMatchesGCM: SealOnce and OpenOnce compute what NewGCM's AEAD
// does for every length up to a few blocks past 256, with and without
// additional data; a flipped bit anywhere fails OpenOnce and leaves the
// output untouched.
func TestOnceMatchesGCM(t *testing.T) {
	for n := range 300 {
		var key [KeySize]byte
		var nonce [nonceSize]byte
		rand.Read(key[:])
		rand.Read(nonce[:])
		pt := make([]byte, n)
		rand.Read(pt)
		aad := make([]byte, n%37)
		rand.Read(aad)
		a, err := NewGCM(key[:])
		if err != nil {
			t.Fatal(err)
		}
		want := a.Seal(nil, nonce[:], pt, aad)
		got := make([]byte, n+tagSize)
		SealOnce(got, &key, &nonce, pt, aad)
		if !bytes.Equal(got, want) {
			t.Fatalf("len %d: SealOnce = %x, NewGCM.Seal = %x", n, got, want)
		}
		out := make([]byte, n)
		if !OpenOnce(out, &key, &nonce, got, aad) || !bytes.Equal(out, pt) {
			t.Fatalf("len %d: OpenOnce did not return the plaintext", n)
		}
		bit := n * 7 % (8 * (n + tagSize))
		got[bit/8] ^= 1 << (bit % 8)
		for i := range out {
			out[i] = 0xa5
		}
		if OpenOnce(out, &key, &nonce, got, aad) {
			t.Fatalf("len %d: OpenOnce accepted a flipped bit %d", n, bit)
		}
		if bytes.Count(out, []byte{0xa5}) != n {
			t.Fatalf("len %d: OpenOnce wrote output for a forged message", n)
		}
	}
}

// TestOnceDoesNotAllocate: the handshake calls these for every cookie
// reply it sends under a flood.
func TestOnceDoesNotAllocate(t *testing.T) {
	var key [KeySize]byte
	var nonce [nonceSize]byte
	pt, aad := make([]byte, 16), make([]byte, 16)
	ct := make([]byte, 32)
	out := make([]byte, 16)
	if a := testing.AllocsPerRun(100, func() {
		SealOnce(ct, &key, &nonce, pt, aad)
		OpenOnce(out, &key, &nonce, ct, aad)
	}); a != 0 {
		t.Errorf("SealOnce+OpenOnce allocate %v times", a)
	}
}

// TestOnceRejectsBadBuffers: a wrongly sized or overlapping output is a
// programming error and panics rather than writing out of place.
func TestOnceRejectsBadBuffers(t *testing.T) {
	var key [KeySize]byte
	var nonce [nonceSize]byte
	buf := make([]byte, 64)
	for name, f := range map[string]func(){
		"seal short dst":   func() { SealOnce(buf[:20], &key, &nonce, buf[32:48], nil) },
		"seal overlapping": func() { SealOnce(buf[:32], &key, &nonce, buf[8:24], nil) },
		"open short input": func() { OpenOnce(buf[:0], &key, &nonce, buf[32:40], nil) },
		"open overlapping": func() { OpenOnce(buf[:16], &key, &nonce, buf[:32], nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
