//go:build amd64 && gc && !purego

package ublock

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// pieceCase is one piece of a test call: its buffers, guard copies and
// the reference output.
type pieceCase struct {
	dst, src, dstBuf []byte
	guard, want      []byte
	ctr              [16]byte
}

// newPieceCase prepares a piece of n bytes: nil source (bare keystream)
// when keystream, else in place or into a separate buffer, at the given
// misalignment, with a counter block close to the inc32 wrap when wrap.
func newPieceCase(r *rand.ChaCha8, rk []byte, rounds, n, off int, keystream, inPlace, wrap bool) *pieceCase {
	c := &pieceCase{}
	copy(c.ctr[:], randBytes(r, 16))
	if wrap {
		binary.BigEndian.PutUint32(c.ctr[12:], 0xffffffff-uint32(n%5))
	}
	if keystream {
		c.dstBuf = randBytes(r, n+off+64)
		c.dst = c.dstBuf[off : off+n]
	} else {
		c.dst, c.src, _, c.dstBuf = buffers(r, n, off, (off+5)%16, inPlace)
	}
	c.guard = bytes.Clone(c.dstBuf[len(c.dstBuf)-64:])
	c.want = make([]byte, n)
	src := c.src
	if keystream {
		src = make([]byte, n)
	}
	ctr := c.ctr
	refCTR(rk, rounds, &ctr, c.want, src)
	return c
}

func (c *pieceCase) piece() Piece {
	p := Piece{Ctr: c.ctr, N: len(c.dst)}
	if len(c.dst) > 0 {
		p.Dst = &c.dst[0]
		if c.src != nil {
			p.Src = &c.src[0]
		}
	}
	return p
}

func (c *pieceCase) check(t *testing.T, what string, i int) {
	t.Helper()
	if !bytes.Equal(c.dst, c.want) {
		t.Fatalf("%s: piece %d (%d bytes): keystream differs from the reference", what, i, len(c.dst))
	}
	if !bytes.Equal(c.dstBuf[len(c.dstBuf)-64:], c.guard) {
		t.Fatalf("%s: piece %d (%d bytes): wrote past its output", what, i, len(c.dst))
	}
}

// runPieces runs lens as one XORPieces call and checks every piece.
func runPieces(t *testing.T, r *rand.ChaCha8, tier Tier, s *Schedule, rk []byte, rounds int, lens []int, what string) {
	t.Helper()
	cs := make([]*pieceCase, len(lens))
	ps := make([]Piece, len(lens))
	for i, n := range lens {
		k := r.Uint64()
		cs[i] = newPieceCase(r, rk, rounds, n, int(k%16), k>>8%5 == 0, k>>16%2 == 0, k>>24%7 == 0)
		ps[i] = cs[i].piece()
	}
	saved := bytes.Clone(unsafeBytes(ps))
	XORPieces(tier, s, ps)
	if !bytes.Equal(unsafeBytes(ps), saved) {
		t.Fatalf("%s: XORPieces modified the descriptors", what)
	}
	for i, c := range cs {
		c.check(t, what, i)
	}
}

func TestXORPiecesAgainstReference(t *testing.T) {
	r := rand.NewChaCha8([32]byte{7})
	forEachTier(t, func(t *testing.T, tier Tier) {
		for _, v := range variants[:2] {
			s, rk, rounds := newSchedule(r, v.keyLen, 16)
			t.Run(v.name[len("uBlock-"):], func(t *testing.T) {
				// One piece of every length the call takes.
				for n := 0; n <= MaxPieceBlocks*16; n++ {
					runPieces(t, r, tier, s, rk, rounds, []int{n}, "single")
				}
				// A tag mask and a text of every length (GCM's shape).
				for n := 0; n <= (MaxPieceBlocks-1)*16; n++ {
					runPieces(t, r, tier, s, rk, rounds, []int{16, n}, "mask+text")
				}
				// Random mixes of 1..128 pieces up to MaxPieceBlocks.
				for iter := 0; iter < 3000; iter++ {
					var lens []int
					blocks := 0
					count := 1 + int(r.Uint64()%128)
					for len(lens) < count {
						var n int
						switch r.Uint64() % 4 {
						case 0:
							n = 16
						case 1:
							n = int(r.Uint64() % 48)
						case 2:
							n = int(r.Uint64() % 300)
						default:
							n = int(r.Uint64() % (MaxPieceBlocks*16 + 1))
						}
						if blocks+PieceBlocks(n) > MaxPieceBlocks {
							break
						}
						blocks += PieceBlocks(n)
						lens = append(lens, n)
					}
					runPieces(t, r, tier, s, rk, rounds, lens, "mixed")
				}
			})
		}
	})
}

