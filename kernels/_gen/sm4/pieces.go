package main

import (
	"fmt"

	"github.com/gmtun/gmtun/kernels/_gen/internal/ctrpieces"
	"github.com/gmtun/gmtun/kernels/_gen/internal/frame"
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
// (bs2.go), which costs less than two passes. The piece descriptor
// (kernels/sm4.Piece), the counter-block builder and the YMM tiers'
// keystream loop are those of package ctrpieces.

// newPieceTables emits the tables of the counter-block builder: four
// blocks per store (ZMM) and two (YMM).
func newPieceTables() ctrpieces.Tables {
	return ctrpieces.EmitTables("sm4", 4, 2)
}

// piecesArgs are the arguments of a pieces kernel, loaded, and its
// counter-block buffer.
type piecesArgs struct {
	rk, pieces, npieces, nblocks GPVirtual
	buf                          Mem // the address of the buffer: 64-byte aligned, ctrpieces.MaxBlocks blocks and the slack
}

// beginPieces emits the header of the pieces kernel name (its doc naming
// impl, the code it runs), loads its arguments and allocates its
// counter-block buffer with slack bytes past the last block.
func beginPieces(name, impl string, slack int) piecesArgs {
	TEXT(name, 0, "func(rk *[32]uint32, pieces *byte, npieces int, nblocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs the SM4 keystream of every piece (kernels/sm4.Piece: counter blocks Ctr, inc32(Ctr), …; nil Src copies the keystream) into its Dst for its N bytes, all pieces in one call of nblocks ≤ %d blocks (the sum of ceil(N/16)), using %s.", name, ctrpieces.MaxBlocks, impl))
	var a piecesArgs
	a.rk = Load(Param("rk"), GP64()).(GPVirtual)
	a.pieces = Load(Param("pieces"), GP64()).(GPVirtual)
	a.npieces = Load(Param("npieces"), GP64()).(GPVirtual)
	a.nblocks = Load(Param("nblocks"), GP64()).(GPVirtual)
	a.buf = AllocLocal(8)
	MOVQ(frame.AlignedArea(ctrpieces.MaxBlocks*16+slack), a.buf)
	return a
}

// genBSXORPieces emits the pieces kernel of the AVX-512/GFNI tier: the
// byte-sliced pass of bs.go (two interleaved sets past 64 blocks), and the
// keystream applied 64 bytes at a time under byte masks.
func genBSXORPieces(c *consts, b *bsConsts, pt ctrpieces.Tables) {
	name := "xorPiecesAVX512GFNI"
	g := &bsKernel{c: c, b: b, name: name}
	// 64 bytes of slack: the builder writes four blocks at a time. Every
	// access to the buffer is a whole ZMM register.
	a := beginPieces(name, bsDoc, 64)
	g.rk, g.n = a.rk, a.nblocks
	pp, np, ksp := a.pieces, a.npieces, a.buf
	g.rkTab = AllocLocal(512)
	g.masks = AllocLocal(16)

	buildCounters(name, pt, true, ksp, pp, np)

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

	xorPiecesZMM(name, ksp, pp, np)
	frame.Zero(g.rkTab, 512, true, g.c.zero)
	VZEROUPPER()
	RET()
}

// genXORPieces emits the pieces kernel of a YMM tier: the same three
// steps as genBSXORPieces, with two counter blocks per store, the tier's
// ECB passes over the stack buffer, and the keystream applied 32 bytes
// at a time, then 16, then byte by byte for a partial last block (AVX2
// has no byte-masked stores). Lengths and nil sources are public, so the
// branches on them are too. The ZMM tier (AVX512AESNI) builds four
// blocks per store and applies the keystream as genBSXORPieces does.
func genXORPieces(t *tier, pt ctrpieces.Tables) {
	name := "xorPieces" + t.name
	g := &kernel{t: t, name: name}
	zmm := t.regBytes == 64
	// Slack: the builder writes a register (two blocks, four on ZMM) at a
	// time.
	a := beginPieces(name, t.doc, t.regBytes)
	g.rk, g.n = a.rk, a.nblocks
	pp, np, ksp := a.pieces, a.npieces, a.buf

	buildCounters(name, pt, zmm, ksp, pp, np)

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

	if zmm {
		xorPiecesZMM(name, ksp, pp, np)
	} else {
		Comment("Keystream into every piece: 32 bytes per step, then 16, then bytes.")
		y := YMM()
		ctrpieces.EmitXOR(name, ksp, pp, np, []ctrpieces.Step{
			{Label: "32", Bytes: 32, Reg: y, Repeat: true, Move: VMOVDQU, XOR: VPXOR},
			{Label: "16", Bytes: 16, Reg: y.AsX(), Move: VMOVDQU, XOR: VPXOR},
		})
	}
	g.wipeKeys()
	VZEROUPPER()
	RET()
}

// buildCounters emits the counter blocks of every piece into the buffer
// at ksp: four blocks per ZMM store, or two per YMM store.
func buildCounters(name string, pt ctrpieces.Tables, zmm bool, ksp Mem, pp, np GPVirtual) {
	if zmm {
		Comment("Counter blocks of every piece, four per store, into ks.")
		ctrpieces.Builder{Name: name, Width: 64, Tables: pt, Vec: ZMM,
			Broadcast: func(p GPVirtual, v, _ VecVirtual) { VBROADCASTI32X4(Mem{Base: p}, v) },
			Store:     func(v VecVirtual, m Mem) { VMOVDQU64(v, m) },
		}.Emit(ksp, pp, np)
		return
	}
	Comment("Counter blocks of every piece, two per store, into ks.")
	ctrpieces.Builder{Name: name, Width: 32, Tables: pt, Vec: YMM,
		Broadcast: func(p GPVirtual, v, _ VecVirtual) { VBROADCASTI128(Mem{Base: p}, v) },
		Store:     func(v VecVirtual, m Mem) { VMOVDQU(v, m) },
	}.Emit(ksp, pp, np)
}

// xorPiecesZMM emits the keystream step of a ZMM pieces kernel: the
// keystream in ks applied to every piece 64 bytes at a time, the last
// chunk under a byte mask (AVX-512 BW).
func xorPiecesZMM(name string, ksp Mem, pp, np GPVirtual) {
	Comment("Keystream into every piece, 64 bytes per step under a byte mask.")
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
	MOVQ(Mem{Base: p, Disp: ctrpieces.DstOffset}, d)
	MOVQ(Mem{Base: p, Disp: ctrpieces.SrcOffset}, s)
	MOVQ(Mem{Base: p, Disp: ctrpieces.LenOffset}, n)
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
	ADDQ(U8(ctrpieces.Size), p)
	DECQ(cnt)
	JMP(LabelRef(name + "_xor_piece"))
	Label(name + "_xor_done")
}
