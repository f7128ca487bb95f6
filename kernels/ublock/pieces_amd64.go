//go:build amd64 && gc && !purego

package ublock

import (
	"unsafe"

	"github.com/gmtun/gmtun/kernels/internal/ctrpass"
)

// Piece is one run of a gathered pass (XORPieces): the keystream of the
// counter blocks Ctr, inc32(Ctr), … XORed with Src into Dst for N bytes
// (the last block may be partial: only its first bytes are used). A nil
// Src writes the keystream itself (a GCM tag mask E_K(J0)). The assembly
// reads its layout (ctrpass.Piece: 40 bytes, Ctr at 0, Dst at 16, Src at
// 24, N at 32).
type Piece = ctrpass.Piece

// MaxPieceBlocks is the most blocks one XORPieces call takes (the
// kernel's stack buffer of counter blocks): 8 full passes of AVX2, 4 of
// the ZMM tiers.
const MaxPieceBlocks = 128

// PieceBlocks returns the blocks a piece of n bytes uses.
func PieceBlocks(n int) int { return ctrpass.Blocks(n) }

// PassBlocks is the number of 16-byte blocks of one full kernel pass of
// tier t (four register pairs): the unit in which calls run at full
// throughput.
func (t Tier) PassBlocks() int { return passPairs * t.PairBlocks(16) }

// XORPieces applies every piece of ps, whose blocks (PieceBlocks of each
// N) add up to at most MaxPieceBlocks, under schedule s (16-byte blocks)
// in one kernel call: it builds the counter blocks of all pieces, encrypts
// them in full passes across the pieces (only the last pass may be
// partial) and XORs the keystream into place, so that neither counter
// blocks nor keystream go back through Go; the kernel's buffer is zeroed
// before it returns. Pieces must not overlap each other; within a piece
// Dst and Src must be equal or not overlap. Dst and Src must be valid for
// N bytes (Src may be nil). The counters in ps are not advanced.
func XORPieces(t Tier, s *Schedule, ps []Piece) {
	s.valid()
	if s.blockSize != 16 {
		panic("ublock: counter mode needs the 128-bit block")
	}
	nblocks := 0
	for i := range ps {
		n := ps[i].N
		if n < 0 || n > MaxPieceBlocks*16 || (n > 0 && ps[i].Dst == nil) {
			panic("ublock: bad piece")
		}
		nblocks += PieceBlocks(n)
	}
	if nblocks > MaxPieceBlocks {
		panic("ublock: pieces exceed MaxPieceBlocks")
	}
	if nblocks == 0 {
		return
	}
	t.check()
	pp := (*byte)(unsafe.Pointer(&ps[0]))
	switch t {
	case AVX512VBMI:
		xorPieces128AVX512VBMI(&s.rk[0], s.rounds, pp, len(ps), nblocks)
	case AVX512:
		xorPieces128AVX512(&s.rk[0], s.rounds, pp, len(ps), nblocks)
	default:
		xorPieces128AVX2(&s.rk[0], s.rounds, pp, len(ps), nblocks)
	}
}
