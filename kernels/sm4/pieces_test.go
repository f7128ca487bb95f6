//go:build amd64 && gc && !purego

package sm4

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/internal/cputime"
	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// refPiece is the reference of one piece: GCTR over ceil(n/16) blocks
// from ctr, the first n bytes XORed with src (zeros when src is nil).
func refPiece(b cipher.Block, ctr [16]byte, src []byte, n int) []byte {
	blocks := PieceBlocks(n)
	ks := make([]byte, blocks*BlockSize)
	refXORKeyStream(b, ctr, ks, ks)
	out := ks[:n]
	for i := range out {
		if src != nil {
			out[i] ^= src[i]
		}
	}
	return out
}

// pieceCase is one random gathered pass: pieces with their buffers and
// the expected outputs.
type pieceCase struct {
	ps   []Piece
	dsts [][]byte
	want [][]byte
	// guard bytes around every destination must stay untouched
	live, saved [][]byte
	lo          []int
}

const pieceGuard = 67

func newPieceCase(r *rand.ChaCha8, b cipher.Block, total int) *pieceCase {
	c := &pieceCase{}
	left := total
	for left > 0 {
		blocks := 1 + int(r.Uint64()%uint64(left))
		switch r.Uint64() % 4 {
		case 0:
			blocks = 1 // a tag mask
		case 1:
			blocks = min(blocks, 1+int(r.Uint64()%4))
		}
		left -= blocks
		n := blocks*BlockSize - int(r.Uint64()%16) // partial last block
		if r.Uint64()%3 == 0 {
			n = blocks * BlockSize
		}
		var ctr [16]byte
		r.Read(ctr[:])
		if r.Uint64()%3 == 0 { // inc32 wraps inside the piece
			binary.BigEndian.PutUint32(ctr[12:], 0xffffffff-uint32(r.Uint64()%uint64(blocks)))
		}
		// Destination with guard bytes on both sides, at a random offset.
		lo := pieceGuard + int(r.Uint64()%16)
		outer := make([]byte, lo+n+pieceGuard)
		r.Read(outer)
		dst := outer[lo : lo+n]
		var src []byte
		switch r.Uint64() % 3 {
		case 0: // keystream only
		case 1: // in place
			src = dst
		default: // separate, misaligned
			s := make([]byte, n+int(r.Uint64()%7))
			r.Read(s)
			src = s[len(s)-n:]
		}
		want := refPiece(b, ctr, src, n)
		p := Piece{Ctr: ctr, N: n}
		if n > 0 {
			p.Dst = &dst[0]
			if src != nil {
				p.Src = &src[0]
			}
		}
		c.ps = append(c.ps, p)
		c.dsts = append(c.dsts, dst)
		c.want = append(c.want, want)
		c.live = append(c.live, outer)
		c.saved = append(c.saved, append([]byte(nil), outer...))
		c.lo = append(c.lo, lo)
	}
	return c
}

func (c *pieceCase) check(t *testing.T, what string) {
	t.Helper()
	for i, d := range c.dsts {
		if !bytes.Equal(d, c.want[i]) {
			t.Fatalf("%s: piece %d of %d (%d bytes): mismatch", what, i, len(c.ps), c.ps[i].N)
		}
		lo, hi := c.lo[i], c.lo[i]+len(d)
		if !bytes.Equal(c.live[i][:lo], c.saved[i][:lo]) || !bytes.Equal(c.live[i][hi:], c.saved[i][hi:]) {
			t.Fatalf("%s: piece %d: wrote outside its bytes", what, i)
		}
	}
}

func TestXORPieces(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{9})
		for trial := 0; trial < 3000; trial++ {
			b, enc, _ := newKey(t, randomKey(r))
			total := 1 + int(r.Uint64()%MaxPieceBlocks)
			if trial%4 == 0 {
				total = MaxPieceBlocks
			}
			c := newPieceCase(r, b, total)
			XORPieces(tier, enc, c.ps)
			c.check(t, tier.String())
		}
	})
}

