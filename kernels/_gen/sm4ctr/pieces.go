package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The pieces kernel is the gathered pass of a batch (SM4-GCM: the tag
// masks, leftover blocks and partial last blocks of many packets) in one
// call: it builds the counter blocks of every piece in a stack buffer,
// encrypts them in one byte-sliced pass (the ECB code of bs.go) and XORs
// the keystream into each piece's destination under byte masks, so no
// counter block or keystream goes back through Go and no piece costs a
// call. More than 64 blocks run as one pass of two interleaved sets
// (bs2.go), which costs less than two passes.
//
// Piece descriptor (kernels/sm4ctr.Piece, 40 bytes): the first counter
// block (16 bytes, big-endian inc32 word at 12), Dst, Src (nil: copy the
// keystream) and N, the length in bytes. Piece k uses ceil(N/16) blocks
// right after those of piece k-1; all pieces together use at most 128.

const (
	pieceSize   = 40
	pieceDst    = 16
	pieceSrc    = 24
	pieceLen    = 32
	piecesBlock = 128
)

// pieceConsts are the tables of the counter-block builder.
type pieceConsts struct {
	swap Mem // VPSHUFB: bytes 0-11 kept, the inc32 word byte-swapped
	offs Mem // dwords (0,0,0,k) for the four blocks k of a ZMM register
	inc4 Mem // dwords (0,0,0,4) in every 128-bit lane
	inc2 Mem // dwords (0,0,0,2) in every 128-bit lane (YMM: two blocks)
}

func newPieceConsts() *pieceConsts {
	pc := &pieceConsts{}
	pc.swap = bytesTable("sm4PieceSwap", [16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 14, 13, 12}, 64)
	var offs, inc, inc2 []uint32
	for k := 0; k < 4; k++ {
		offs = append(offs, 0, 0, 0, uint32(k))
		inc = append(inc, 0, 0, 0, 4)
		inc2 = append(inc2, 0, 0, 0, 2)
	}
	pc.offs = dwordTable("sm4PieceOffsets", offs)
	pc.inc4 = dwordTable("sm4PieceInc4", inc)
	pc.inc2 = dwordTable("sm4PieceInc2", inc2)
	return pc
}

func genBSXORPieces(c *consts, b *bsConsts, pc *pieceConsts) {
	name := "xorPiecesAVX512GFNI"
	TEXT(name, 0, "func(rk *[32]uint32, pieces *byte, npieces int, nblocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs the SM4 keystream of every piece (kernels/sm4ctr.Piece: counter blocks Ctr, inc32(Ctr), …; nil Src copies the keystream) into its Dst for its N bytes, all pieces in one call of nblocks ≤ %d blocks (the sum of ceil(N/16)), using %s.", name, piecesBlock, bsDoc))
	g := &bsKernel{c: c, b: b, name: name}
	g.rk = Load(Param("rk"), GP64()).(GPVirtual)
	pp := Load(Param("pieces"), GP64()).(GPVirtual)
	np := Load(Param("npieces"), GP64()).(GPVirtual)
	g.n = Load(Param("nblocks"), GP64()).(GPVirtual)
	// 64 bytes of slack: the builder writes four blocks at a time. The
	// buffer is 64-byte aligned (its address kept in ksp): every access
	// is a whole ZMM register.
	ksp := AllocLocal(8)
	{
		p := alignedArea(piecesBlock*16 + 64)
		MOVQ(p, ksp)
	}
	g.rkTab = AllocLocal(512)
	g.masks = AllocLocal(16)

	Comment("Counter blocks of every piece, four per store, into ks.")
	{
		kp, p, cnt, nb, w := GP64(), GP64(), GP64(), GP64(), GP64()
		v, t := ZMM(), ZMM()
		MOVQ(ksp, kp)
		MOVQ(pp, p)
		MOVQ(np, cnt)
		Label(name + "_ctr_piece")
		TESTQ(cnt, cnt)
		JZ(LabelRef(name + "_ctr_done"))
		MOVQ(Mem{Base: p, Disp: pieceLen}, nb)
		ADDQ(U8(15), nb)
		SHRQ(U8(4), nb)
		MOVQ(kp, w)
		VBROADCASTI32X4(Mem{Base: p}, v)
		VPSHUFB(pc.swap, v, v)
		VPADDD(pc.offs, v, v)
		SHLQ(U8(4), nb)
		ADDQ(nb, kp) // the next piece's blocks
		Label(name + "_ctr_block")
		CMPQ(w, kp)
		JAE(LabelRef(name + "_ctr_next"))
		VPSHUFB(pc.swap, v, t)
		VMOVDQU64(t, Mem{Base: w})
		VPADDD(pc.inc4, v, v)
		ADDQ(U8(64), w)
		JMP(LabelRef(name + "_ctr_block"))
		Label(name + "_ctr_next")
		ADDQ(U8(pieceSize), p)
		DECQ(cnt)
		JMP(LabelRef(name + "_ctr_piece"))
		Label(name + "_ctr_done")
	}

	Comment("The counter blocks, in place in ks: more than 64 as one pass of two sets, else the passes of encryptBlocks.")
	g.src, g.dst = GP64(), GP64()
	g.splitKeys()
	CMPQ(g.n, U8(64))
	JA(LabelRef(name + "_two"))
	MOVQ(ksp, g.src)
	MOVQ(g.src, g.dst)
	g.passes()
	JMP(LabelRef(name + "_keystream"))

	Label(name + "_two")
	Comment("Blocks past nblocks are whatever the buffer held: encrypted, never used.")
	g.full = true // the buffer holds both sets whole
	sets := newBS2Sets()
	for k := range sets {
		MOVQ(ksp, g.src)
		ADDQ(U32(64*16*k), g.src)
		sets[k].enter(g.input())
	}
	g.twoSetRounds(&sets)
	for k := range sets {
		MOVQ(ksp, g.dst)
		ADDQ(U32(64*16*k), g.dst)
		g.output(sets[k].final())
	}
	g.full = false
	Label(name + "_keystream")

	Comment("Keystream into every piece, 64 bytes per step under a byte mask.")
	{
		kp, p, cnt, d, s, n, q, m, bits, sixtyfour := GP64(), GP64(), GP64(), GP64(), GP64(), GP64(), GP64(), GP64(), GP64(), GP64()
		z, t := ZMM(), ZMM()
		k := K()
		MOVQ(ksp, kp)
		MOVQ(pp, p)
		MOVQ(np, cnt)
		MOVQ(U32(64), sixtyfour)
		Label(name + "_xor_piece")
		TESTQ(cnt, cnt)
		JZ(LabelRef(name + "_xor_done"))
		MOVQ(Mem{Base: p, Disp: pieceDst}, d)
		MOVQ(Mem{Base: p, Disp: pieceSrc}, s)
		MOVQ(Mem{Base: p, Disp: pieceLen}, n)
		MOVQ(kp, q)
		// kp += ceil(n/16)·16
		MOVQ(n, m)
		ADDQ(U8(15), m)
		ANDQ(I8(-16), m)
		ADDQ(m, kp)
		Label(name + "_xor_full")
		Comment("Whole 64-byte chunks without masks (masked stores cost more).")
		CMPQ(n, sixtyfour)
		JL(LabelRef(name + "_xor_chunk"))
		VMOVDQU64(Mem{Base: q}, z)
		TESTQ(s, s)
		JZ(LabelRef(name + "_xor_full_store"))
		VPXORD(Mem{Base: s}, z, z)
		ADDQ(U8(64), s)
		Label(name + "_xor_full_store")
		VMOVDQU64(z, Mem{Base: d})
		ADDQ(U8(64), d)
		ADDQ(U8(64), q)
		SUBQ(U8(64), n)
		JMP(LabelRef(name + "_xor_full"))
		Label(name + "_xor_chunk")
		TESTQ(n, n)
		JLE(LabelRef(name + "_xor_next"))
		MOVQ(n, m)
		CMPQ(m, sixtyfour)
		CMOVQGT(sixtyfour, m)
		MOVQ(I32(-1), bits)
		BZHIQ(m, bits, bits)
		KMOVQ(bits, k)
		VMOVDQU8_Z(Mem{Base: q}, k, z)
		TESTQ(s, s)
		JZ(LabelRef(name + "_xor_store"))
		VMOVDQU8_Z(Mem{Base: s}, k, t)
		VPXORD(t, z, z)
		ADDQ(U8(64), s)
		Label(name + "_xor_store")
		VMOVDQU8(z, k, Mem{Base: d})
		ADDQ(U8(64), d)
		ADDQ(U8(64), q)
		SUBQ(U8(64), n)
		JMP(LabelRef(name + "_xor_chunk"))
		Label(name + "_xor_next")
		ADDQ(U8(pieceSize), p)
		DECQ(cnt)
		JMP(LabelRef(name + "_xor_piece"))
		Label(name + "_xor_done")
	}
	VZEROUPPER()
	RET()
}

