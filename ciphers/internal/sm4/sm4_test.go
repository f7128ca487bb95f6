package sm4

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// newRand returns a deterministic generator for the named test.
func newRand(name string) *rand.Rand {
	var seed [32]byte
	copy(seed[:], "gmtun internal sm4: "+name)
	return rand.New(rand.NewChaCha8(seed))
}

// gf256Mul multiplies in GF(2^8) modulo x^8+x^7+x^6+x^5+x^4+x^2+1, the
// field of the SM4 S-box's algebraic description.
func gf256Mul(a, b byte) byte {
	var r byte
	for b != 0 {
		if b&1 != 0 {
			r ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0xf5
		}
		b >>= 1
	}
	return r
}

// sboxAffine is the circulant affine map A·x ⊕ 0xd3 with first row 0xd3
// (output bits MSB first).
func sboxAffine(x byte) byte {
	var out byte
	for i := range 8 {
		row := bits.RotateLeft8(0xd3, -i)
		out = out<<1 | byte(bits.OnesCount8(row&x)&1)
	}
	return out ^ 0xd3
}

// TestTables recomputes every constant table: the S-box as
// A·(A·x ⊕ C)^-1 ⊕ C (the known algebraic structure of τ, checked here
// against the standard's table as data), CK from its formula, and the
// merged T-tables from the S-box and L.
func TestTables(t *testing.T) {
	for x := range 256 {
		y := sboxAffine(byte(x))
		var inv byte
		for c := 1; c < 256 && y != 0; c++ {
			if gf256Mul(y, byte(c)) == 1 {
				inv = byte(c)
			}
		}
		if want := sboxAffine(inv); sbox[x] != want {
			t.Fatalf("sbox[%#02x] = %#02x, want %#02x", x, sbox[x], want)
		}
	}
	if sbox[0] != 0xd6 || sbox[255] != 0x48 {
		t.Fatalf("sbox corner values %#02x %#02x", sbox[0], sbox[255])
	}
	for i := range 32 {
		var want uint32
		for j := range 4 {
			want = want<<8 | uint32(byte((4*i+j)*7))
		}
		if ck[i] != want {
			t.Errorf("ck[%d] = %#08x, want %#08x", i, ck[i], want)
		}
	}
	rng := newRand("tables")
	for range 100000 {
		x := rng.Uint32()
		if a, b := tTable(x), tSbox(x); a != b {
			t.Fatalf("tTable(%#08x) = %#08x, S-box + L gives %#08x", x, a, b)
		}
	}
	for k := range 4 {
		for x := range 256 {
			b := uint32(sbox[x]) << (24 - 8*k)
			want := b ^ bits.RotateLeft32(b, 2) ^ bits.RotateLeft32(b, 10) ^ bits.RotateLeft32(b, 18) ^ bits.RotateLeft32(b, 24)
			if got := tTables[k][x]; got != want {
				t.Fatalf("tTables[%d][%#02x] = %#08x, want %#08x", k, x, got, want)
			}
		}
	}
}

// The carry-less multiply itself is tested in ciphers/internal/ghash.

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

func TestGFMul(t *testing.T) {
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
		var key ghashKey
		initGHASHKey(&key, &c[1])
		hi, lo := gfMul(&key, binary.BigEndian.Uint64(c[0][:8]), binary.BigEndian.Uint64(c[0][8:]))
		var got [16]byte
		binary.BigEndian.PutUint64(got[:8], hi)
		binary.BigEndian.PutUint64(got[8:], lo)
		if want := gfMulRef(c[0], c[1]); got != want {
			t.Fatalf("%x · %x = %x, want %x", c[0], c[1], got, want)
		}
	}
}

// TestCTRGeneric compares ctrGeneric with crypto/cipher.NewCTR over the
// generic block, at every length 0..600 and around 64- and 128-bit counter
// wrap-arounds, and checks the returned counter position.
func TestCTRGeneric(t *testing.T) {
	rng := newRand("ctr")
	c, _ := NewCipher([]byte("0123456789abcdef"))
	ivs := [][16]byte{
		{0: 1, 15: 0xfe},
		{8: 0xff, 9: 0xff, 10: 0xff, 11: 0xff, 12: 0xff, 13: 0xff, 14: 0xff, 15: 0xfd},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe},
	}
	for _, iv := range ivs {
		for n := 0; n <= 600; n++ {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			want := make([]byte, n)
			cipher.NewCTR(c, iv[:]).XORKeyStream(want, src)
			ctr := iv
			got := bytes.Clone(src)
			ctrGeneric(&c.enc, &ctr, got, got)
			if !bytes.Equal(got, want) {
				t.Fatalf("iv %x len %d: differs from crypto/cipher CTR", iv, n)
			}
			// The counter advanced by ceil(n/16) blocks.
			next := iv
			for range (n + 15) / 16 {
				for j := 15; j >= 0; j-- {
					next[j]++
					if next[j] != 0 {
						break
					}
				}
			}
			if ctr != next {
				t.Fatalf("iv %x len %d: counter %x, want %x", iv, n, ctr, next)
			}
		}
	}
}

// TestEncryptBlocks checks the multi-block ECB entry point against
// single-block encryption, in place and out of place.
func TestEncryptBlocks(t *testing.T) {
	rng := newRand("ecb")
	c, _ := NewCipher([]byte("fedcba9876543210"))
	src := make([]byte, 16*67)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	want := make([]byte, len(src))
	for i := 0; i < len(src); i += 16 {
		c.Encrypt(want[i:], src[i:])
	}
	got := make([]byte, len(src))
	c.EncryptBlocks(got, src)
	if !bytes.Equal(got, want) {
		t.Fatal("EncryptBlocks differs from Encrypt")
	}
	c.EncryptBlocks(src, src)
	if !bytes.Equal(src, want) {
		t.Fatal("in-place EncryptBlocks differs")
	}
	for name, f := range map[string]func(){
		"partial block": func() { c.EncryptBlocks(got, src[:17]) },
		"short dst":     func() { c.EncryptBlocks(got[:16], src[:32]) },
		"overlap":       func() { c.EncryptBlocks(src[16:], src[:32]) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("EncryptBlocks with %s did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestAllocs checks that the packet paths allocate nothing.
func TestAllocs(t *testing.T) {
	g, _ := NewGCM([]byte("0123456789abcdef"))
	buf := make([]byte, 1420)
	aad := make([]byte, 16)
	var nonce [NonceSize]byte
	var tag [TagSize]byte
	if a := testing.AllocsPerRun(50, func() { g.Seal(buf, &tag, &nonce, buf, aad) }); a != 0 {
		t.Errorf("GCM.Seal: %v allocations", a)
	}
	if a := testing.AllocsPerRun(50, func() { g.Open(buf, &nonce, buf, aad, &tag) }); a != 0 {
		t.Errorf("GCM.Open: %v allocations", a)
	}
	s, _ := NewCTR(make([]byte, 16), make([]byte, 16))
	if a := testing.AllocsPerRun(50, func() { s.XORKeyStream(buf[:1419], buf[:1419]) }); a != 0 {
		t.Errorf("CTR.XORKeyStream: %v allocations", a)
	}
}
