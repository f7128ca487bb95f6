//go:build amd64 && gc && !purego

package sm4

import (
	"bytes"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
)

// TestAllImplsGCMAdjacentAAD covers the single-call GHASH path of the
// kernels (additional data of whole blocks immediately in front of the
// text in one buffer, the tunnel's layout) next to the separate-buffer
// path, for every text length 0..4096 and both Seal and Open, against the
// generic code. The additional data lengths cycle through 0, 16, 32 and
// 13 bytes, so adjacent layouts that must not take the single-call path
// (partial-block additional data) are covered too.
func TestAllImplsGCMAdjacentAAD(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl gcm adjacent aad")
		g, _ := NewGCM(randBytes(rng, KeySize))
		for _, n := range gcmLengths() {
			aadLen := []int{0, 16, 32, 13}[n%4]
			var nonce [NonceSize]byte
			copy(nonce[:], randBytes(rng, NonceSize))
			buf := randBytes(rng, aadLen+n)
			aad, text := buf[:aadLen], buf[aadLen:]
			pt := bytes.Clone(text)
			wantCT := make([]byte, n)
			var wantTag [TagSize]byte
			sealGeneric(g, wantCT, &wantTag, &nonce, pt, bytes.Clone(aad))

			var tag [TagSize]byte
			g.Seal(text, &tag, &nonce, text, aad)
			if !bytes.Equal(text, wantCT) || tag != wantTag {
				t.Fatalf("len %d, adjacent aad %d: Seal differs from generic", n, aadLen)
			}
			if !bytes.Equal(buf[:aadLen], aad) {
				t.Fatalf("len %d: Seal modified the additional data", n)
			}
			if !g.Open(text, &nonce, text, aad, &tag) || !bytes.Equal(text, pt) {
				t.Fatalf("len %d, adjacent aad %d: Open failed or wrong plaintext", n, aadLen)
			}
			if aadLen > 0 {
				// A flipped bit of the adjacent additional data is caught.
				g.Seal(text, &tag, &nonce, text, aad)
				aad[n%aadLen] ^= 0x10
				if g.Open(text, &nonce, text, aad, &tag) {
					t.Fatalf("len %d: Open accepted tampered adjacent additional data", n)
				}
			}
		}
	})
}