// TestXORPiecesFull fills the call exactly: MaxPieceBlocks one-block
// pieces, and pieces that end in partial blocks adding up to the limit.
func TestXORPiecesFull(t *testing.T) {
	r := rand.NewChaCha8([32]byte{8})
	forEachTier(t, func(t *testing.T, tier Tier) {
		s, rk, rounds := newSchedule(r, 16, 16)
		runPieces(t, r, tier, s, rk, rounds, repeatInt(16, MaxPieceBlocks), "one-block pieces")
		runPieces(t, r, tier, s, rk, rounds, repeatInt(1, MaxPieceBlocks), "one-byte pieces")
		runPieces(t, r, tier, s, rk, rounds, repeatInt(16*MaxPieceBlocks/8-3, 8), "eight partial")
		runPieces(t, r, tier, s, rk, rounds, []int{0, 16 * MaxPieceBlocks, 0}, "empty around full")
	})
}

func TestXORPiecesPanics(t *testing.T) {
	tier, ok := Best()
	if !ok {
		t.Skip("no kernel tier on this CPU")
	}
	r := rand.NewChaCha8([32]byte{10})
	s, _, _ := newSchedule(r, 16, 16)
	wide, _, _ := newSchedule(r, 32, 32)
	buf := make([]byte, 16*(MaxPieceBlocks+1))
	for name, f := range map[string]func(){
		"too many blocks": func() {
			XORPieces(tier, s, []Piece{{Dst: &buf[0], N: 16 * MaxPieceBlocks}, {Dst: &buf[0], N: 1}})
		},
		"negative":    func() { XORPieces(tier, s, []Piece{{Dst: &buf[0], N: -1}}) },
		"nil dst":     func() { XORPieces(tier, s, []Piece{{N: 16}}) },
		"wide block":  func() { XORPieces(tier, wide, []Piece{{Dst: &buf[0], N: 16}}) },
		"no schedule": func() { XORPieces(tier, new(Schedule), []Piece{{Dst: &buf[0], N: 16}}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
	// Empty calls are no-ops.
	XORPieces(tier, s, nil)
	XORPieces(tier, s, []Piece{{N: 0}})
}

func FuzzXORPieces(f *testing.F) {
	f.Add(make([]byte, 16), make([]byte, 16), []byte{16, 0, 1, 200}, uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0xff}, 16), []byte{255, 255, 3}, uint8(1))
	f.Fuzz(func(t *testing.T, key, iv, shape []byte, flags uint8) {
		if len(key) < 32 || len(iv) < 16 || len(shape) > 256 {
			return
		}
		keyLen := 16 + 16*int(flags&1)
		rk, rounds := refKeySchedule(key[:keyLen], 16)
		s := new(Schedule)
		s.Init(rk, 16, rounds)
		var seed [32]byte
		copy(seed[:], iv)
		r := rand.NewChaCha8(seed)
		var lens []int
		blocks := 0
		for i, b := range shape {
			n := int(b)
			if i%3 == 2 {
				n *= 8
			}
			if blocks+PieceBlocks(n) > MaxPieceBlocks {
				break
			}
			blocks += PieceBlocks(n)
			lens = append(lens, n)
		}
		for _, tier := range AllTiers {
			if tier.Supported() {
				runPieces(t, r, tier, s, rk, rounds, lens, tier.String())
			}
		}
	})
}

func TestXORPiecesNoAllocs(t *testing.T) {
	r := rand.NewChaCha8([32]byte{11})
	forEachTier(t, func(t *testing.T, tier Tier) {
		s, _, _ := newSchedule(r, 16, 16)
		buf := make([]byte, 1420)
		var tag [16]byte
		ps := []Piece{{Dst: &tag[0], N: 16}, {Dst: &buf[0], Src: &buf[0], N: 1420}}
		if a := testing.AllocsPerRun(20, func() { XORPieces(tier, s, ps) }); a != 0 {
			t.Fatalf("%v allocations per run", a)
		}
	})
}

// unsafeBytes views the descriptors' memory, to check the kernel leaves
// them as they were.
func unsafeBytes(ps []Piece) []byte {
	if len(ps) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&ps[0])), len(ps)*int(unsafe.Sizeof(Piece{})))
}
