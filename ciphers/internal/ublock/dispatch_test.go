package ublock

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	"github.com/gmtun/gmtun/ciphers/internal/testinput"
)

// Every test here runs once per implementation registered under
// ImplPackage (the kernel tiers of dispatch_amd64.go) and once on the
// generic code, and compares the dispatched primitives (encryptBlocks,
// decryptBlocks, ctr32XOR, and Cipher and GCM on top of them) with the
// *Generic reference.

func newRand(seed string) *rand.Rand {
	var s [32]byte
	copy(s[:], seed)
	return rand.New(rand.NewChaCha8(s))
}

// variants are the three uBlock variants as (key size, block size).
var variants = []struct {
	name           string
	keyLen, blkLen int
}{{"128/128", 16, 16}, {"128/256", 32, 16}, {"256/256", 32, 32}}

func newSchedule(t testing.TB, key []byte, blockSize int) *Schedule {
	s := new(Schedule)
	if err := initSchedule(s, key, blockSize); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAllImplsECB(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl ecb")
		for _, v := range variants {
			for _, n := range testinput.Lengths() {
				n -= n % v.blkLen
				s := newSchedule(t, testinput.Bytes(rng, v.keyLen), v.blkLen)
				src := testinput.Unaligned(testinput.Bytes(rng, n), n%7)
				want := make([]byte, n)
				encryptBlocksGeneric(s, want, src)
				got := testinput.Unaligned(make([]byte, n), n%5)
				encryptBlocks(s, got, src)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: encryptBlocks of %d bytes differs from generic", v.name, n)
				}
				back := make([]byte, n)
				decryptBlocks(s, back, got)
				if !bytes.Equal(back, src) {
					t.Fatalf("%s: decryptBlocks of %d bytes does not invert", v.name, n)
				}
				decryptBlocksGeneric(s, back, got)
				if !bytes.Equal(back, src) {
					t.Fatalf("%s: decryptBlocksGeneric of %d bytes does not invert", v.name, n)
				}
				encryptBlocks(s, src, src) // in place
				if !bytes.Equal(src, want) {
					t.Fatalf("%s: in-place encryptBlocks of %d bytes differs", v.name, n)
				}
				decryptBlocks(s, src, src)
				if !bytes.Equal(src, back) {
					t.Fatalf("%s: in-place decryptBlocks of %d bytes differs", v.name, n)
				}
			}
		}
	})
}

// ctrRef is GCTR with inc32 over the generic block function, block by
// block: the oracle of both ctr32XOR and ctr32XORGeneric.
func ctrRef(s *Schedule, ctr [16]byte, dst, src []byte) [16]byte {
	var ks [BlockSize]byte
	for len(src) > 0 {
		encryptBlocksGeneric(s, ks[:], ctr[:])
		n := min(len(src), BlockSize)
		for i := range n {
			dst[i] = src[i] ^ ks[i]
		}
		binary.BigEndian.PutUint32(ctr[12:], binary.BigEndian.Uint32(ctr[12:])+1)
		src, dst = src[n:], dst[n:]
	}
	return ctr
}