// TestXORPiecesShort covers the smallest passes and empty pieces.
func TestXORPiecesShort(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{10})
		b, enc, _ := newKey(t, randomKey(r))
		XORPieces(tier, enc, nil)
		XORPieces(tier, enc, []Piece{{N: 0}})
		for n := 1; n <= MaxPieceBlocks*BlockSize; n++ {
			var ctr [16]byte
			r.Read(ctr[:])
			src := make([]byte, n)
			r.Read(src)
			dst := make([]byte, n)
			XORPieces(tier, enc, []Piece{{N: 0}, {Ctr: ctr, Dst: &dst[0], Src: &src[0], N: n}, {N: 0}})
			if want := refPiece(b, ctr, src, n); !bytes.Equal(dst, want) {
				t.Fatalf("%d bytes: mismatch", n)
			}
		}
	})
}

func TestXORPiecesPanics(t *testing.T) {
	tier, ok := Best()
	if !ok {
		kerneltest.Unsupported(t, "no kernel tier")
	}
	var rk [32]uint32
	buf := make([]byte, 2*MaxPieceBlocks*BlockSize)
	for _, ps := range [][]Piece{
		{{Dst: &buf[0], N: MaxPieceBlocks*BlockSize + 1}},
		{{Dst: &buf[0], N: 16}, {Dst: &buf[16], N: MaxPieceBlocks * BlockSize}},
		{{Dst: &buf[0], N: -1}},
		{{N: 16}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("%d pieces: no panic", len(ps))
				}
			}()
			XORPieces(tier, &rk, ps)
		}()
	}
}

func TestXORPiecesNoAllocs(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		_, enc, _ := newKey(t, make([]byte, 16))
		buf := make([]byte, 1024)
		ps := []Piece{{Dst: &buf[0], N: 16}, {Dst: &buf[16], Src: &buf[16], N: 1000}}
		if a := testing.AllocsPerRun(20, func() { XORPieces(tier, enc, ps) }); a != 0 {
			t.Fatalf("%v allocations per call", a)
		}
	})
}

func FuzzXORPieces(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), uint64(1), uint16(64))
	f.Add(make([]byte, 16), uint64(7), uint16(1))
	f.Fuzz(func(t *testing.T, key []byte, seed uint64, total uint16) {
		if len(key) != 16 {
			return
		}
		b, enc, _ := newKey(t, key)
		blocks := 1 + int(total)%MaxPieceBlocks
		for _, tier := range AllTiers {
			if !tier.Supported() {
				continue
			}
			var s [32]byte
			binary.LittleEndian.PutUint64(s[:], seed)
			c := newPieceCase(rand.NewChaCha8(s), b, blocks)
			XORPieces(tier, enc, c.ps)
			c.check(t, tier.String())
		}
	})
}

// BenchmarkXORPieces measures one gathered pass shaped like an sm4-gcm
// batch of 1420-byte packets: per packet a tag mask (one block, no
// source) and the 396-byte rest, in place, 64 blocks in all; next to it
// one CTR kernel call of the same blocks.
func BenchmarkXORPieces(b *testing.B) {
	for _, tier := range AllTiers {
		b.Run(tier.String(), func(b *testing.B) {
			if !tier.Supported() {
				kerneltest.Unsupported(b, "CPU lacks %s", tier)
			}
			_, enc, _ := newKey(b, make([]byte, 16))
			buf := make([]byte, 4096)
			var ps []Piece
			off, blocks := 0, 0
			for blocks < MaxPieceBlocks {
				ps = append(ps, Piece{Dst: &buf[off], N: 16})
				off += 16
				blocks++
				n := min(396, (MaxPieceBlocks-blocks)*16)
				if n == 0 {
					break
				}
				ps = append(ps, Piece{Dst: &buf[off], Src: &buf[off], N: n})
				off += n + 64
				blocks += PieceBlocks(n)
			}
			b.Run("pieces", func(b *testing.B) {
				cputime.Loop(b, blocks*16, func() { XORPieces(tier, enc, ps) })
			})
			b.Run("ctr", func(b *testing.B) {
				var ctr [16]byte
				cputime.Loop(b, blocks*16, func() {
					XORKeyStream(tier, enc, &ctr, buf[:blocks*16], buf[:blocks*16])
				})
			})
		})
	}
}