// genXORPieces emits the pieces kernel of a YMM tier: the same three
// steps as genBSXORPieces, with two counter blocks per store, the tier's
// ECB passes over the stack buffer, and the keystream applied 32 bytes
// at a time, then 16, then byte by byte for a partial last block (AVX2
// has no byte-masked stores). Lengths and nil sources are public, so the
// branches on them are too.
func genXORPieces(t *tier, pc *pieceConsts) {
	name := "xorPieces" + t.name
	TEXT(name, 0, "func(rk *[32]uint32, pieces *byte, npieces int, nblocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs the SM4 keystream of every piece (kernels/sm4ctr.Piece: counter blocks Ctr, inc32(Ctr), …; nil Src copies the keystream) into its Dst for its N bytes, all pieces in one call of nblocks ≤ %d blocks (the sum of ceil(N/16)), using %s.", name, piecesBlock, t.doc))
	g := &kernel{t: t, name: name}
	g.rk = Load(Param("rk"), GP64()).(GPVirtual)
	pp := Load(Param("pieces"), GP64()).(GPVirtual)
	np := Load(Param("npieces"), GP64()).(GPVirtual)
	g.n = Load(Param("nblocks"), GP64()).(GPVirtual)
	// 32 bytes of slack: the builder writes two blocks at a time. The
	// buffer is 64-byte aligned (its address kept in ksp).
	ksp := AllocLocal(8)
	{
		p := alignedArea(piecesBlock*16 + 32)
		MOVQ(p, ksp)
	}

	Comment("Counter blocks of every piece, two per store, into ks.")
	{
		kp, p, cnt, nb, w := GP64(), GP64(), GP64(), GP64(), GP64()
		v, u := YMM(), YMM()
		MOVQ(ksp, kp)
		MOVQ(pp, p)
		MOVQ(np, cnt)
		Label(name + "_ctr_piece")
		TESTQ(cnt, cnt)
		JZ(LabelRef(name + "_ctr_done"))
		MOVQ(Mem{Base: p, Disp: pieceLen}, nb)
		ADDQ(U8(15), nb)
		SHRQ(U8(4), nb)
		MOVQ(kp, w)
		VBROADCASTI128(Mem{Base: p}, v)
		VPSHUFB(pc.swap, v, v)
		VPADDD(pc.offs, v, v)
		SHLQ(U8(4), nb)
		ADDQ(nb, kp) // the next piece's blocks
		Label(name + "_ctr_block")
		CMPQ(w, kp)
		JAE(LabelRef(name + "_ctr_next"))
		VPSHUFB(pc.swap, v, u)
		VMOVDQU(u, Mem{Base: w})
		VPADDD(pc.inc2, v, v)
		ADDQ(U8(32), w)
		JMP(LabelRef(name + "_ctr_block"))
		Label(name + "_ctr_next")
		ADDQ(U8(pieceSize), p)
		DECQ(cnt)
		JMP(LabelRef(name + "_ctr_piece"))
		Label(name + "_ctr_done")
	}

	// A call of a few blocks (one short packet: its blocks and its tag
	// mask) must not pay for a whole pass of every set, so nblocks is
	// rounded up only to whole sets and the usual schedule runs: full
	// passes, then one pass of the sets left (the last set's mask is
	// all ones).
	Comment("The tier's passes over the counter blocks, in place in ks: nblocks rounded up to whole sets (blocks past nblocks are encrypted and never used).")
	g.src, g.dst = GP64(), GP64()
	MOVQ(ksp, g.src)
	MOVQ(g.src, g.dst)
	ADDQ(U8(t.width-1), g.n)
	ANDQ(I8(-t.width), g.n)
	t.setup()
	g.preKeys()
	g.passes()

	Comment("Keystream into every piece: 32 bytes per step, then 16, then bytes.")
	{
		kp, p, cnt, d, s, n, m := GP64(), GP64(), GP64(), GP64(), GP64(), GP64(), GP64()
		y := YMM()
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
		MOVQ(n, m)
		ADDQ(U8(15), m)
		ANDQ(I8(-16), m)
		ADDQ(kp, m)
		Label(name + "_xor_32")
		CMPQ(n, U8(32))
		JB(LabelRef(name + "_xor_16"))
		VMOVDQU(Mem{Base: kp}, y)
		TESTQ(s, s)
		JZ(LabelRef(name + "_xor_32_store"))
		VPXOR(Mem{Base: s}, y, y)
		ADDQ(U8(32), s)
		Label(name + "_xor_32_store")
		VMOVDQU(y, Mem{Base: d})
		ADDQ(U8(32), kp)
		ADDQ(U8(32), d)
		SUBQ(U8(32), n)
		JMP(LabelRef(name + "_xor_32"))
		Label(name + "_xor_16")
		CMPQ(n, U8(16))
		JB(LabelRef(name + "_xor_1"))
		VMOVDQU(Mem{Base: kp}, y.AsX())
		TESTQ(s, s)
		JZ(LabelRef(name + "_xor_16_store"))
		VPXOR(Mem{Base: s}, y.AsX(), y.AsX())
		ADDQ(U8(16), s)
		Label(name + "_xor_16_store")
		VMOVDQU(y.AsX(), Mem{Base: d})
		ADDQ(U8(16), kp)
		ADDQ(U8(16), d)
		SUBQ(U8(16), n)
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
		MOVQ(m, kp)
		ADDQ(U8(pieceSize), p)
		DECQ(cnt)
		JMP(LabelRef(name + "_xor_piece"))
		Label(name + "_xor_done")
	}
	VZEROUPPER()
	RET()
}
