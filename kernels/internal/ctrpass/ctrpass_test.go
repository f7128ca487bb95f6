package ctrpass

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"testing"
	"unsafe"
)

func fill(r *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

func unsafeBytes(p *byte, n int) []byte { return unsafe.Slice(p, n) }

// toyBlock is the test's block "cipher": a block's keystream is the first
// 16 bytes of its SHA-256, so a block in the wrong place, a wrong counter
// or a missing carry all change the output.
func toyBlock(b []byte) {
	h := sha256.Sum256(b[:BlockSize])
	copy(b, h[:BlockSize])
}

func toyECB(buf []byte) {
	for i := 0; i < len(buf); i += BlockSize {
		toyBlock(buf[i : i+BlockSize])
	}
}

// applyPiece applies a piece handed out by Rest through the reference, as
// a packed kernel would.
func applyPiece(p Piece) {
	tmp := make([]byte, p.N)
	var src []byte
	if p.Src != nil {
		src = unsafeBytes(p.Src, p.N)
	}
	refApply(p, tmp, src)
	copy(unsafeBytes(p.Dst, p.N), tmp)
}

// refApply is the plain per-piece CTR of a piece: inc32 counter blocks,
// each encrypted alone.
func refApply(p Piece, dst, src []byte) {
	ctr := p.Ctr
	for off := 0; off < p.N; off += BlockSize {
		ks := ctr
		toyBlock(ks[:])
		n := min(BlockSize, p.N-off)
		for i := range n {
			if src == nil {
				dst[off+i] = ks[i]
			} else {
				dst[off+i] = src[off+i] ^ ks[i]
			}
		}
		Inc32(&ctr, 1)
	}
}

type testPiece struct {
	p        Piece
	src, dst []byte // dst is where the piece writes; src nil: keystream
	want     []byte
}

func randomPieces(r *rand.Rand, n int) []testPiece {
	tps := make([]testPiece, n)
	for i := range tps {
		tp := &tps[i]
		length := r.IntN(700)
		switch r.IntN(8) {
		case 0:
			length = 0
		case 1:
			length = BlockSize
		}
		fill(r, tp.p.Ctr[:])
		if r.IntN(4) == 0 {
			tp.p.Ctr[12], tp.p.Ctr[13], tp.p.Ctr[14] = 0xff, 0xff, 0xff // the 32-bit counter wraps inside the piece
		}
		tp.p.N = length
		// dst at a random offset of a larger buffer, to catch writes past N.
		back := make([]byte, length+40)
		fill(r, back)
		off := r.IntN(20)
		tp.dst = back[off : off+length]
		tp.want = bytes.Clone(back)
		if r.IntN(5) > 0 {
			if r.IntN(2) == 0 {
				tp.src = tp.dst // in place
			} else {
				tp.src = make([]byte, length)
				fill(r, tp.src)
			}
		}
		refApply(tp.p, tp.want[off:off+length], func() []byte {
			if tp.src == nil {
				return nil
			}
			if len(tp.src) > 0 && &tp.src[0] == &tp.dst[0] {
				return bytes.Clone(tp.dst)
			}
			return tp.src
		}())
		if length > 0 {
			tp.p.Dst = &tp.dst[0]
			if tp.src != nil {
				tp.p.Src = &tp.src[0]
			}
		}
		tp.want = tp.want[off : off+length]
	}
	return tps
}

// TestWalker checks a Walker (driven as the kernel packages drive it) against the per-piece reference for random pieces
// (empty, one block, partial last blocks, counter wraps, in place and
// out of place, keystream only) over several pass sizes, with and without
// a tail, and that the tail receives exactly the rest in bounded calls.
func TestWalker(t *testing.T) {
	r := rand.New(rand.NewChaCha8([32]byte{1}))
	for iter := range 300 {
		passBlocks := []int{1, 2, 7, 32, 64, 512}[iter%6]
		tps := randomPieces(r, 1+r.IntN(40))
		ps := make([]Piece, len(tps))
		for i := range tps {
			ps[i] = tps[i].p
		}
		orig := bytes.Clone(ps[0].Ctr[:])
		buf := make([]byte, passBlocks*BlockSize)
		passes := 0
		encrypt := func(b []byte) {
			if len(b) != len(buf) {
				t.Fatalf("pass of %d bytes, want %d", len(b), len(buf))
			}
			passes++
			toyECB(b)
		}
		tailBlocks, tailMax := 0, 0
		var tail func([]Piece)
		tailSeen := 0
		scratch := make([]Piece, 1+r.IntN(5))
		if iter%2 == 1 {
			tailBlocks = 1 + r.IntN(passBlocks)
			tailMax = 1 + r.IntN(20)
			tail = func(q []Piece) {
				if len(q) > len(scratch) {
					t.Fatalf("tail call with %d pieces, scratch %d", len(q), len(scratch))
				}
				nb := 0
				for _, p := range q {
					nb += Blocks(p.N)
					applyPiece(p)
				}
				if nb > tailMax {
					t.Fatalf("tail call with %d blocks, max %d", nb, tailMax)
				}
				tailSeen += nb
			}
		}
		total := 0
		for _, p := range ps {
			total += Blocks(p.N)
		}
		run(ps, buf, encrypt, tailBlocks, tail, tailMax, scratch)
		for i := range tps {
			if !bytes.Equal(tps[i].dst, tps[i].want) {
				t.Fatalf("iter %d (pass %d, tail %d): piece %d of %d (N=%d) wrong", iter, passBlocks, tailBlocks, i, len(tps), tps[i].p.N)
			}
		}
		if !bytes.Equal(ps[0].Ctr[:], orig) {
			t.Fatalf("Run advanced a piece's counter")
		}
		if want := Passes(total, passBlocks, tailBlocks); passes != want {
			t.Fatalf("iter %d: %d passes, want %d", iter, passes, want)
		}
		if rest := total - passes*passBlocks; tail != nil && max(rest, 0) != tailSeen {
			t.Fatalf("iter %d: tail got %d blocks, want %d", iter, tailSeen, max(rest, 0))
		}
	}
}

func TestPasses(t *testing.T) {
	for _, c := range []struct{ total, pass, tail, want int }{
		{0, 512, 0, 0}, {1, 512, 0, 1}, {512, 512, 0, 1}, {513, 512, 0, 2},
		{513, 512, 2, 1}, {514, 512, 2, 2}, {1023, 512, 384, 2}, {895, 512, 384, 1}, {896, 512, 384, 2},
	} {
		if got := Passes(c.total, c.pass, c.tail); got != c.want {
			t.Errorf("Passes(%d, %d, %d) = %d, want %d", c.total, c.pass, c.tail, got, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	var b [20]byte
	if got := Check([]Piece{{N: 0}, {Dst: &b[0], N: 17}}, "x"); got != 2 {
		t.Fatalf("Check = %d, want 2", got)
	}
	for _, bad := range [][]Piece{{{N: -1}}, {{N: 1}}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Check(%v) did not panic", bad)
				}
			}()
			Check(bad, "x")
		}()
	}
}

// run drives a Walker the way the kernel packages do, and checks that
// it zeroes what it must: the pieces' counters stay as they were.
func run(ps []Piece, buf []byte, encrypt func([]byte), tailBlocks int, tail func([]Piece), tailMax int, scratch []Piece) {
	total := Check(ps, "test")
	w := NewWalker(ps, total, len(buf)/BlockSize, tailBlocks)
	if tail == nil {
		w = NewWalker(ps, total, len(buf)/BlockSize, 0)
	}
	for w.Fill(buf) {
		encrypt(buf)
		w.Apply(buf)
	}
	clear(buf)
	for q := w.Rest(scratch, tailMax); q != nil; q = w.Rest(scratch, tailMax) {
		tail(q)
	}
	clear(scratch)
}

// TestNewRest checks that a rest-only walker hands every block to Rest in
// bounded calls.
func TestNewRest(t *testing.T) {
	r := rand.New(rand.NewChaCha8([32]byte{5}))
	for range 50 {
		tps := randomPieces(r, 1+r.IntN(30))
		ps := make([]Piece, len(tps))
		total := 0
		for i := range tps {
			ps[i] = tps[i].p
			total += Blocks(ps[i].N)
		}
		scratch := make([]Piece, 1+r.IntN(6))
		maxBlocks := 1 + r.IntN(40)
		w := NewRest(ps)
		if w.Fill(make([]byte, BlockSize)) {
			t.Fatal("a rest-only walker filled a pass")
		}
		seen := 0
		for q := w.Rest(scratch, maxBlocks); q != nil; q = w.Rest(scratch, maxBlocks) {
			nb := 0
			for _, p := range q {
				nb += Blocks(p.N)
				applyPiece(p)
			}
			if nb > maxBlocks || len(q) > len(scratch) {
				t.Fatalf("a Rest call of %d blocks, %d pieces (max %d, %d)", nb, len(q), maxBlocks, len(scratch))
			}
			seen += nb
		}
		if seen != total {
			t.Fatalf("Rest gave %d blocks, want %d", seen, total)
		}
		for i := range tps {
			if !bytes.Equal(tps[i].dst, tps[i].want) {
				t.Fatalf("piece %d wrong", i)
			}
		}
	}
}
