package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The pieces kernel is the gathered pass of a GCM batch under one key
// (uBlock-GCM: the tag masks E_K(J0), leftover blocks and partial last
// blocks of many packets) in one call: it builds the counter blocks of
// every piece in a stack buffer, encrypts them with the tier's ECB passes
// (ecbPass: full passes of four pairs across piece and packet boundaries,
// then one pass of the pairs left) and XORs the keystream into each
// piece's destination, so no counter block or keystream goes back through
// Go and a packet's tail costs no pass of its own. The same emitter serves
// every tier: the passes are those of the ECB kernels, the builder and the
// XOR loop differ only in the register width.
//
// Piece descriptor (kernels/ublock.Piece, 40 bytes): the first counter
// block (16 bytes, big-endian inc32 word at 12), Dst, Src (nil: write the
// keystream itself) and N, the length in bytes. Piece k uses ceil(N/16)
// blocks right after those of piece k-1; all pieces together use at most
// piecesBlocks.

const (
	pieceSize    = 40
	pieceDst     = 16
	pieceSrc     = 24
	pieceLen     = 32
	piecesBlocks = 128
)

// emitPieceConstants adds the builder's tables to c: the VPSHUFB control
// that keeps bytes 0-11 of a counter block and byte-swaps the inc32 word
// (so VPADDD counts it, wrapping modulo 2^32 as inc32 does, and the same
// control turns it back), the block offsets k of the 128-bit lanes
// (dwords 0,0,0,k), and the increments per store (2 blocks in a YMM
// register, 4 in a ZMM one).
func emitPieceConstants(c *consts) {
	c.pieceSwap = bytesTable("ublockPieceSwap", [16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 14, 13, 12})
	var offs, inc2, inc4 [16]uint32
	for k := 0; k < 4; k++ {
		offs[4*k+3] = uint32(k)
		inc2[4*k+3] = 2
		inc4[4*k+3] = 4
	}
	c.pieceOffs = dwordTable("ublockPieceOffsets", offs)
	c.pieceInc[false] = dwordTable("ublockPieceInc2", inc2)
	c.pieceInc[true] = dwordTable("ublockPieceInc4", inc4)
}

