//go:build amd64 && gc && !purego

package sm4

import (
	"bytes"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	"github.com/gmtun/gmtun/ciphers/internal/testinput"
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
		g, _ := NewGCM(testinput.Bytes(rng, KeySize))
		for _, n := range testinput.Lengths() {
			aadLen := []int{0, 16, 32, 13}[n%4]
			var nonce [NonceSize]byte
			copy(nonce[:], testinput.Bytes(rng, NonceSize))
			buf := testinput.Bytes(rng, aadLen+n)
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

// TestAllImplsBatchShapes covers the batch shapes that stress the kernel
// glue: many short packets (more pieces than a gather holds), packets
// whose direct parts pair up or leave one pass over (AVX-512 runs direct
// passes two at a time), and long packets with several direct passes,
// each against the generic code, sealed and opened.
func TestAllImplsBatchShapes(t *testing.T) {
	shapes := []func(i int) int{
		func(i int) int { return i % 41 },              // tag-only and tiny packets
		func(i int) int { return 1420 },                // one direct pass each
		func(i int) int { return 1024 + 16*(i%3) },     // direct pass and 0-2 rest blocks
		func(i int) int { return 2048*(1+i%3) + i%17 }, // several direct passes
		func(i int) int { return []int{0, 1420, 15, 4096, 17, 1024}[i%6] },
	}
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl batch shapes")
		for si, shape := range shapes {
			for _, n := range []int{2, 3, 7, 64, 65, 128, 130} {
				g, _ := NewGCM(testinput.Bytes(rng, KeySize))
				ps := make([]Packet, n)
				bufs := make([][]byte, n)
				want := make([][]byte, n)
				for i := range ps {
					l := shape(i)
					buf := testinput.Bytes(rng, 16+l+TagSize)
					bufs[i] = buf
					copy(ps[i].Nonce[:], testinput.Bytes(rng, NonceSize))
					ps[i].AAD, ps[i].Text, ps[i].Tag = buf[:16], buf[16:16+l], (*[TagSize]byte)(buf[16+l:])
					ct := make([]byte, l)
					var tag [TagSize]byte
					sealGeneric(g, ct, &tag, &ps[i].Nonce, ps[i].Text, ps[i].AAD)
					want[i] = append(append(bytes.Clone(ps[i].AAD), ct...), tag[:]...)
				}
				plain := make([][]byte, n)
				for i := range bufs {
					plain[i] = bytes.Clone(bufs[i][:16+len(ps[i].Text)])
				}
				g.SealBatch(ps)
				for i := range ps {
					if !bytes.Equal(bufs[i], want[i]) {
						t.Fatalf("shape %d, batch of %d: packet %d (len %d) differs from generic", si, n, i, len(ps[i].Text))
					}
				}
				ok := make([]bool, n)
				g.OpenBatch(ps, ok)
				for i := range ps {
					if !ok[i] || !bytes.Equal(bufs[i][:16+len(ps[i].Text)], plain[i]) {
						t.Fatalf("shape %d, batch of %d: packet %d did not open to its plaintext", si, n, i)
					}
				}
			}
		}
	})
}
