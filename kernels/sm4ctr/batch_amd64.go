//go:build amd64 && gc && !purego

package sm4ctr

import (
	"crypto/subtle"
	"encoding/binary"
	"unsafe"
)

// Segment is one packet's part of a batched keystream XOR: the whole-block
// prefix of Src is XORed with the keystream that starts at *Counter and
// written to Dst, and *Counter is advanced past the blocks used, exactly
// as XORKeyStream does for one buffer.
type Segment struct {
	Counter  *[16]byte
	Dst, Src []byte
}

// maxPassBlocks is the largest full pass of any tier (AVX512GFNI: one
// byte-sliced set of 64 blocks).
const maxPassBlocks = 64

// PassBlocks is the number of blocks tier t handles in one full pass
// (Width blocks per register set, all sets interleaved): calls whose
// block count is a multiple of it keep the kernel's pipeline full.
func (t Tier) PassBlocks() int {
	if t == AVX512GFNI {
		return 64
	}
	return 32 // four sets of 8 (see kernels/_gen/sm4ctr, slotSet)
}

// XORKeyStreamBatch applies XORKeyStream to every segment under one key
// while keeping the kernel's pipeline full across segment boundaries: the
// full passes of each segment run straight through the CTR kernel, and the
// leftover blocks of all segments (fewer than a pass each) are gathered as
// counter blocks, encrypted together in full passes and XORed into place.
// Segments must not overlap each other; within a segment Dst and Src must
// be equal or not overlap.
func XORKeyStreamBatch(t Tier, rk *[32]uint32, segs []Segment) {
	t.check()
	pass := t.PassBlocks()
	var g gather
	for i := range segs {
		s := &segs[i]
		n := len(s.Src) / BlockSize
		if len(s.Dst) < n*BlockSize {
			panic("sm4ctr: output smaller than input")
		}
		direct := n - n%pass
		if direct > 0 {
			xorKeyStream(t, rk, s.Counter, &s.Dst[0], &s.Src[0], direct)
			inc32(s.Counter, direct)
		}
		for done := direct; done < n; {
			k := min(n-done, pass-g.blocks)
			g.add(s.Counter, s.Dst[done*BlockSize:(done+k)*BlockSize], s.Src[done*BlockSize:(done+k)*BlockSize])
			done += k
			if g.blocks == pass {
				g.flush(t, rk)
			}
		}
	}
	g.flush(t, rk)
}

// gather collects counter blocks of several segments for one ECB pass.
type gather struct {
	ks       [maxPassBlocks * BlockSize]byte // counter blocks, then keystream
	dst, src [maxPassBlocks][]byte           // pieces to XOR, in ks order
	pieces   int
	blocks   int
}

// add queues len(src)/16 counter blocks starting at *ctr and advances ctr.
func (g *gather) add(ctr *[16]byte, dst, src []byte) {
	n := len(src) / BlockSize
	c := binary.BigEndian.Uint32(ctr[12:])
	ks := g.ks[g.blocks*BlockSize : (g.blocks+n)*BlockSize]
	for i := 0; i < len(ks); i += BlockSize {
		b := (*[BlockSize]byte)(ks[i:])
		copy(b[:12], ctr[:12])
		binary.BigEndian.PutUint32(b[12:], c)
		c++
	}
	binary.BigEndian.PutUint32(ctr[12:], c)
	g.blocks += n
	g.dst[g.pieces], g.src[g.pieces] = dst, src
	g.pieces++
}

// flush encrypts the queued counter blocks and XORs the keystream into the
// queued pieces.
func (g *gather) flush(t Tier, rk *[32]uint32) {
	if g.blocks == 0 {
		return
	}
	ks := g.ks[:g.blocks*BlockSize]
	EncryptBlocks(t, rk, ks, ks)
	off := 0
	for i := 0; i < g.pieces; i++ {
		off += subtle.XORBytes(g.dst[i], g.src[i], ks[off:])
		g.dst[i], g.src[i] = nil, nil
	}
	g.pieces, g.blocks = 0, 0
}