func TestAllImplsCTR32(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl ctr")
		for _, n := range testinput.Lengths() {
			keyLen := 16 + 16*(n%2) // 128/128 and 128/256
			s := newSchedule(t, testinput.Bytes(rng, keyLen), BlockSize)
			var iv [16]byte
			copy(iv[:], testinput.Bytes(rng, 16))
			if n%3 == 0 { // near the 32-bit wrap
				binary.BigEndian.PutUint32(iv[12:], 0xffffffff-uint32(rng.IntN(n/16+2)))
			}
			src := testinput.Unaligned(testinput.Bytes(rng, n), n%7)
			want := make([]byte, n)
			wantCtr := ctrRef(s, iv, want, src)

			got := testinput.Unaligned(make([]byte, n), n%3)
			ctr := iv
			ctr32XOR(s, &ctr, got, src)
			if !bytes.Equal(got, want) || ctr != wantCtr {
				t.Fatalf("len %d iv %x: ctr32XOR differs (counter %x, want %x)", n, iv, ctr, wantCtr)
			}
			ctr = iv
			ctr32XORGeneric(s, &ctr, got, src)
			if !bytes.Equal(got, want) || ctr != wantCtr {
				t.Fatalf("len %d: ctr32XORGeneric differs from the block-by-block oracle", n)
			}
			// In place, and split at an arbitrary block boundary.
			ctr = iv
			k := min(n, 16*rng.IntN(n/16+1))
			ctr32XOR(s, &ctr, src[:k], src[:k])
			ctr32XOR(s, &ctr, src[k:], src[k:])
			if !bytes.Equal(src, want) || ctr != wantCtr {
				t.Fatalf("len %d split at %d: in-place ctr32XOR differs", n, k)
			}
		}
	})
}

// TestAllImplsGCMvsStd checks GCM against crypto/cipher.NewGCM over the
// Cipher (an independent implementation of SP 800-38D) at every length,
// one-shot and batched, sealing and opening, for 128/128 and 128/256.
func TestAllImplsGCMvsStd(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl gcm")
		for _, n := range testinput.Lengths() {
			key := testinput.Bytes(rng, 16+16*(n%2))
			c, err := NewCipher(key)
			if err != nil {
				t.Fatal(err)
			}
			std, err := cipher.NewGCM(c)
			if err != nil {
				t.Fatal(err)
			}
			g, err := NewGCM(key)
			if err != nil {
				t.Fatal(err)
			}
			var nonce [NonceSize]byte
			copy(nonce[:], testinput.Bytes(rng, NonceSize))
			aad := testinput.Bytes(rng, n%41)
			pt := testinput.Unaligned(testinput.Bytes(rng, n), n%7)
			want := std.Seal(nil, nonce[:], pt, aad)

			out := make([]byte, n)
			var tag [TagSize]byte
			g.Seal(out, &tag, &nonce, pt, aad)
			if !bytes.Equal(out, want[:n]) || !bytes.Equal(tag[:], want[n:]) {
				t.Fatalf("len %d: Seal differs from crypto/cipher's GCM", n)
			}
			back := make([]byte, n)
			if !g.Open(back, &nonce, out, aad, &tag) || !bytes.Equal(back, pt) {
				t.Fatalf("len %d: Open failed", n)
			}
			// A flipped bit anywhere fails and writes nothing.
			bad := bytes.Clone(out)
			badTag := tag
			if n > 0 {
				bad[rng.IntN(n)] ^= 1 << rng.IntN(8)
			} else {
				badTag[rng.IntN(TagSize)] ^= 1
			}
			sentinel := bytes.Repeat([]byte{0xa5}, n)
			dst := bytes.Clone(sentinel)
			if g.Open(dst, &nonce, bad, aad, &badTag) || !bytes.Equal(dst, sentinel) {
				t.Fatalf("len %d: Open accepted a forgery or wrote output", n)
			}
		}
	})
}

