// Package ctrpieces emits the parts that the gathered CTR "pieces" kernels
// of sm4 and ublock share: the piece descriptor layout, the tables and
// the loop that build every piece's counter blocks in a stack buffer, and
// the loop that XORs the keystream from that buffer into each piece's
// destination a register, then 16 bytes, then a byte at a time.
//
// A piece (kernels/sm4.Piece, kernels/ublock.Piece) is 40 bytes: the
// first counter block (16 bytes, big-endian inc32 word at 12), Dst, Src
// (nil: write the keystream itself) and N, the length in bytes. Piece k
// uses ceil(N/16) blocks right after those of piece k-1; all pieces
// together use at most MaxBlocks.
package ctrpieces

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The piece descriptor: its size and the byte offsets of its fields after
// the counter block at offset 0.
const (
	Size      = 40
	DstOffset = 16
	SrcOffset = 24
	LenOffset = 32
	MaxBlocks = 128 // counter blocks of all the pieces of one call
)

// Tables are the read-only tables of the counter-block builder.
type Tables struct {
	// Swap is the VPSHUFB control that keeps bytes 0-11 of a counter block
	// and byte-swaps the inc32 word, so that VPADDD counts it (wrapping
	// modulo 2^32 as inc32 does) and the same control turns it back.
	Swap Mem
	// Offsets holds the dwords (0,0,0,k) in 128-bit lane k: the blocks of
	// one register from the piece's first one.
	Offsets Mem
	// Inc holds, by blocks per store, the dwords (0,0,0,blocks) in every
	// 128-bit lane.
	Inc map[int]Mem
}

// EmitTables emits the builder's tables, 64 bytes each, named prefix +
// "PieceSwap", "PieceOffsets" and "PieceInc<n>" for each n of
// blocksPerStore, in that order (the order of the DATA in the output).
func EmitTables(prefix string, blocksPerStore ...int) Tables {
	swap := [16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 14, 13, 12}
	t := Tables{Inc: map[int]Mem{}}
	t.Swap = table(prefix+"PieceSwap", 1, func(i int) Constant { return U8(swap[i%16]) })
	// Dword i is dword i%4 of 128-bit lane i/4.
	t.Offsets = table(prefix+"PieceOffsets", 4, func(i int) Constant { return U32(lastDword(i, i/4)) })
	for _, n := range blocksPerStore {
		t.Inc[n] = table(fmt.Sprintf("%sPieceInc%d", prefix, n), 4, func(i int) Constant { return U32(lastDword(i, n)) })
	}
	return t
}

// lastDword is x for the last dword of a 128-bit lane (i%4 == 3), else 0.
func lastDword(i, x int) uint32 {
	if i%4 != 3 {
		return 0
	}
	return uint32(x)
}

// table emits a read-only 64-byte table of items of size bytes, item(i)
// at offset i*size.
func table(name string, size int, item func(i int) Constant) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < 64/size; i++ {
		DATA(size*i, item(i))
	}
	return m
}

// Builder is the counter-block builder of one register width.
type Builder struct {
	Name   string // the kernel's name: the prefix of the builder's labels
	Width  int    // bytes per store: 32 (YMM, 2 blocks) or 64 (ZMM, 4 blocks)
	Tables Tables
	// Vec allocates a vector register of the width.
	Vec func() VecVirtual
	// Broadcast sets v to the counter block at p in every 128-bit lane; u
	// is free for it to use.
	Broadcast func(p GPVirtual, v, u VecVirtual)
	// Store stores the register v (Width bytes) to m.
	Store func(v VecVirtual, m Mem)
}

