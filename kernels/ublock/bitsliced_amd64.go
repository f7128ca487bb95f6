//go:build amd64 && gc && !purego

package ublock

import (
	"unsafe"

	"github.com/gmtun/gmtun/kernels/cpu"
	"github.com/gmtun/gmtun/kernels/internal/ctrpass"
)

// The bitsliced form of uBlock-128 (16-byte blocks, 16 or 24 rounds) on
// ZMM registers (kernels/_gen/ublock bitsliced.go): 512 blocks per pass,
// one 64-byte bit plane per state bit, the S-box four VPTERNLOGD per
// nibble, the word rotations and PL/PR plane renaming. A call costs whole
// passes: shorter inputs are padded to one.

// BitslicedBlocks is the number of 16-byte blocks of one bitsliced pass.
const BitslicedBlocks = 512

const bitslicedPassBytes = 16 * BitslicedBlocks

// BitslicedSupported reports whether the CPU (after GODEBUG overrides) can
// run the bitsliced kernel.
func BitslicedSupported() bool { return cpu.X86.AVX512 }

// BitslicedKey holds the round keys of one uBlock-128 key in the bitsliced
// kernel's layout: per round key 128 dword masks, all ones or all zeros,
// one per state bit, used through embedded broadcast. The zero value is
// unusable; fill it with Init.
type BitslicedKey struct {
	m      [(MaxRounds + 1) * 128]uint32
	rounds int
}

// Init lays out the round keys rk = RK_0 ‖ RK_1 ‖ … ‖ RK_rounds (16 bytes
// each, big-endian as in the specification; rounds 16 or 24) for the
// kernel. Record i holds at dword 16r+p (plane slot of bit r of byte p)
// the mask of the key bit XORed into that plane: for i = 0 bit r of RK_0
// byte p; for i ≥ 1 the kernel XORs RK_i after the linear layer of round
// i-1, into the X1 planes as is and into the X0 planes XOR the key of the
// X1 plane the last linear step adds to them (byte 8+PR⁻¹[PL[p]]).
func (k *BitslicedKey) Init(rk []byte, rounds int) {
	if rounds != 16 && rounds != 24 || len(rk) < 16*(rounds+1) {
		panic("ublock: invalid round keys")
	}
	k.rounds = rounds
	bit := func(i, p, r int) uint32 { return uint32(rk[16*i+p]>>r&1) * 0xffffffff }
	for i := 0; i <= rounds; i++ {
		for p := 0; p < 16; p++ {
			for r := 0; r < 8; r++ {
				m := bit(i, p, r)
				if i > 0 && p < 8 {
					m ^= bit(i, 8+int(prInv128[pl128[p]]), r)
				}
				k.m[128*i+16*r+p] = m
			}
		}
	}
	clear(k.m[128*(rounds+1):])
}

// pl128 and prInv128 are PL and PR⁻¹ of the specification (gathers, byte 0
// the most significant) for the 128-bit block.
var (
	pl128    = [8]byte{1, 3, 4, 6, 0, 2, 7, 5}
	prInv128 = [8]byte{3, 4, 0, 7, 6, 2, 5, 1}
)

// Reset wipes the round keys.
func (k *BitslicedKey) Reset() { *k = BitslicedKey{} }

// Rounds returns the key's round count (0 before Init).
func (k *BitslicedKey) Rounds() int { return k.rounds }

func (k *BitslicedKey) check() {
	if k.rounds == 0 {
		panic("ublock: bitsliced key not initialized")
	}
	if !BitslicedSupported() {
		panic("ublock: bitsliced kernel not supported by this CPU")
	}
}

// EncryptBlocksBitsliced encrypts src into dst (ECB, 16-byte blocks) with
// key k, bitsliced. len(src) must be a multiple of 16 and dst at least as
// long; dst and src must be equal or not overlap. Whole passes of 512
// blocks run in place; the rest runs as one more pass in a buffer, which
// is zeroed after.
func EncryptBlocksBitsliced(k *BitslicedKey, dst, src []byte) {
	if len(src)%16 != 0 {
		panic("ublock: input not full blocks")
	}
	if len(dst) < len(src) {
		panic("ublock: output smaller than input")
	}
	if len(src) == 0 {
		return
	}
	k.check()
	direct := len(src) / bitslicedPassBytes
	if direct > 0 {
		encryptBitsliced128AVX512(&k.m0()[0], k.rounds, &dst[0], &src[0], direct)
	}
	if rest := len(src) - direct*bitslicedPassBytes; rest > 0 {
		var buf [bitslicedPassBytes]byte
		off := direct * bitslicedPassBytes
		copy(buf[:], src[off:])
		encryptBitsliced128AVX512(&k.m0()[0], k.rounds, &buf[0], &buf[0], 1)
		copy(dst[off:], buf[:rest])
		clear(buf[:])
	}
}

// m0 returns the key table as bytes.
func (k *BitslicedKey) m0() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&k.m[0])), 4*len(k.m))
}

// XORPiecesBitsliced applies every piece of ps (see Piece; any number of
// pieces and blocks) under key k: it builds the counter blocks of the
// pieces, 512 to a pass across piece boundaries (a piece may span
// passes), encrypts each pass bitsliced and XORs the keystream into place
// (a nil Src writes the keystream itself). The buffer of counter blocks
// and keystream is zeroed before return. Pieces must not overlap each
// other; within a piece Dst and Src must be equal or not overlap. The
// counters in ps are not advanced.
func XORPiecesBitsliced(k *BitslicedKey, ps []Piece) { xorPiecesBitsliced(k, nil, 0, ps) }

// HybridTailBlocks is the most blocks of a final partial pass that
// XORPiecesHybrid runs through the packed kernel instead of a padded
// bitsliced pass: below it the packed tiers' ≈ 9 ns a block (AVX-512,
// Zen 4) cost less than a whole pass (≈ 3.5 µs).
const HybridTailBlocks = 384

// XORPiecesHybrid is XORPiecesBitsliced, except that a final partial
// pass of fewer than HybridTailBlocks blocks runs through XORPieces with
// tier t and schedule s (the same key as k, 16-byte blocks) instead of a
// padded bitsliced pass.
func XORPiecesHybrid(k *BitslicedKey, s *Schedule, t Tier, ps []Piece) {
	s.valid()
	if s.blockSize != 16 || s.rounds != k.rounds {
		panic("ublock: schedule does not match the bitsliced key")
	}
	t.check()
	xorPiecesBitsliced(k, s, t, ps)
}

// xorPiecesBitsliced runs the pieces; with s set, a short final pass goes
// through XORPieces(t, s, …).
func xorPiecesBitsliced(k *BitslicedKey, s *Schedule, t Tier, ps []Piece) {
	ctrpass.Check(ps, "ublock")
	k.check()
	w := ctrpass.NewWalker(ps, BitslicedBlocks, 0)
	if s != nil {
		w = ctrpass.NewWalker(ps, BitslicedBlocks, HybridTailBlocks)
	}
	var buf [bitslicedPassBytes]byte
	for w.Fill(buf[:]) {
		encryptBitsliced128AVX512(&k.m0()[0], k.rounds, &buf[0], &buf[0], 1)
		w.Apply(buf[:])
	}
	clear(buf[:])
	var scratch [64]Piece
	for q := w.Rest(scratch[:], MaxPieceBlocks); q != nil; q = w.Rest(scratch[:], MaxPieceBlocks) {
		XORPieces(t, s, q)
	}
	clear(scratch[:])
}
