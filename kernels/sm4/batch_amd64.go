//go:build amd64 && gc && !purego

package sm4

import (
	"unsafe"

	"github.com/gmtun/gmtun/kernels/internal/ctrpass"
)

// PassBlocks is the number of blocks tier t handles in one full pass (all
// its register sets interleaved): calls whose block count is a multiple
// of it keep the kernel's pipeline full.
func (t Tier) PassBlocks() int {
	switch t {
	case AVX512GFNI:
		return 64
	case AVX512AESNI:
		return 96 // six sets of 16 (see kernels/_gen/sm4, zmm_aesni.go)
	}
	return 32 // four sets of 8 (see kernels/_gen/sm4, slotSet)
}

// Piece is one run of a gathered pass (XORPieces): the
// keystream of the counter blocks Ctr, inc32(Ctr), … XORed with Src into
// Dst for N bytes (the last block may be partial: only its first bytes
// are used). A nil Src writes the keystream itself. The assembly reads
// its layout (ctrpass.Piece: 40 bytes, Ctr at 0, Dst at 16, Src at 24, N
// at 32).
type Piece = ctrpass.Piece

// MaxPieceBlocks is the most blocks one XORPieces call takes: the
// kernels' counter-block buffer (kernels/_gen/internal/ctrpieces
// MaxBlocks), two full passes of AVX512GFNI (which runs more than 64 as
// one pass of two interleaved sets).
const MaxPieceBlocks = 128

// PieceBlocks returns the blocks a piece of n bytes uses.
func PieceBlocks(n int) int { return ctrpass.Blocks(n) }

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
			panic("sm4: bad piece")
		}
		nblocks += PieceBlocks(n)
	}
	if nblocks > MaxPieceBlocks {
		panic("sm4: pieces exceed MaxPieceBlocks")
	}
	if nblocks == 0 {
		return
	}
	t.check()
	pp := (*byte)(unsafe.Pointer(&ps[0]))
	switch t.forBlocks(nblocks) {
	case AVX512GFNI:
		xorPiecesAVX512GFNI(rk, pp, len(ps), nblocks)
	case AVX2GFNI:
		xorPiecesAVX2GFNI(rk, pp, len(ps), nblocks)
	case AVX2VAES:
		xorPiecesAVX2VAES(rk, pp, len(ps), nblocks)
	case AVX512AESNI:
		xorPiecesAVX512AESNI(rk, pp, len(ps), nblocks)
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
		panic("sm4: pair runs shorter than PairBlocks")
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
