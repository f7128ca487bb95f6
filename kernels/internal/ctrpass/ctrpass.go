// Package ctrpass runs gathered CTR pieces through a wide ECB kernel in
// whole passes: the Go side of the bitsliced kernels (kernels/sm4's
// AVX-512 bitsliced SM4, kernels/ublock's bitsliced uBlock-128), which
// encrypt hundreds of blocks per call and so only pay off when the counter
// blocks of many packets share a pass.
//
//	pieces (counter block, dst, src, n) of a whole batch
//	  → Walker.Fill: counter blocks built into a pass buffer, across
//	    piece boundaries
//	  → the caller's kernel: one pass, in place
//	  → Walker.Apply: keystream XORed into each piece's dst (or copied,
//	    src nil)
//	  → Walker.Rest: a short final rest as pieces for the caller's packed
//	    kernel instead of a padded pass
//
// Piece is also the layout the packed kernels' gathered calls read
// (sm4.XORPieces, ublock.XORPieces): both packages alias it.
//
// Nothing here depends on secret data: the walk follows the pieces'
// public lengths. The caller zeroes its pass buffer (counter blocks,
// then keystream) and scratch pieces when done.
package ctrpass

import (
	"crypto/subtle"
	"encoding/binary"
	"unsafe"
)

// BlockSize is the block size of the counter mode (SM4, uBlock-128).
const BlockSize = 16

// Piece is one run of counter blocks: the keystream of the counter blocks
// Ctr, inc32(Ctr), … (NIST SP 800-38D §6.2 inc32) XORed with Src into Dst
// for N bytes (the last block may be partial: only its first bytes are
// used). A nil Src writes the keystream itself (a GCM tag mask E_K(J0)).
// The assembly of the packed kernels reads it as 40 bytes: Ctr at 0, Dst
// at 16, Src at 24, N at 32.
type Piece struct {
	Ctr      [16]byte
	Dst, Src *byte
	N        int
}

var (
	_ [40 - unsafe.Sizeof(Piece{})]struct{}
	_ [unsafe.Sizeof(Piece{}) - 40]struct{}
)

// Blocks returns the blocks a piece of n bytes uses.
func Blocks(n int) int { return (n + BlockSize - 1) / BlockSize }

// Inc32 adds n to the last 32-bit big-endian word of ctr modulo 2^32.
func Inc32(ctr *[16]byte, n int) {
	binary.BigEndian.PutUint32(ctr[12:], binary.BigEndian.Uint32(ctr[12:])+uint32(n))
}

// Check panics unless every piece has N ≥ 0 and a Dst when N > 0, and
// returns the blocks of all pieces.
func Check(ps []Piece, pkg string) int {
	total := 0
	for i := range ps {
		if ps[i].N < 0 || ps[i].N > 0 && ps[i].Dst == nil {
			panic(pkg + ": bad piece")
		}
		total += Blocks(ps[i].N)
	}
	return total
}

// Passes returns how many passes of passBlocks a Walker fills over total
// blocks: every whole pass, and one padded pass for a rest of at least
// tailBlocks blocks (a smaller rest goes to the tail).
func Passes(total, passBlocks, tailBlocks int) int {
	n := total / passBlocks
	if rest := total % passBlocks; rest > 0 && rest >= tailBlocks {
		n++
	}
	return n
}

// Walker runs pieces through a wide ECB kernel in whole passes, driven
// by its caller (no callbacks, so nothing the caller hands it escapes):
//
//	w := ctrpass.NewWalker(ps, passBlocks, tailBlocks)
//	for w.Fill(buf) { encrypt(buf); w.Apply(buf) } // buf: passBlocks blocks
//	clear(buf)
//	for q := w.Rest(scratch, max); q != nil; q = w.Rest(scratch, max) { packed(q) }
//	clear(scratch)
//
// Fill builds the counter blocks of the next pass into buf across piece
// boundaries (a piece may span passes; zero padding after the last);
// Apply XORs the keystream the caller made of them into place (or copies
// it, for a nil Src). Only whole passes and a final partial pass of at
// least tailBlocks blocks are filled (Passes); the blocks after them come
// out of Rest as pieces (counter blocks advanced, pointers offset) of at
// most max blocks and len(scratch) pieces, for a packed kernel. Pieces
// must not overlap each other; within a piece Dst and Src must be equal
// or not overlap. The counters in ps are not advanced.
type Walker struct {
	ps         []Piece
	passBlocks int
	passes     int // passes left to fill
	xi, xo     int // position: piece xi from byte xo on
	filled     int // blocks in the pass filled last, not yet applied
}

