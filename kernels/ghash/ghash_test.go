//go:build amd64 && gc && !purego

package ghash

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	gmsm4 "github.com/emmansun/gmsm/sm4"

	"github.com/gmtun/gmtun/internal/cputime"
	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

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

// refMul multiplies two blocks bit by bit exactly as NIST SP 800-38D §6.3
// Algorithm 1 is written (variable time, byte arrays, test use only).
func refMul(x, y [16]byte) [16]byte {
	var z [16]byte
	v := y
	for i := 0; i < 128; i++ {
		if x[i/8]>>(7-i%8)&1 == 1 {
			for j := range z {
				z[j] ^= v[j]
			}
		}
		lsb := v[15] & 1
		for j := 15; j > 0; j-- {
			v[j] = v[j]>>1 | v[j-1]<<7
		}
		v[0] >>= 1
		if lsb == 1 {
			v[0] ^= 0xe1
		}
	}
	return z
}

// refGHASH is §6.4: Y_i = (Y_{i-1} ⊕ X_i)·H over the whole blocks.
func refGHASH(h, y [16]byte, data []byte) [16]byte {
	for i := 0; i+16 <= len(data); i += 16 {
		for j := 0; j < 16; j++ {
			y[j] ^= data[i+j]
		}
		y = refMul(y, h)
	}
	return y
}

func TestRefMulKnown(t *testing.T) {
	// x^0 (the block 0x80 00…) is the multiplicative identity, and x·x^127
	// = x^128 ≡ x^7 + x^2 + x + 1, whose block is e1 00 … 00.
	one := [16]byte{0: 0x80}
	var a [16]byte
	for i := range a {
		a[i] = byte(i*37 + 1)
	}
	if refMul(one, a) != a || refMul(a, one) != a {
		t.Fatal("refMul: 1·a != a")
	}
	x := [16]byte{0: 0x40}
	x127 := [16]byte{15: 0x01}
	if got := refMul(x, x127); got != [16]byte{0: 0xe1} {
		t.Fatalf("refMul: x·x^127 = %x", got)
	}
}

func TestUpdateAllLengths(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{3})
		for key := 0; key < 3; key++ {
			var h, y [16]byte
			r.Read(h[:])
			r.Read(y[:])
			if key == 0 {
				h = [16]byte{0: 0x80} // H = 1
			}
			var k Key
			NewKey(&h, &k)
			data := make([]byte, 4096)
			r.Read(data)
			// want[i] is the state after the first i blocks.
			want := make([][16]byte, 257)
			want[0] = y
			for i := 1; i <= 256; i++ {
				want[i] = refGHASH(h, want[i-1], data[16*(i-1):16*i])
			}
			buf := make([]byte, 4096+16)
			for n := 0; n <= 4096; n++ {
				off := n % 13
				copy(buf[off:], data[:n])
				got := y
				Update(tier, &k, &got, buf[off:off+n])
				if got != want[n/16] {
					t.Fatalf("key %d len %d: got %x want %x", key, n, got, want[n/16])
				}
			}
		}
	})
}

func TestUpdateSplitCalls(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{4})
		var h [16]byte
		r.Read(h[:])
		var k Key
		NewKey(&h, &k)
		data := make([]byte, 1024)
		r.Read(data)
		want := refGHASH(h, [16]byte{}, data)
		for split := 0; split <= len(data); split += 16 {
			var y [16]byte
			Update(tier, &k, &y, data[:split])
			Update(tier, &k, &y, data[split:])
			if y != want {
				t.Fatalf("split at %d: mismatch", split)
			}
		}
	})
}

// TestUpdate2 checks the two-segment call against the reference for every
// split of 1 KiB into two whole-block parts (the second copied to a buffer
// of its own, with a trailing partial block that must be ignored), so both
// segments run every path of the kernels: full groups, tails, and a full
// group after a tail.
func TestUpdate2(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{5})
		var h, y0 [16]byte
		r.Read(h[:])
		r.Read(y0[:])
		var k Key
		NewKey(&h, &k)
		data := make([]byte, 1024)
		r.Read(data)
		want := refGHASH(h, y0, data)
		for split := 0; split <= len(data); split += 16 {
			second := append(append([]byte(nil), data[split:]...), 0xaa, 0xbb, 0xcc)
			y := y0
			Update2(tier, &k, &y, data[:split], second)
			if y != want {
				t.Fatalf("split at %d: got %x, want %x", split, y, want)
			}
		}
	})
}

// TestUpdate2Lengths checks every pair of run lengths up to 100 and 40
// blocks (random keys and states, the second run unaligned), so the
// AVX512 tier's 32- and 16-block groups, its single and merged tails
// (run 1's last blocks and run 2 in one reduction when they fit in 16)
// and the other tiers' paths all meet the reference.
func TestUpdate2Lengths(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{9})
		var h [16]byte
		r.Read(h[:])
		var k Key
		NewKey(&h, &k)
		data := make([]byte, 16*140)
		r.Read(data)
		buf := make([]byte, 16*40+7)
		for na := 0; na <= 100; na++ {
			var y0 [16]byte
			r.Read(y0[:])
			mid := refGHASH(h, y0, data[:16*na])
			for nb := 0; nb <= 40; nb++ {
				off := (na + nb) % 7
				b := buf[off : off+16*nb]
				copy(b, data[16*na:16*(na+nb)])
				want := refGHASH(h, mid, b)
				y := y0
				Update2(tier, &k, &y, data[:16*na], b)
				if y != want {
					t.Fatalf("runs of %d and %d blocks: got %x, want %x", na, nb, y, want)
				}
			}
		}
	})
}

