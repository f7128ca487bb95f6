package ghash

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
)

func newRand(seed string) *rand.Rand {
	var s [32]byte
	copy(s[:], seed)
	return rand.New(rand.NewChaCha8(s))
}

// clmulRef is a bit-by-bit carry-less 64×64 multiplication.
func clmulRef(x, y uint64) (hi, lo uint64) {
	for i := range 64 {
		if y>>i&1 != 0 {
			lo ^= x << i
			if i > 0 {
				hi ^= x >> (64 - i)
			}
		}
	}
	return hi, lo
}

// operand precomputes y for clmul64.
func operand(y uint64) *clmulOperand {
	var o clmulOperand
	o.init(y)
	return &o
}

// TestCLMul64 checks the hole-masked product against the bitwise one,
// including the all-ones operands that maximise every column sum and
// values with the top four (separately handled) bits set.
func TestCLMul64(t *testing.T) {
	cases := [][2]uint64{{0, 0}, {1, 1}, {^uint64(0), ^uint64(0)}, {^uint64(0), 1}, {1, ^uint64(0)},
		{1 << 63, 1 << 63}, {holeMask, ^uint64(0)}, {^uint64(0), holeMask << 3}, {0xf << 60, ^uint64(0)}, {1<<60 - 1, ^uint64(0)}}
	rng := newRand("clmul")
	for range 20000 {
		cases = append(cases, [2]uint64{rng.Uint64(), rng.Uint64()})
	}
	for _, c := range cases {
		h, l := clmul64(c[0], operand(c[1]))
		wh, wl := clmulRef(c[0], c[1])
		if h != wh || l != wl {
			t.Fatalf("clmul64(%#x, %#x) = %#x:%#x, want %#x:%#x", c[0], c[1], h, l, wh, wl)
		}
	}
}

// gfMulRef is Algorithm 1 of NIST SP 800-38D §6.3, bit by bit
// (variable-time, test only), on 16-byte blocks.
func gfMulRef(x, y [16]byte) [16]byte {
	var z [16]byte
	v := y
	for i := range 128 {
		if x[i/8]>>(7-i%8)&1 != 0 {
			for j := range z {
				z[j] ^= v[j]
			}
		}
		lsb := v[15] & 1
		for j := 15; j > 0; j-- {
			v[j] = v[j]>>1 | v[j-1]<<7
		}
		v[0] >>= 1
		if lsb != 0 {
			v[0] ^= 0xe1
		}
	}
	return z
}

// gcmHashRef is GHASH of A ‖ C with padding and the length block, from
// gfMulRef.
func gcmHashRef(h [16]byte, aad, ct []byte) [16]byte {
	var y [16]byte
	absorb := func(d []byte) {
		for len(d) > 0 {
			var blk [16]byte
			n := copy(blk[:], d)
			subtle.XORBytes(y[:], y[:], blk[:])
			y = gfMulRef(y, h)
			d = d[n:]
		}
	}
	absorb(aad)
	absorb(ct)
	var l [16]byte
	binary.BigEndian.PutUint64(l[:8], uint64(len(aad))*8)
	binary.BigEndian.PutUint64(l[8:], uint64(len(ct))*8)
	absorb(l[:])
	return y
}

func TestMulGeneric(t *testing.T) {
	rng := newRand("gfmul")
	var ones [16]byte
	for i := range ones {
		ones[i] = 0xff
	}
	one := [16]byte{0x80} // the field's 1 in reflected order
	cases := [][2][16]byte{{ones, ones}, {one, ones}, {ones, one}, {{}, ones}}
	for range 5000 {
		var x, y [16]byte
		binary.BigEndian.PutUint64(x[:8], rng.Uint64())
		binary.BigEndian.PutUint64(x[8:], rng.Uint64())
		binary.BigEndian.PutUint64(y[:8], rng.Uint64())
		binary.BigEndian.PutUint64(y[8:], rng.Uint64())
		cases = append(cases, [2][16]byte{x, y})
	}
	for _, c := range cases {
		var key GenericKey
		key.Init(&c[1])
		hi, lo := MulGeneric(&key, binary.BigEndian.Uint64(c[0][:8]), binary.BigEndian.Uint64(c[0][8:]))
		var got [16]byte
		putWords(&got, hi, lo)
		if want := gfMulRef(c[0], c[1]); got != want {
			t.Fatalf("%x · %x = %x, want %x", c[0], c[1], got, want)
		}
	}
}

// TestGCMHashAllImpls compares GCMHash on every tier with the bitwise
// reference for A and C of every length up to 80 bytes and some longer
// ones, separate and adjacent in one buffer (the tunnel's layout).
func TestGCMHashAllImpls(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("gcmhash")
		var h [16]byte
		for i := range h {
			h[i] = byte(rng.Uint32())
		}
		var k Key
		k.Init(&h)
		lens := []int{}
		for n := 0; n <= 80; n++ {
			lens = append(lens, n)
		}
		lens = append(lens, 255, 256, 511, 512, 513, 1420, 4096)
		for _, na := range []int{0, 1, 15, 16, 20, 32, 48} {
			for _, nc := range lens {
				buf := make([]byte, na+nc+1)
				for i := range buf {
					buf[i] = byte(rng.Uint32())
				}
				aad, ct := buf[:na], buf[na:na+nc]
				want := gcmHashRef(h, aad, ct)
				var got [16]byte
				k.GCMHash(&got, aad, ct)
				if got != want {
					t.Fatalf("adjacent |A| = %d, |C| = %d: %x, want %x", na, nc, got, want)
				}
				aad2 := bytes.Clone(aad) // not adjacent
				k.GCMHash(&got, aad2, ct)
				if got != want {
					t.Fatalf("separate |A| = %d, |C| = %d: %x, want %x", na, nc, got, want)
				}
			}
		}
	})
}

// TestGCMHashAgainstAESGCM builds AES-GCM tags from GCMHash and Go's AES
// and compares them with crypto/cipher's AES-GCM: an independent oracle of
// the whole GCM hash layout.
func TestGCMHashAgainstAESGCM(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("aes-gcm")
		key := make([]byte, 16)
		for i := range key {
			key[i] = byte(rng.Uint32())
		}
		blk, _ := aes.NewCipher(key)
		aead, _ := cipher.NewGCM(blk)
		var h [16]byte
		blk.Encrypt(h[:], h[:])
		var k Key
		k.Init(&h)
		for n := range 300 {
			nonce := make([]byte, 12)
			pt := make([]byte, n)
			aad := make([]byte, n%37)
			for _, b := range [][]byte{nonce, pt, aad} {
				for i := range b {
					b[i] = byte(rng.Uint32())
				}
			}
			sealed := aead.Seal(nil, nonce, pt, aad)
			ct, tag := sealed[:n], sealed[n:]
			var j0 [16]byte
			copy(j0[:], nonce)
			j0[15] = 1
			blk.Encrypt(j0[:], j0[:])
			var y [16]byte
			k.GCMHash(&y, aad, ct)
			subtle.XORBytes(y[:], y[:], j0[:])
			if !bytes.Equal(y[:], tag) {
				t.Fatalf("len %d: tag %x, AES-GCM %x", n, y, tag)
			}
		}
	})
}

func BenchmarkGCMHash1420(b *testing.B) {
	var k Key
	k.Init(&[16]byte{1, 2, 3})
	buf := make([]byte, 16+1420)
	var y [16]byte
	b.SetBytes(1420)
	for b.Loop() {
		k.GCMHash(&y, buf[:16], buf[16:])
	}
}