// Piece is one run of a gathered pass (XORPieces): the keystream of the
// counter blocks Ctr, inc32(Ctr), … XORed with Src into Dst for N bytes
// (the last block may be partial: only its first bytes are used). A nil
// Src writes the keystream itself. The layout is read by the assembly.
type Piece struct {
	Ctr      [16]byte
	Dst, Src *byte
	N        int
}

// The assembly reads Piece as 40 bytes: Ctr at 0, Dst at 16, Src at 24,
// N at 32.
var _ [40 - unsafe.Sizeof(Piece{})]struct{}
var _ [unsafe.Sizeof(Piece{}) - 40]struct{}

// MaxPieceBlocks is the most blocks one XORPieces call takes: two full
// passes of the widest tier (AVX512GFNI runs more than 64 as one pass of
// two interleaved sets).
const MaxPieceBlocks = 2 * maxPassBlocks

// PieceBlocks returns the blocks a piece of n bytes uses.
func PieceBlocks(n int) int { return (n + BlockSize - 1) / BlockSize }

// XORPieces applies every piece of ps, whose blocks (PieceBlocks of each
// N) add up to at most MaxPieceBlocks, in one kernel call that builds the
// counter blocks, encrypts them (on AVX512GFNI one pass, or one pass of
// two interleaved sets for more than 64 blocks; full passes of the tier
// otherwise) and XORs the keystream into place, so that neither counter
// blocks nor keystream go back through Go. Pieces must not overlap each
// other; within a piece Dst and Src must be equal or not overlap. Dst and
// Src must be valid for N bytes (Src may be nil: the keystream itself).
func XORPieces(t Tier, rk *[32]uint32, ps []Piece) {
	nblocks := 0
	for i := range ps {
		n := ps[i].N
		if n < 0 || n > MaxPieceBlocks*BlockSize || (n > 0 && ps[i].Dst == nil) {
			panic("sm4ctr: bad piece")
		}
		nblocks += PieceBlocks(n)
	}
	if nblocks > MaxPieceBlocks {
		panic("sm4ctr: pieces exceed MaxPieceBlocks")
	}
	if nblocks == 0 {
		return
	}
	t.check()
	pp := (*byte)(unsafe.Pointer(&ps[0]))
	switch t {
	case AVX512GFNI:
		xorPiecesAVX512GFNI(rk, pp, len(ps), nblocks)
	case AVX2GFNI:
		xorPiecesAVX2GFNI(rk, pp, len(ps), nblocks)
	case AVX2VAES:
		xorPiecesAVX2VAES(rk, pp, len(ps), nblocks)
	case AVX2AESNI:
		xorPiecesAVX2AESNI(rk, pp, len(ps), nblocks)
	}
}

// PairBlocks is the number of blocks of each run of XORKeyStreamPair.
const PairBlocks = 64

// XORKeyStreamPair is XORKeyStream on two independent runs of exactly
// PairBlocks blocks each (the first PairBlocks·BlockSize bytes of srcA and
// srcB), with their own counters, both advanced. On AVX512GFNI the two
// runs share one kernel pass of two interleaved sets, which costs less
// than two passes; other tiers run them one after the other. dstA/srcA
// and dstB/srcB must each be equal or not overlap, and the two runs must
// not overlap each other.
func XORKeyStreamPair(t Tier, rk *[32]uint32, ctrA *[16]byte, dstA, srcA []byte, ctrB *[16]byte, dstB, srcB []byte) {
	const n = PairBlocks * BlockSize
	if len(srcA) < n || len(dstA) < n || len(srcB) < n || len(dstB) < n {
		panic("sm4ctr: pair runs shorter than PairBlocks")
	}
	t.check()
	if t != AVX512GFNI {
		XORKeyStream(t, rk, ctrA, dstA[:n], srcA[:n])
		XORKeyStream(t, rk, ctrB, dstB[:n], srcB[:n])
		return
	}
	xorKeyStream2AVX512GFNI(rk, ctrA, &dstA[0], &srcA[0], ctrB, &dstB[0], &srcB[0])
	inc32(ctrA, PairBlocks)
	inc32(ctrB, PairBlocks)
}