// gcmTag computes the GCM tag (NIST SP 800-38D §7.1 steps 1, 5, 6) from
// the ciphertext with this package's GHASH and a one-block SM4 cipher.
func gcmTag(tier Tier, b cipher.Block, iv, aad, ct []byte) []byte {
	var h, j0, y [16]byte
	b.Encrypt(h[:], h[:])
	var k Key
	NewKey(&h, &k)
	copy(j0[:], iv)
	j0[15] = 1
	pad := func(p []byte) []byte { return append(p[:len(p):len(p)], make([]byte, (16-len(p)%16)%16)...) }
	Update(tier, &k, &y, pad(aad))
	Update(tier, &k, &y, pad(ct))
	var lens [16]byte
	binary.BigEndian.PutUint64(lens[:8], uint64(len(aad))*8)
	binary.BigEndian.PutUint64(lens[8:], uint64(len(ct))*8)
	Update(tier, &k, &y, lens[:])
	var ek [16]byte
	b.Encrypt(ek[:], j0[:])
	for i := range y {
		y[i] ^= ek[i]
	}
	return y[:]
}

func TestGCMTagVector(t *testing.T) {
	var f struct {
		Vectors []struct{ ID, Key, IV, AAD, Ciphertext, Tag string }
	}
	data, err := os.ReadFile("../../testdata/vectors/sm4_gcm.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	h := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	forEachTier(t, func(t *testing.T, tier Tier) {
		for _, v := range f.Vectors {
			b, err := gmsm4.NewCipher(h(v.Key))
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(gcmTag(tier, b, h(v.IV), h(v.AAD), h(v.Ciphertext))); got != v.Tag {
				t.Errorf("%s: tag %s want %s", v.ID, got, v.Tag)
			}
		}
	})
}

func TestGCMTagVsGmsm(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{5})
		for _, n := range []int{0, 1, 15, 16, 17, 64, 255, 256, 257, 1420, 4096} {
			key, iv := make([]byte, 16), make([]byte, 12)
			r.Read(key)
			r.Read(iv)
			aad, pt := make([]byte, n%29), make([]byte, n)
			r.Read(aad)
			r.Read(pt)
			b, _ := gmsm4.NewCipher(key)
			aead, _ := cipher.NewGCM(b)
			sealed := aead.Seal(nil, iv, pt, aad)
			ct, tag := sealed[:n], sealed[n:]
			if got := gcmTag(tier, b, iv, aad, ct); !bytes.Equal(got, tag) {
				t.Errorf("len %d: tag %x want %x", n, got, tag)
			}
		}
	})
}

func TestNoAllocs(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		var h, y [16]byte
		var k Key
		buf := make([]byte, 1424)
		a := testing.AllocsPerRun(20, func() {
			NewKey(&h, &k)
			Update(tier, &k, &y, buf)
		})
		if a != 0 {
			t.Fatalf("%v allocations per call", a)
		}
	})
}

func FuzzUpdate(f *testing.F) {
	f.Add(make([]byte, 16), make([]byte, 16), make([]byte, 100))
	f.Add(bytes.Repeat([]byte{0xff}, 16), bytes.Repeat([]byte{0x80}, 16), make([]byte, 1420))
	f.Fuzz(func(t *testing.T, hIn, yIn, data []byte) {
		if len(hIn) != 16 || len(yIn) != 16 {
			return
		}
		var h, y [16]byte
		copy(h[:], hIn)
		copy(y[:], yIn)
		var k Key
		NewKey(&h, &k)
		want := refGHASH(h, y, data)
		for _, tier := range AllTiers {
			if !tier.Supported() {
				continue
			}
			got := y
			Update(tier, &k, &got, data)
			if got != want {
				t.Fatalf("%s: got %x want %x", tier, got, want)
			}
		}
	})
}

func BenchmarkUpdate(b *testing.B) {
	var h, y [16]byte
	h[3] = 7
	var k Key
	NewKey(&h, &k)
	for _, tier := range AllTiers {
		for _, n := range []int{64, 576, 1420, 8192} {
			b.Run(fmt.Sprintf("%s/%d", tier, n), func(b *testing.B) {
				if !tier.Supported() {
					kerneltest.Unsupported(b, "CPU lacks %s", tier)
				}
				buf := make([]byte, n)
				cputime.Loop(b, n, func() { Update(tier, &k, &y, buf) })
			})
		}
	}
}

// TestNewKeyMatchesGeneric: the powers computed with the PCLMULQDQ kernel
// are those of the bit-serial multiplication, for random and edge subkeys.
func TestNewKeyMatchesGeneric(t *testing.T) {
	if !PCLMULQDQ.Supported() {
		kerneltest.Unsupported(t, "no PCLMULQDQ: NewKey is newKeyGeneric")
	}
	hs := [][16]byte{{}, {0x80}, {15: 1}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	for range 200 {
		var h [16]byte
		for i := range h {
			h[i] = byte(rand.Uint32())
		}
		hs = append(hs, h)
	}
	for _, h := range hs {
		var got, want Key
		NewKey(&h, &got)
		newKeyGeneric(&h, &want)
		if got != want {
			t.Fatalf("H = %x: NewKey's table differs from the bit-serial one", h)
		}
	}
}