func genXORPieces(a *isa) {
	name := "xorPieces128" + a.name
	TEXT(name, 0, "func(rk *byte, rounds int, pieces *byte, npieces, nblocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs the uBlock keystream (16-byte blocks, 16 or 24 rounds) of every piece (kernels/ublock.Piece: counter blocks Ctr, inc32(Ctr), …; nil Src writes the keystream itself) into its Dst for its N bytes, all pieces in one call of nblocks ≤ %d blocks (the sum of ceil(N/16)), with the round-key table rk (kernels/ublock.Schedule layout), using %s. The counter blocks are encrypted in full passes across the pieces; the stack buffer that held them is zeroed before return.",
		name, piecesBlocks, a.doc))
	g := newKern(a, name, false, false)
	w := a.width
	rk := Load(Param("rk"), GP64()).(GPVirtual)
	pp := Load(Param("pieces"), GP64()).(GPVirtual)
	np := Load(Param("npieces"), GP64()).(GPVirtual)
	// The builder stores a whole register at a time (up to w-16 bytes past
	// the last block), the passes run whole pairs: w bytes of slack.
	ksp := AllocLocal(8)
	{
		p := alignedArea(piecesBlocks*16 + w)
		MOVQ(p, ksp)
	}

	Comment("Counter blocks of every piece, one register (2 or 4 blocks) per store, into ks.")
	{
		kp, p, cnt, nb, wp := GP64(), GP64(), GP64(), GP64(), GP64()
		v, u := a.vec(), a.vec()
		MOVQ(ksp, kp)
		MOVQ(pp, p)
		MOVQ(np, cnt)
		Label(name + "_ctr_piece")
		TESTQ(cnt, cnt)
		JZ(LabelRef(name + "_ctr_done"))
		MOVQ(Mem{Base: p, Disp: pieceLen}, nb)
		ADDQ(U8(15), nb)
		SHRQ(U8(4), nb)
		MOVQ(kp, wp)
		// The counter block as two 8-byte loads (callers build it with
		// two 8-byte stores, which one 16-byte load would not forward
		// from), paired in every 128-bit lane.
		VPBROADCASTQ(Mem{Base: p}, v)
		VPBROADCASTQ(Mem{Base: p, Disp: 8}, u)
		VPUNPCKLQDQ(u, v, v)
		VPSHUFB(a.c.pieceSwap, v, v)
		VPADDD(a.c.pieceOffs, v, v)
		SHLQ(U8(4), nb)
		ADDQ(nb, kp) // the next piece's blocks
		Label(name + "_ctr_block")
		CMPQ(wp, kp)
		JAE(LabelRef(name + "_ctr_next"))
		VPSHUFB(a.c.pieceSwap, v, u)
		a.mov(u, Mem{Base: wp})
		VPADDD(a.c.pieceInc[a.zmm], v, v)
		ADDQ(U8(w), wp)
		JMP(LabelRef(name + "_ctr_block"))
		Label(name + "_ctr_next")
		ADDQ(U8(pieceSize), p)
		DECQ(cnt)
		JMP(LabelRef(name + "_ctr_piece"))
		Label(name + "_ctr_done")
	}

	Comment("The tier's ECB passes over the counter blocks, in place in ks: nblocks rounded up to whole pairs (blocks past nblocks are encrypted and never used).")
	{
		src, dst, n := GP64(), GP64(), GP64()
		MOVQ(ksp, src)
		MOVQ(src, dst)
		Load(Param("nblocks"), n)
		ADDQ(U8(g.pairBlocks-1), n)
		ANDQ(I8(-g.pairBlocks), n)
		g.passLoopThen(n, g.pairBlocks, func(c int) { g.ecbPass(c, rk, dst, src, n) })
	}

	Comment("Keystream into every piece: a register per step, then 16 bytes, then bytes.")
	{
		kp, p, cnt, d, s, n, next := GP64(), GP64(), GP64(), GP64(), GP64(), GP64(), GP64()
		y := a.vec()
		x := XMM()
		bt := GP64()
		MOVQ(ksp, kp)
		MOVQ(pp, p)
		MOVQ(np, cnt)
		Label(name + "_xor_piece")
		TESTQ(cnt, cnt)
		JZ(LabelRef(name + "_xor_done"))
		MOVQ(Mem{Base: p, Disp: pieceDst}, d)
		MOVQ(Mem{Base: p, Disp: pieceSrc}, s)
		MOVQ(Mem{Base: p, Disp: pieceLen}, n)
		// The next piece's keystream starts ceil(n/16)·16 bytes on; kp
		// walks this piece's bytes and is set to it at the end.
		MOVQ(n, next)
		ADDQ(U8(15), next)
		ANDQ(I8(-16), next)
		ADDQ(kp, next)
		Label(name + "_xor_wide")
		CMPQ(n, U8(w))
		JB(LabelRef(name + "_xor_16"))
		a.mov(Mem{Base: kp}, y)
		TESTQ(s, s)
		JZ(LabelRef(name + "_xor_wide_store"))
		a.xor(Mem{Base: s}, y, y)
		ADDQ(U8(w), s)
		Label(name + "_xor_wide_store")
		a.mov(y, Mem{Base: d})
		ADDQ(U8(w), kp)
		ADDQ(U8(w), d)
		SUBQ(U8(w), n)
		JMP(LabelRef(name + "_xor_wide"))
		Label(name + "_xor_16")
		CMPQ(n, U8(16))
		JB(LabelRef(name + "_xor_1"))
		a.mov(Mem{Base: kp}, x)
		TESTQ(s, s)
		JZ(LabelRef(name + "_xor_16_store"))
		a.xor(Mem{Base: s}, x, x)
		ADDQ(U8(16), s)
		Label(name + "_xor_16_store")
		a.mov(x, Mem{Base: d})
		ADDQ(U8(16), kp)
		ADDQ(U8(16), d)
		SUBQ(U8(16), n)
		JMP(LabelRef(name + "_xor_16"))
		Label(name + "_xor_1")
		TESTQ(n, n)
		JZ(LabelRef(name + "_xor_next"))
		MOVBLZX(Mem{Base: kp}, bt.As32())
		TESTQ(s, s)
		JZ(LabelRef(name + "_xor_1_store"))
		XORB(Mem{Base: s}, bt.As8())
		INCQ(s)
		Label(name + "_xor_1_store")
		MOVB(bt.As8(), Mem{Base: d})
		INCQ(kp)
		INCQ(d)
		DECQ(n)
		JMP(LabelRef(name + "_xor_1"))
		Label(name + "_xor_next")
		MOVQ(next, kp)
		ADDQ(U8(pieceSize), p)
		DECQ(cnt)
		JMP(LabelRef(name + "_xor_piece"))
		Label(name + "_xor_done")
	}

	Comment("Zero what the buffer held (counter blocks, keystream): nblocks rounded up to whole pairs, and the builder's slack.")
	{
		q, end := GP64(), GP64()
		z := g.zero()
		MOVQ(ksp, q)
		Load(Param("nblocks"), end)
		SHLQ(U8(4), end)
		ADDQ(U32(2*w-1), end)
		ANDQ(I32(-2*w), end)
		ADDQ(U8(w), end)
		ADDQ(q, end)
		Label(name + "_wipe")
		a.mov(z, Mem{Base: q})
		ADDQ(U8(w), q)
		CMPQ(q, end)
		JB(LabelRef(name + "_wipe"))
	}
	VZEROUPPER()
	RET()
}