// NewRest returns a Walker that fills no pass: every piece comes out of
// Rest (a batch of any size for a packed kernel's bounded calls).
func NewRest(ps []Piece) Walker { return Walker{ps: ps} }

// NewWalker returns a Walker over ps, whose blocks add up to total (as
// Check returns), with passes of passBlocks blocks; a final rest of fewer
// than tailBlocks blocks is left to Rest (tailBlocks 0: every rest is
// padded to a pass).
func NewWalker(ps []Piece, total, passBlocks, tailBlocks int) Walker {
	return Walker{ps: ps, passBlocks: passBlocks, passes: Passes(total, passBlocks, tailBlocks)}
}

// Fill builds the counter blocks of the next pass into buf
// (passBlocks·BlockSize bytes) and reports whether there was one.
func (w *Walker) Fill(buf []byte) bool {
	if w.passes == 0 {
		return false
	}
	w.passes--
	blocks := unsafe.Slice((*[BlockSize]byte)(unsafe.Pointer(unsafe.SliceData(buf[:w.passBlocks*BlockSize]))), w.passBlocks)
	nb := 0
	for xi, xo := w.xi, w.xo; nb < w.passBlocks && xi < len(w.ps); xi, xo = xi+1, 0 {
		p := &w.ps[xi]
		c := binary.BigEndian.Uint32(p.Ctr[12:]) + uint32(xo/BlockSize)
		take := min(Blocks(p.N-xo), w.passBlocks-nb)
		for i := range blocks[nb : nb+take] {
			blk := &blocks[nb+i]
			*blk = p.Ctr
			binary.BigEndian.PutUint32(blk[12:], c)
			c++
		}
		nb += take
	}
	clear(buf[nb*BlockSize:])
	w.filled = nb
	return true
}

// Apply XORs the keystream in buf (the encrypted counter blocks of the
// last Fill) into the pieces and advances past them.
func (w *Walker) Apply(buf []byte) {
	nb := w.filled
	w.filled = 0
	for at := 0; at < nb*BlockSize; {
		p := &w.ps[w.xi]
		if w.xo >= p.N {
			w.xi, w.xo = w.xi+1, 0
			continue
		}
		n := min(p.N-w.xo, nb*BlockSize-at)
		ks := buf[at : at+n]
		d := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(p.Dst), w.xo)), n)
		if p.Src == nil {
			copy(d, ks)
		} else {
			subtle.XORBytes(d, unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(p.Src), w.xo)), n), ks)
		}
		at += Blocks(n) * BlockSize
		w.xo += n
	}
	for w.xi < len(w.ps) && w.xo >= w.ps[w.xi].N {
		w.xi, w.xo = w.xi+1, 0
	}
}

// Rest returns the next pieces after the filled passes, at most maxBlocks
// blocks and len(scratch) pieces, written into scratch (a piece longer
// than that is split at a block boundary); nil when none is left. Call it
// once every pass has been filled and applied.
func (w *Walker) Rest(scratch []Piece, maxBlocks int) []Piece {
	np, nb := 0, 0
	for w.xi < len(w.ps) && np < len(scratch) && nb < maxBlocks {
		p := &w.ps[w.xi]
		if w.xo >= p.N {
			w.xi, w.xo = w.xi+1, 0
			continue
		}
		take := min(Blocks(p.N-w.xo), maxBlocks-nb)
		n := min(take*BlockSize, p.N-w.xo)
		q := &scratch[np]
		q.Ctr = p.Ctr
		Inc32(&q.Ctr, w.xo/BlockSize)
		q.Dst, q.Src, q.N = (*byte)(unsafe.Add(unsafe.Pointer(p.Dst), w.xo)), nil, n
		if p.Src != nil {
			q.Src = (*byte)(unsafe.Add(unsafe.Pointer(p.Src), w.xo))
		}
		np++
		nb += take
		w.xo += n
	}
	if np == 0 {
		return nil
	}
	return scratch[:np]
}