// TestAllImplsGCMBatch checks SealBatch and OpenBatch against Seal on
// batches of mixed lengths (1..130 packets, across the 64-packet chunks),
// with some packets corrupted.
func TestAllImplsGCMBatch(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl gcm batch")
		for _, count := range []int{1, 2, 3, 7, 16, 63, 64, 65, 128, 130} {
			g, _ := NewGCM(testinput.Bytes(rng, 16+16*(count%2)))
			ps := make([]Packet, count)
			wantText := make([][]byte, count)
			wantTag := make([][TagSize]byte, count)
			plain := make([][]byte, count)
			for i := range ps {
				n := rng.IntN(1500)
				if i%5 == 0 {
					n = rng.IntN(40)
				}
				buf := testinput.Bytes(rng, 16+n+TagSize)
				ps[i] = Packet{AAD: buf[:16], Text: buf[16 : 16+n], Tag: (*[TagSize]byte)(buf[16+n:])}
				copy(ps[i].Nonce[:], testinput.Bytes(rng, NonceSize))
				plain[i] = bytes.Clone(ps[i].Text)
				wantText[i] = make([]byte, n)
				g.Seal(wantText[i], &wantTag[i], &ps[i].Nonce, plain[i], ps[i].AAD)
			}
			g.SealBatch(ps)
			for i := range ps {
				if !bytes.Equal(ps[i].Text, wantText[i]) || *ps[i].Tag != wantTag[i] {
					t.Fatalf("batch of %d: packet %d sealed differently from Seal", count, i)
				}
			}
			bad := map[int]bool{}
			for i := range ps {
				if rng.IntN(4) == 0 {
					bad[i] = true
					ps[i].Tag[rng.IntN(TagSize)] ^= 0x80
				}
			}
			ok := make([]bool, count)
			g.OpenBatch(ps, ok)
			for i := range ps {
				switch {
				case ok[i] == bad[i]:
					t.Fatalf("batch of %d: packet %d ok = %v, corrupted %v", count, i, ok[i], bad[i])
				case ok[i] && !bytes.Equal(ps[i].Text, plain[i]):
					t.Fatalf("batch of %d: packet %d opened to wrong plaintext", count, i)
				case !ok[i] && !bytes.Equal(ps[i].Text, wantText[i]):
					t.Fatalf("batch of %d: rejected packet %d was modified", count, i)
				}
			}
		}
	})
}

// FuzzImpls compares every implementation with the generic code on the
// fuzzer's key, counter block and data: ECB of all variants, ctr32XOR, and
// GCM Seal against crypto/cipher's GCM.
func FuzzImpls(f *testing.F) {
	f.Add(make([]byte, 32), make([]byte, 16), []byte("uBlock"), uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0xff}, 16), make([]byte, 1000), uint8(1))
	f.Fuzz(func(t *testing.T, key, iv, data []byte, variant uint8) {
		if len(key) < 32 || len(iv) < 16 || len(data) > 1<<16 {
			return
		}
		v := variants[int(variant)%len(variants)]
		key = key[:v.keyLen]
		ecb := data[:len(data)-len(data)%v.blkLen]
		s := newSchedule(t, key, v.blkLen)
		want := make([]byte, len(ecb))
		encryptBlocksGeneric(s, want, ecb)
		var ctrWantData []byte
		var ctrWant [16]byte
		if v.blkLen == BlockSize {
			ctrWantData = make([]byte, len(data))
			ctrWant = ctrRef(s, [16]byte(iv[:16]), ctrWantData, data)
		}
		impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
			got := make([]byte, len(ecb))
			encryptBlocks(s, got, ecb)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: encryptBlocks differs from generic", v.name)
			}
			decryptBlocks(s, got, got)
			if !bytes.Equal(got, ecb) {
				t.Fatalf("%s: decryptBlocks does not invert", v.name)
			}
			if v.blkLen != BlockSize {
				return
			}
			out := make([]byte, len(data))
			ctr := [16]byte(iv[:16])
			ctr32XOR(s, &ctr, out, data)
			if !bytes.Equal(out, ctrWantData) || ctr != ctrWant {
				t.Fatalf("%s: ctr32XOR differs from the oracle", v.name)
			}
			g, _ := NewGCM(key)
			c, _ := NewCipher(key)
			std, _ := cipher.NewGCM(c)
			nonce := [NonceSize]byte(iv[:NonceSize])
			var tag [TagSize]byte
			g.Seal(out, &tag, &nonce, data, iv)
			if w := std.Seal(nil, nonce[:], data, iv); !bytes.Equal(append(out, tag[:]...), w) {
				t.Fatalf("%s: GCM Seal differs from crypto/cipher's GCM", v.name)
			}
		})
	})
}
