package cryptotest

import (
	"bytes"
	"crypto/cipher"
	"testing"
)

// TestStream checks the cipher.Stream contract of the streams mk returns;
// every call to mk must return a fresh stream at the same starting
// position (same key and IV). It checks that:
//   - XORKeyStream in arbitrary pieces (including empty ones) equals one
//     call over the whole input, and shorter keystreams are prefixes of
//     longer ones;
//   - in-place use (dst and src the same) gives the same result;
//   - src is never modified and bytes of dst past len(src) are untouched;
//   - XORing twice with fresh streams restores the input;
//   - a dst shorter than src, or one overlapping src inexactly, panics.
func TestStream(t *testing.T, mk func() cipher.Stream) {
	const total = 4096 + 37
	t.Run("Pieces", func(t *testing.T) {
		rng := newRand("stream pieces")
		src := randomBytes(rng, total)
		want := make([]byte, total)
		mk().XORKeyStream(want, src)
		if bytes.Equal(want, src) {
			t.Fatal("XORKeyStream left the input unchanged (zero keystream)")
		}
		for trial := range 32 {
			s := mk()
			got := make([]byte, total)
			for off := 0; off < total; {
				n := min(total-off, rng.IntN(3*16+1))
				if trial%4 == 0 {
					n = min(total-off, rng.IntN(600))
				}
				s.XORKeyStream(got[off:off+n], src[off:off+n])
				off += n
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("trial %d: keystream in pieces differs from one shot", trial)
			}
		}
	})
	t.Run("Prefix", func(t *testing.T) {
		rng := newRand("stream prefix")
		src := randomBytes(rng, 600)
		want := make([]byte, len(src))
		mk().XORKeyStream(want, src)
		for n := 0; n <= len(src); n++ {
			got := make([]byte, n)
			mk().XORKeyStream(got, src[:n])
			if !bytes.Equal(got, want[:n]) {
				t.Fatalf("length %d: not a prefix of the length-%d result", n, len(src))
			}
		}
	})
	t.Run("InPlace", func(t *testing.T) {
		rng := newRand("stream in place")
		for _, n := range []int{0, 1, 15, 16, 17, 63, 64, 65, 1420, 4096} {
			src := randomBytes(rng, n)
			want := make([]byte, n)
			mustNotModify(t, "XORKeyStream", func() { mk().XORKeyStream(want, src) }, src)
			buf := bytes.Clone(src)
			mk().XORKeyStream(buf, buf)
			if !bytes.Equal(buf, want) {
				t.Fatalf("length %d: in-place result differs", n)
			}
			back := bytes.Clone(want)
			mk().XORKeyStream(back, back)
			if !bytes.Equal(back, src) {
				t.Fatalf("length %d: XORing twice did not restore the input", n)
			}
		}
	})
	t.Run("LongerDst", func(t *testing.T) {
		rng := newRand("stream longer dst")
		src := randomBytes(rng, 100)
		dst := bytes.Repeat([]byte{0xa5}, 150)
		mk().XORKeyStream(dst, src)
		if !bytes.Equal(dst[100:], bytes.Repeat([]byte{0xa5}, 50)) {
			t.Error("XORKeyStream wrote past len(src)")
		}
	})
	t.Run("Panics", func(t *testing.T) {
		src := make([]byte, 64)
		mustPanic(t, "dst shorter than src", func() { mk().XORKeyStream(make([]byte, 63), src) })
		mustPanic(t, "dst shorter than src (1 byte)", func() { mk().XORKeyStream(nil, src[:1]) })
		buf := make([]byte, 128)
		mustPanic(t, "dst = src[1:]", func() { mk().XORKeyStream(buf[1:65], buf[:64]) })
		mustPanic(t, "dst = src[-16:]", func() { mk().XORKeyStream(buf[:64], buf[16:80]) })
	})
}
