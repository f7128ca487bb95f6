package main

import (
	"fmt"

	"github.com/gmtun/gmtun/kernels/_gen/internal/ctrpieces"
	"github.com/gmtun/gmtun/kernels/_gen/internal/frame"
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
// XOR loop (package ctrpieces, with the piece descriptor,
// kernels/ublock.Piece) differ only in the register width.

// genXORPieces emits the pieces kernel of tier a.
func genXORPieces(a *isa) {
	name := "xorPieces128" + a.name
	TEXT(name, 0, "func(rk *byte, rounds int, pieces *byte, npieces, nblocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs the uBlock keystream (16-byte blocks, 16 or 24 rounds) of every piece (kernels/ublock.Piece: counter blocks Ctr, inc32(Ctr), …; nil Src writes the keystream itself) into its Dst for its N bytes, all pieces in one call of nblocks ≤ %d blocks (the sum of ceil(N/16)), with the round-key table rk (kernels/ublock.Schedule layout), using %s. The counter blocks are encrypted in full passes across the pieces; the stack buffer that held them is zeroed before return.",
		name, ctrpieces.MaxBlocks, a.doc))
	g := newKern(a, name, false, false)
	w := a.width
	rk := Load(Param("rk"), GP64()).(GPVirtual)
	pp := Load(Param("pieces"), GP64()).(GPVirtual)
	np := Load(Param("npieces"), GP64()).(GPVirtual)
	// The builder stores a whole register at a time (up to w-16 bytes past
	// the last block), the passes run whole pairs: w bytes of slack.
	ksp := AllocLocal(8)
	{
		p := frame.AlignedArea(ctrpieces.MaxBlocks*16 + w)
		MOVQ(p, ksp)
	}

	Comment("Counter blocks of every piece, one register (2 or 4 blocks) per store, into ks.")
	ctrpieces.Builder{Name: name, Width: w, Tables: a.c.pieces, Vec: a.vec,
		// The counter block as two 8-byte loads (callers build it with two
		// 8-byte stores, which one 16-byte load would not forward from),
		// paired in every 128-bit lane.
		Broadcast: func(p GPVirtual, v, u VecVirtual) {
			VPBROADCASTQ(Mem{Base: p}, v)
			VPBROADCASTQ(Mem{Base: p, Disp: 8}, u)
			VPUNPCKLQDQ(u, v, v)
		},
		Store: func(v VecVirtual, m Mem) { a.mov(v, m) },
	}.Emit(ksp, pp, np)

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
	y, x := a.vec(), XMM()
	ctrpieces.EmitXOR(name, ksp, pp, np, []ctrpieces.Step{
		{Label: "wide", Bytes: w, Reg: y, Repeat: true, Move: a.mov, XOR: a.xor},
		{Label: "16", Bytes: 16, Reg: x, Repeat: true, Move: a.mov, XOR: a.xor},
	})

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