func TestXORKeyStreamPair(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{12})
		const n = PairBlocks * BlockSize
		for trial := 0; trial < 200; trial++ {
			b, enc, _ := newKey(t, randomKey(r))
			var ctr [2][16]byte
			var src, dst, want [2][]byte
			for k := range ctr {
				r.Read(ctr[k][:])
				if (trial+k)%3 == 0 { // inc32 wraps inside the run
					binary.BigEndian.PutUint32(ctr[k][12:], 0xffffffff-uint32(r.Uint64()%70))
				}
				s := make([]byte, n+int(r.Uint64()%9))
				r.Read(s)
				src[k] = s[len(s)-n:]
				dst[k] = src[k]
				if (trial>>k)%2 == 1 {
					dst[k] = make([]byte, n+8)[3 : 3+n]
				}
				want[k] = make([]byte, n)
				refXORKeyStream(b, ctr[k], want[k], src[k])
			}
			c := ctr
			XORKeyStreamPair(tier, enc, &c[0], dst[0], src[0], &c[1], dst[1], src[1])
			for k := range ctr {
				if !bytes.Equal(dst[k], want[k]) {
					t.Fatalf("trial %d run %d: mismatch", trial, k)
				}
				w := ctr[k]
				inc32(&w, PairBlocks)
				if c[k] != w {
					t.Fatalf("trial %d run %d: counter %x want %x", trial, k, c[k], w)
				}
			}
		}
	})
}

func BenchmarkXORKeyStreamPair(b *testing.B) {
	for _, tier := range AllTiers {
		b.Run(tier.String(), func(b *testing.B) {
			if !tier.Supported() {
				kerneltest.Unsupported(b, "CPU lacks %s", tier)
			}
			_, enc, _ := newKey(b, make([]byte, 16))
			const n = PairBlocks * BlockSize
			buf := make([]byte, 2*n)
			var c0, c1 [16]byte
			b.Run("pair", func(b *testing.B) {
				cputime.Loop(b, 2*n, func() {
					XORKeyStreamPair(tier, enc, &c0, buf[:n], buf[:n], &c1, buf[n:], buf[n:])
				})
			})
			b.Run("two", func(b *testing.B) {
				cputime.Loop(b, 2*n, func() {
					XORKeyStream(tier, enc, &c0, buf[:n], buf[:n])
					XORKeyStream(tier, enc, &c1, buf[n:], buf[n:])
				})
			})
		})
	}
}

func FuzzXORKeyStreamPair(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), []byte("fedcba9876543210"), []byte("0000000000000000"), uint64(1))
	f.Add(make([]byte, 16), bytes.Repeat([]byte{0xff}, 16), bytes.Repeat([]byte{0xfe}, 16), uint64(2))
	f.Fuzz(func(t *testing.T, key, ctrA, ctrB []byte, seed uint64) {
		if len(key) != 16 || len(ctrA) != 16 || len(ctrB) != 16 {
			return
		}
		b, enc, _ := newKey(t, key)
		const n = PairBlocks * BlockSize
		var s [32]byte
		binary.LittleEndian.PutUint64(s[:], seed)
		r := rand.NewChaCha8(s)
		src := make([]byte, 2*n)
		r.Read(src)
		want := make([]byte, 2*n)
		refXORKeyStream(b, [16]byte(ctrA), want[:n], src[:n])
		refXORKeyStream(b, [16]byte(ctrB), want[n:], src[n:])
		for _, tier := range AllTiers {
			if !tier.Supported() {
				continue
			}
			got := make([]byte, 2*n)
			ca, cb := [16]byte(ctrA), [16]byte(ctrB)
			XORKeyStreamPair(tier, enc, &ca, got[:n], src[:n], &cb, got[n:], src[n:])
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: mismatch", tier)
			}
		}
	})
}
