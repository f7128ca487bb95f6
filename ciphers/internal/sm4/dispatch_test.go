package sm4

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	"github.com/gmtun/gmtun/ciphers/internal/testinput"
)

// Every test here runs once per registered implementation (and generic)
// and compares the dispatched primitives with the *Generic reference.

func TestAllImplsBlock(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl block")
		for trial := range 20 {
			c, _ := NewCipher(testinput.Bytes(rng, KeySize))
			for nb := 0; nb <= 70; nb++ {
				src := testinput.Unaligned(testinput.Bytes(rng, nb*BlockSize), trial%5)
				want := make([]byte, len(src))
				encryptBlocksGeneric(&c.enc, want, src)
				got := make([]byte, len(src))
				c.EncryptBlocks(got, src)
				if !bytes.Equal(got, want) {
					t.Fatalf("EncryptBlocks of %d blocks differs from generic", nb)
				}
				c.EncryptBlocks(src, src)
				if !bytes.Equal(src, want) {
					t.Fatalf("in-place EncryptBlocks of %d blocks differs", nb)
				}
			}
			blk := testinput.Bytes(rng, BlockSize)
			var enc, dec, wantEnc [BlockSize]byte
			cryptBlockGeneric(&c.enc, wantEnc[:], blk)
			c.Encrypt(enc[:], blk)
			c.Decrypt(dec[:], enc[:])
			if enc != wantEnc || !bytes.Equal(dec[:], blk) {
				t.Fatalf("Encrypt/Decrypt: %x %x want %x %x", enc, dec, wantEnc, blk)
			}
		}
	})
}

// ctrAt returns a counter block whose value is near a wrap: the low k bits
// all ones minus d (k = 32, 64 or 128), other bits random.
func ctrAt(rng *rand.Rand, k int, d uint64) [16]byte {
	var c [16]byte
	copy(c[:], testinput.Bytes(rng, 16))
	hi, lo := binary.BigEndian.Uint64(c[:8]), binary.BigEndian.Uint64(c[8:])
	switch k {
	case 32:
		lo = lo&^0xffffffff | (0xffffffff - d)
	case 64:
		lo = ^uint64(0) - d
	case 128:
		hi, lo = ^uint64(0), ^uint64(0)-d
	}
	binary.BigEndian.PutUint64(c[:8], hi)
	binary.BigEndian.PutUint64(c[8:], lo)
	return c
}

func TestAllImplsCTR(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl ctr")
		for _, n := range testinput.Lengths() {
			key := testinput.Bytes(rng, KeySize)
			var iv [16]byte
			switch n % 4 {
			case 0:
				iv = ctrAt(rng, 32, rng.Uint64N(uint64(n/16+2)))
			case 1:
				iv = ctrAt(rng, 64, rng.Uint64N(uint64(n/16+2)))
			case 2:
				iv = ctrAt(rng, 128, rng.Uint64N(uint64(n/16+2)))
			default:
				copy(iv[:], testinput.Bytes(rng, 16))
			}
			src := testinput.Unaligned(testinput.Bytes(rng, n), n%7)
			s, _ := NewCTR(key, iv[:])
			want := make([]byte, n)
			wantCtr := iv
			ctrGeneric(&s.enc, &wantCtr, want, src)

			got := make([]byte, n)
			s.XORKeyStream(got, src)
			if !bytes.Equal(got, want) {
				t.Fatalf("len %d iv %x: CTR differs from generic", n, iv)
			}
			// Again in place and in random pieces, carrying the position.
			s, _ = NewCTR(key, iv[:])
			buf := bytes.Clone(src)
			for rest := buf; len(rest) > 0; {
				k := min(len(rest), 1+rng.IntN(200))
				s.XORKeyStream(rest[:k], rest[:k])
				rest = rest[k:]
			}
			if !bytes.Equal(buf, want) {
				t.Fatalf("len %d iv %x: streamed in-place CTR differs", n, iv)
			}
			if n%16 == 0 && s.ctr != wantCtr {
				t.Fatalf("len %d: counter %x want %x", n, s.ctr, wantCtr)
			}
		}
	})
}

// TestAllImplsCTRWrapLong crosses the 32-bit boundary inside one long call,
// where the kernels must be split and the carry added.
func TestAllImplsCTRWrapLong(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl ctr wrap")
		for _, k := range []int{32, 64, 128} {
			for _, d := range []uint64{0, 1, 5, 63, 64, 200} {
				iv := ctrAt(rng, k, d)
				s, _ := NewCTR(testinput.Bytes(rng, KeySize), iv[:])
				src := testinput.Bytes(rng, 4096+int(d%13))
				want := make([]byte, len(src))
				c := iv
				ctrGeneric(&s.enc, &c, want, src)
				got := make([]byte, len(src))
				s.XORKeyStream(got, src)
				if !bytes.Equal(got, want) {
					t.Fatalf("wrap %d-%d: CTR differs", k, d)
				}
				if s.ctr != c {
					t.Fatalf("wrap %d-%d: counter %x want %x", k, d, s.ctr, c)
				}
			}
		}
	})
}