// Emit emits the loop that writes the counter blocks of the npieces pieces
// at pieces into the buffer whose address is in buf, one register per
// store: for every piece, its ceil(N/16) blocks right after the previous
// piece's, and up to Width-16 bytes of whatever past them (the next piece
// writes over those).
func (b Builder) Emit(buf, pieces, npieces Op) {
	name := b.Name
	eachPiece(name+"_ctr", buf, pieces, npieces, func(kp, p GPVirtual) {
		nb, w := GP64(), GP64()
		v, u := b.Vec(), b.Vec()
		MOVQ(Mem{Base: p, Disp: LenOffset}, nb)
		ADDQ(U8(15), nb)
		SHRQ(U8(4), nb)
		MOVQ(kp, w)
		b.Broadcast(p, v, u)
		VPSHUFB(b.Tables.Swap, v, v)
		VPADDD(b.Tables.Offsets, v, v)
		SHLQ(U8(4), nb)
		ADDQ(nb, kp) // the next piece's blocks
		Label(name + "_ctr_block")
		CMPQ(w, kp)
		JAE(LabelRef(name + "_ctr_next"))
		VPSHUFB(b.Tables.Swap, v, u)
		b.Store(u, Mem{Base: w})
		VPADDD(b.Tables.Inc[b.Width/16], v, v)
		ADDQ(U8(b.Width), w)
		JMP(LabelRef(name + "_ctr_block"))
		Label(name + "_ctr_next")
	})
}

// eachPiece emits a loop over the npieces pieces at pieces, labels prefix
// + "_piece" and "_done": body is emitted once, with kp (set to buf before
// the first piece; body advances it) and p, the piece.
func eachPiece(prefix string, buf, pieces, npieces Op, body func(kp, p GPVirtual)) {
	kp, p, cnt := GP64(), GP64(), GP64()
	MOVQ(buf, kp)
	MOVQ(pieces, p)
	MOVQ(npieces, cnt)
	Label(prefix + "_piece")
	TESTQ(cnt, cnt)
	JZ(LabelRef(prefix + "_done"))
	body(kp, p)
	ADDQ(U8(Size), p)
	DECQ(cnt)
	JMP(LabelRef(prefix + "_piece"))
	Label(prefix + "_done")
}

// Step is one stage of the keystream XOR: chunks of Bytes bytes of a piece
// through the register Reg.
type Step struct {
	Label  string // the stage's label: the kernel's name + "_xor_" + Label
	Bytes  int
	Reg    Register
	Repeat bool // as many chunks as fit, else at most one
	// Move loads or stores Reg; XOR sets dst to x ⊕ y.
	Move func(src, dst Op)
	XOR  func(x, y, dst Op)
}

// EmitXOR emits the loop that XORs the keystream in the buffer whose
// address is in buf into every one of the npieces pieces at pieces (a nil
// Src: the keystream itself is stored), through steps in order (each for
// as long as its chunks fit, or once) and then a byte at a time. Lengths
// and nil sources are public, so the branches on them are too. name is the
// kernel's name, the prefix of the labels.
func EmitXOR(name string, buf, pieces, npieces Op, steps []Step) {
	eachPiece(name+"_xor", buf, pieces, npieces, func(kp, p GPVirtual) {
		d, s, n, next := GP64(), GP64(), GP64(), GP64()
		bt := GP64()
		MOVQ(Mem{Base: p, Disp: DstOffset}, d)
		MOVQ(Mem{Base: p, Disp: SrcOffset}, s)
		MOVQ(Mem{Base: p, Disp: LenOffset}, n)
		// The next piece's keystream starts ceil(n/16)·16 bytes on; kp
		// walks this piece's bytes and is set to it at the end.
		MOVQ(n, next)
		ADDQ(U8(15), next)
		ANDQ(I8(-16), next)
		ADDQ(kp, next)
		for i, st := range steps {
			label := name + "_xor_" + st.Label
			after := name + "_xor_1"
			if i+1 < len(steps) {
				after = name + "_xor_" + steps[i+1].Label
			}
			Label(label)
			CMPQ(n, U8(st.Bytes))
			JB(LabelRef(after))
			st.Move(Mem{Base: kp}, st.Reg)
			TESTQ(s, s)
			JZ(LabelRef(label + "_store"))
			st.XOR(Mem{Base: s}, st.Reg, st.Reg)
			ADDQ(U8(st.Bytes), s)
			Label(label + "_store")
			st.Move(st.Reg, Mem{Base: d})
			ADDQ(U8(st.Bytes), kp)
			ADDQ(U8(st.Bytes), d)
			SUBQ(U8(st.Bytes), n)
			if st.Repeat {
				JMP(LabelRef(label))
			}
		}
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
	})
}
