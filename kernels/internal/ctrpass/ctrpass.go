// Package ctrpass holds what the gathered CTR kernels of kernels/sm4 and
// kernels/ublock share on the Go side: Piece, the run descriptor their
// XORPieces assembly reads (both packages alias it), and the inc32
// counter step (NIST SP 800-38D §6.2).
package ctrpass

import (
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
