//go:build amd64 && gc && !purego

package zuc

import (
	"math/bits"
	"testing"

	"github.com/gmtun/gmtun/internal/reftables"
)

// The S-boxes S0 and S1 of GB/T 33133.1-2016 (Tables 1 and 2), the oracle,
// from internal/reftables.
var (
	sbox0Table = reftables.ZUCS0
	sbox1Table = reftables.ZUCS1
)

// TestConstantsMatchStandard pins the key-loading constants of
// lanes_amd64.go (production code, which may not import
// internal/reftables) to the standards' tables.
func TestConstantsMatchStandard(t *testing.T) {
	if zuc128D != reftables.ZUC128D {
		t.Errorf("zuc128D = %#04x, want %#04x (GB/T 33133.1-2016)", zuc128D, reftables.ZUC128D)
	}
	if zuc256D != reftables.ZUC256D {
		t.Errorf("zuc256D = %#02x, want %#02x (ZUC-256, 2018)", zuc256D, reftables.ZUC256D)
	}
}

// Model of the GFNI instructions (Intel SDM, GF2P8AFFINEQB /
// GF2P8AFFINEINVQB): output bit i = parity(A.byte[7−i] & x) ⊕ b_i, where
// the INV form first inverts x in GF(2^8)/(x^8+x^4+x^3+x+1), inv(0) = 0.
func gfniAffine(a uint64, x, b byte) byte {
	var y byte
	for i := 0; i < 8; i++ {
		row := byte(a >> (8 * (7 - i)))
		y |= byte(bits.OnesCount8(row&x)&1) << i
	}
	return y ^ b
}

func aesMul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1b
		}
		b >>= 1
	}
	return p
}

func aesInv(x byte) byte {
	if x == 0 {
		return 0
	}
	for y := 1; y < 256; y++ {
		if aesMul(x, byte(y)) == 1 {
			return byte(y)
		}
	}
	panic("no inverse")
}

// gfniQword encodes a matrix given by columns (LSB first), independently of
// the generator's encoder.
func gfniQword(cols [8]byte) uint64 {
	var q uint64
	for i := 0; i < 8; i++ { // row i = bit i of every column
		for j := 0; j < 8; j++ {
			q |= uint64(cols[j]>>i&1) << (8*(7-i) + j)
		}
	}
	return q
}

// TestS1GFNIModel checks S1(x) = L·inv_AES(M·x) ⊕ 0x55 for all x with the
// column matrices the generator uses, through a model of the instructions.
func TestS1GFNIModel(t *testing.T) {
	m := gfniQword([8]byte{0x01, 0x32, 0x73, 0x75, 0xd9, 0xe8, 0xcd, 0x2d})
	l := gfniQword([8]byte{0x97, 0x9a, 0x3c, 0x11, 0x69, 0xcd, 0xc4, 0xc5})
	for x := 0; x < 256; x++ {
		y := gfniAffine(l, aesInv(gfniAffine(m, byte(x), 0)), 0x55)
		if y != sbox1Table[x] {
			t.Fatalf("S1 model(%#02x) = %#02x, want %#02x", x, y, sbox1Table[x])
		}
	}
}

// TestS0NibbleModel checks the three 4-bit layers the kernels use.
func TestS0NibbleModel(t *testing.T) {
	p1 := [16]byte{0x9, 0xf, 0x0, 0xe, 0xf, 0xf, 0x2, 0xa, 0x0, 0x4, 0x0, 0xc, 0x7, 0x5, 0x3, 0x9}
	p2 := [16]byte{0x8, 0xd, 0x6, 0x5, 0x7, 0x0, 0xc, 0x4, 0xb, 0x1, 0xe, 0xa, 0xf, 0x3, 0x9, 0x2}
	p3 := [16]byte{0x2, 0x6, 0xa, 0x6, 0x0, 0xd, 0xa, 0xf, 0x3, 0x3, 0xd, 0x5, 0x0, 0x9, 0xc, 0xd}
	for x := 0; x < 256; x++ {
		q := byte(x>>4) ^ p1[x&15]
		r := byte(x&15) ^ p2[q]
		s := q ^ p3[r]
		if y := bits.RotateLeft8(s<<4|r, 5); y != sbox0Table[x] {
			t.Fatalf("S0 model(%#02x) = %#02x, want %#02x", x, y, sbox0Table[x])
		}
	}
}

// TestKernelSboxes runs the kernels' own S-box code on all 256 inputs.
func TestKernelSboxes(t *testing.T) {
	check := func(t *testing.T, in, s0, s1 []byte) {
		for i, x := range in {
			if s0[i] != sbox0Table[x] || s1[i] != sbox1Table[x] {
				t.Fatalf("x=%#02x: S0 %#02x S1 %#02x, want %#02x %#02x", x, s0[i], s1[i], sbox0Table[x], sbox1Table[x])
			}
		}
	}
	forEachKernels16(t, func(t *testing.T, k Kernels16) {
		for base := 0; base < 256; base += 64 {
			var in, s0, s1 [64]byte
			for i := range in {
				in[i] = byte(base + i)
			}
			if k == AESNI16 {
				sboxes16AESNI(&s0, &s1, &in)
			} else {
				sboxes16AVX512(&s0, &s1, &in)
			}
			check(t, in[:], s0[:], s1[:])
		}
	})
	for _, k := range []Kernels8{GFNI8, AESNI8} {
		t.Run("x8-"+k.String(), func(t *testing.T) {
			needKernels(t, k.Supported(), k.String())
			for base := 0; base < 256; base += 32 {
				var in, s0, s1 [32]byte
				for i := range in {
					in[i] = byte(base + i)
				}
				if k == AESNI8 {
					sboxes8AESNI(&s0, &s1, &in)
				} else {
					sboxes8GFNI(&s0, &s1, &in)
				}
				check(t, in[:], s0[:], s1[:])
			}
		})
	}
}