// gcmCase is one random GCM message.
type gcmCase struct {
	g     *GCM
	nonce [NonceSize]byte
	aad   []byte
	pt    []byte
}

func newGCMCase(rng *rand.Rand, n int) gcmCase {
	g, _ := NewGCM(testinput.Bytes(rng, KeySize))
	c := gcmCase{g: g, aad: testinput.Bytes(rng, rng.IntN(50)), pt: testinput.Bytes(rng, n)}
	copy(c.nonce[:], testinput.Bytes(rng, NonceSize))
	if n%3 == 0 {
		c.aad = testinput.Bytes(rng, 16) // the tunnel's header size
	}
	return c
}

// sealRef seals c with the generic code.
func (c gcmCase) sealRef() (ct []byte, tag [TagSize]byte) {
	ct = make([]byte, len(c.pt))
	sealGeneric(c.g, ct, &tag, &c.nonce, c.pt, c.aad)
	return ct, tag
}

func TestAllImplsGCM(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl gcm")
		for _, n := range testinput.Lengths() {
			c := newGCMCase(rng, n)
			wantCT, wantTag := c.sealRef()

			// Out of place, unaligned.
			out := testinput.Unaligned(make([]byte, n), n%5)
			var tag [TagSize]byte
			c.g.Seal(out, &tag, &c.nonce, testinput.Unaligned(c.pt, n%3), c.aad)
			if !bytes.Equal(out, wantCT) || tag != wantTag {
				t.Fatalf("len %d aad %d: Seal differs from generic", n, len(c.aad))
			}
			// In place.
			buf := bytes.Clone(c.pt)
			c.g.Seal(buf, &tag, &c.nonce, buf, c.aad)
			if !bytes.Equal(buf, wantCT) || tag != wantTag {
				t.Fatalf("len %d: in-place Seal differs", n)
			}
			// Open in place.
			if !c.g.Open(buf, &c.nonce, buf, c.aad, &tag) || !bytes.Equal(buf, c.pt) {
				t.Fatalf("len %d: Open failed or wrong plaintext", n)
			}
			// A flipped bit anywhere is rejected and nothing is written.
			bad := bytes.Clone(wantCT)
			badTag := wantTag
			switch {
			case n > 0 && n%2 == 0:
				bad[rng.IntN(n)] ^= 1 << rng.IntN(8)
			case len(c.aad) > 0 && n%3 == 0:
				c.aad = bytes.Clone(c.aad)
				c.aad[rng.IntN(len(c.aad))] ^= 0x80
			default:
				badTag[rng.IntN(TagSize)] ^= 1
			}
			dst := bytes.Repeat([]byte{0xa5}, n)
			if c.g.Open(dst, &c.nonce, bad, c.aad, &badTag) {
				t.Fatalf("len %d: tampered message accepted", n)
			}
			if !bytes.Equal(dst, bytes.Repeat([]byte{0xa5}, n)) {
				t.Fatalf("len %d: failed Open wrote output", n)
			}
		}
	})
}

// randomBatch returns n packets of mixed lengths (0..1500 and a few long
// ones) laid out as in the tunnel: 16-byte AAD ‖ text ‖ tag.
func randomBatch(rng *rand.Rand, n int) (bufs [][]byte, ps []Packet) {
	ps = make([]Packet, n)
	bufs = make([][]byte, n)
	for i := range ps {
		var l int
		switch rng.IntN(4) {
		case 0:
			l = rng.IntN(64)
		case 1:
			l = 1420
		case 2:
			l = 16 * rng.IntN(100)
		default:
			l = rng.IntN(1501)
		}
		if rng.IntN(40) == 0 {
			l = 4096 + rng.IntN(5000)
		}
		buf := testinput.Bytes(rng, 16+l+TagSize)
		bufs[i] = buf
		copy(ps[i].Nonce[:], testinput.Bytes(rng, NonceSize))
		ps[i].AAD, ps[i].Text, ps[i].Tag = buf[:16], buf[16:16+l], (*[TagSize]byte)(buf[16+l:])
	}
	return bufs, ps
}

func TestAllImplsBatch(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl batch")
		for _, n := range []int{0, 1, 2, 3, 5, 16, 31, 63, 64, 65, 100, 127, 128, 129, 200} {
			g, _ := NewGCM(testinput.Bytes(rng, KeySize))
			bufs, ps := randomBatch(rng, n)
			plain := make([][]byte, n)
			want := make([][]byte, n)
			for i, p := range ps {
				plain[i] = bytes.Clone(bufs[i])
				ct := make([]byte, len(p.Text))
				var tag [TagSize]byte
				sealGeneric(g, ct, &tag, &p.Nonce, p.Text, p.AAD)
				want[i] = append(append(bytes.Clone(p.AAD), ct...), tag[:]...)
			}
			g.SealBatch(ps)
			for i := range ps {
				if !bytes.Equal(bufs[i], want[i]) {
					t.Fatalf("batch of %d: packet %d (len %d) differs from generic", n, i, len(ps[i].Text))
				}
			}
			// Tamper with every third packet, then open the batch.
			for i := 0; i < n; i += 3 {
				bufs[i][rng.IntN(len(bufs[i]))] ^= 1 << rng.IntN(8)
			}
			tampered := make([][]byte, n)
			for i := range bufs {
				tampered[i] = bytes.Clone(bufs[i])
			}
			ok := make([]bool, n)
			g.OpenBatch(ps, ok)
			for i := range ps {
				switch {
				case i%3 == 0 && ok[i]:
					t.Fatalf("batch of %d: tampered packet %d verified", n, i)
				case i%3 == 0 && !bytes.Equal(bufs[i], tampered[i]):
					t.Fatalf("batch of %d: rejected packet %d was modified", n, i)
				case i%3 != 0 && !ok[i]:
					t.Fatalf("batch of %d: packet %d rejected", n, i)
				case i%3 != 0 && !bytes.Equal(bufs[i][:16+len(ps[i].Text)], plain[i][:16+len(ps[i].Text)]):
					t.Fatalf("batch of %d: packet %d opened to the wrong plaintext", n, i)
				}
			}
		}
	})
}

func TestAllImplsAllocs(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		g, _ := NewGCM([]byte("0123456789abcdef"))
		buf := make([]byte, 1420)
		aad := make([]byte, 16)
		var nonce [NonceSize]byte
		var tag [TagSize]byte
		if a := testing.AllocsPerRun(20, func() { g.Seal(buf, &tag, &nonce, buf, aad) }); a != 0 {
			t.Errorf("Seal: %v allocations", a)
		}
		if a := testing.AllocsPerRun(20, func() { g.Open(buf, &nonce, buf, aad, &tag) }); a != 0 {
			t.Errorf("Open: %v allocations", a)
		}
		_, ps := randomBatch(newRand("allocs"), 64)
		ok := make([]bool, len(ps))
		if a := testing.AllocsPerRun(5, func() { g.SealBatch(ps); g.OpenBatch(ps, ok) }); a != 0 {
			t.Errorf("SealBatch/OpenBatch: %v allocations", a)
		}
		s, _ := NewCTR(make([]byte, 16), make([]byte, 16))
		if a := testing.AllocsPerRun(20, func() { s.XORKeyStream(buf[:1419], buf[:1419]) }); a != 0 {
			t.Errorf("CTR: %v allocations", a)
		}
	})
}

// FuzzDispatchGCM compares the dispatched (fastest) GCM seal and CTR with
// the generic code on fuzzer-chosen keys, nonces, AAD and plaintext.
func FuzzDispatchGCM(f *testing.F) {
	f.Add(make([]byte, 16), make([]byte, 16), []byte{}, []byte("hello"))
	f.Add(bytes.Repeat([]byte{0xff}, 16), bytes.Repeat([]byte{0xff}, 16), make([]byte, 16), make([]byte, 1420))
	f.Add([]byte("0123456789abcdef"), []byte("fedcba9876543210"), make([]byte, 33), make([]byte, 1025))
	f.Fuzz(func(t *testing.T, key, iv, aad, pt []byte) {
		if len(key) != KeySize || len(iv) != 16 {
			return
		}
		g, _ := NewGCM(key)
		nonce := (*[NonceSize]byte)(iv)
		want := make([]byte, len(pt))
		var wantTag, tag [TagSize]byte
		sealGeneric(g, want, &wantTag, nonce, pt, aad)
		got := make([]byte, len(pt))
		g.Seal(got, &tag, nonce, pt, aad)
		if !bytes.Equal(got, want) || tag != wantTag {
			t.Fatal("Seal differs from sealGeneric")
		}
		if !g.Open(got, nonce, got, aad, &tag) || !bytes.Equal(got, pt) {
			t.Fatal("Open failed")
		}
		s, _ := NewCTR(key, iv)
		c := *(*[16]byte)(iv)
		ctrGeneric(&s.enc, &c, want, pt)
		s.XORKeyStream(got, pt)
		if !bytes.Equal(got, want) {
			t.Fatal("CTR differs from ctrGeneric")
		}
	})
}

// BenchmarkImpls measures the one-message GCM seal of every implementation.
func BenchmarkImpls(b *testing.B) {
	g, _ := NewGCM([]byte("0123456789abcdef"))
	var nonce [NonceSize]byte
	var tag [TagSize]byte
	aad := make([]byte, 16)
	for _, n := range []int{64, 1420, 8192} {
		buf := make([]byte, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				g.Seal(buf, &tag, &nonce, buf, aad)
			}
		})
	}
}
