package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The TEXT functions of the two-group 16-lane kernels (x16.go):
// initialisation, keystream and XOR, fused with the initialisation or not,
// and the 16×16 transposition of their output.

// genInit16: the 32 initialisation rounds and the discarded first work
// round; the ring ends at offset 1, which the epilogue undoes for free.
func genInit16() {
	TEXT(fn("initRounds"), 0, x16Sig(""))
	Pragma("noescape")
	Doc(fn("initRounds")+" runs the ZUC initialisation of all 16 lanes of st:",
		"32 rounds in initialisation mode, then one work-mode round whose output",
		"is discarded (GB/T 33133.1 §3.5). The LFSR rows and R1 = R2 = 0 must be loaded.")
	st := Load(Param("st"), GP64())
	c := newPair()
	c.prologue(st)
	c.initRounds("init16_loop")
	c.epilogue(st, 1)
}

// genKeyStream16: nblocks × 16 words per lane, lane c's words at
// ks[c*stride + 16*block ...].
func genKeyStream16() {
	TEXT(fn("keyStream"), 0, x16Sig(", ks *uint32, stride int, nblocks int"))
	Pragma("noescape")
	Doc(fn("keyStream")+" writes nblocks×16 keystream words of each of the 16 lanes:",
		"lane c's words go to ks[c*stride:], in generation order. nblocks must be > 0.")
	st, ks, stride, n, c := keyStreamArgs16()
	Label("ks16_loop")
	c.loadS1Tables()
	Comment("16 work rounds, both groups.")
	c.workBlock(0)
	c.output(storeKeyStream16(ks, stride))
	nextBlock16(ks, n, "ks16_loop")
	c.epilogue(st, 0)
}

// genXOR16: dst[c][off:off+64] = src[c][off:off+64] ⊕ keystream bytes (big
// endian words, as EEA3 §3.5 and the ZUC-256 keystream require); lanes with
// a nil dst pointer are skipped.
func genXOR16() {
	TEXT(fn("xorKeyStream"), 0, x16Sig(", dst *[16]*byte, src *[16]*byte, nblocks int"))
	Pragma("noescape")
	Doc(fn("xorKeyStream")+" XORs nblocks×64 keystream bytes of each of the 16 lanes",
		"(words big-endian) from src[c] into dst[c]; lanes with dst[c] == nil are skipped.",
		"nblocks must be > 0.")
	st := Load(Param("st"), GP64())
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("nblocks"), GP64())
	off := GP64()
	XORQ(off, off)
	c := newPair()
	c.prologue(st)
	prefetchSources16(src, off, 0, 63)
	Label("xor16_loop")
	prefetchSources16(src, off, 127)
	c.loadS1Tables()
	Comment("16 work rounds, both groups.")
	c.workBlock(0)
	c.output(func(lane int, v Register, disp int) {
		skip := fmt.Sprintf("xor16_skip_%d", lane)
		d := xorSource16(lane, v, dst, src, off, disp, skip)
		VMOVDQU32(v, Mem{Base: d, Index: off, Scale: 1, Disp: disp})
		Label(skip)
	})
	nextBlock16(off, n, "xor16_loop")
	c.epilogue(st, 0)
}

// genXORInit16: initialisation, then nblocks×64 keystream bytes XORed into
// every lane, each lane up to its own length (masked loads and stores for
// the last partial block, nothing past the length or for nil lanes). The
// state is consumed: it is not written back.
func genXORInit16() {
	TEXT(fn("initXORKeyStream"), 0, x16Sig(", dst *[16]*byte, src *[16]*byte, lens *[16]int, full int, nblocks int"))
	Pragma("noescape")
	Doc(fn("initXORKeyStream")+" runs the initialisation of all 16 lanes of st, then",
		"XORs the keystream (words big-endian) from src[c] into dst[c] for lens[c] bytes,",
		"for every lane with dst[c] != nil; nblocks×64 must cover the longest length and",
		"full (a multiple of 64) must not exceed the shortest of those lens[c]: the blocks",
		"below full skip the length checks. st is left undefined.")
	st := Load(Param("st"), GP64())
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	lens := Load(Param("lens"), GP64())
	full := Load(Param("full"), GP64())
	n := Load(Param("nblocks"), GP64())
	off := GP64()
	XORQ(off, off)
	c := newPair()
	c.prologue(st)
	prefetchSources16(src, off, 0, 63)
	c.initRounds("ixor16_init")
	Label("ixor16_loop")
	prefetchSources16(src, off, 127)
	c.loadS1Tables()
	Comment("16 work rounds, both groups (ring offset 1 after the initialisation).")
	c.workBlock(1)
	xorOutput16(c.g[0], dst, src, lens, full, off, "ixor16")
	nextBlock16(off, n, "ixor16_loop")
	c.wipeFrame()
	VZEROUPPER()
	RET()
}

// xorOutput16 XORs the keystream rows of group g's frame into the lanes
// of one block at off: dst[c][off:] = src[c][off:] ⊕ keystream, for every
// lane with dst[c] != nil and up to lens[c] bytes; below full every active
// lane has a whole block (no length checks, all 16 source blocks read
// before any store where there are temporaries enough), from full on the
// lengths are checked and partial blocks masked. prefix names the labels.
func xorOutput16(g *group, dst, src, lens, full, off Register, prefix string) {
	c := g.c
	t := c.temps()
	x := t.get()
	scr := GP64()
	LEAQ(Mem{Base: c.base, Disp: g.fr + frZ}, scr)
	// remaining sets r = lens[lane] − off and jumps to skip when the lane is
	// nil or done, to part when fewer than 64 bytes remain.
	remaining := func(lane int, r Register, skip, part string) {
		d := GP64()
		MOVQ(Mem{Base: dst, Disp: 8 * lane}, d)
		TESTQ(d, d)
		JZ(LabelRef(skip))
		MOVQ(Mem{Base: lens, Disp: 8 * lane}, r)
		SUBQ(off, r)
		JLE(LabelRef(skip))
		CMPQ(r, U8(64))
		JB(LabelRef(part))
	}
	// lowBits sets k to the low r (< 64) bits.
	lowBits := func(r Register, k Op) {
		m := GP64()
		MOVQ(I32(-1), m)
		BZHIQ(r, m, m)
		KMOVQ(m, k)
	}
	load := func(lane int, v Register, disp int) {
		r, s := GP64(), GP64()
		skip, part := fmt.Sprintf(prefix+"_lskip_%d", lane), fmt.Sprintf(prefix+"_lpart_%d", lane)
		remaining(lane, r, skip, part)
		MOVQ(Mem{Base: src, Disp: 8 * lane}, s)
		VPSHUFB(consts.Offset(cBswap), v, v)
		VPXORD(Mem{Base: s, Index: off, Scale: 1}, v, v)
		JMP(LabelRef(skip))
		Label(part)
		k := K()
		lowBits(r, k)
		MOVQ(Mem{Base: src, Disp: 8 * lane}, s)
		VPSHUFB(consts.Offset(cBswap), v, v)
		VMOVDQU8_Z(Mem{Base: s, Index: off, Scale: 1}, k, x)
		VPXORD(x, v, v)
		Label(skip)
	}
	store := func(lane int, v Register, disp int) {
		r, d := GP64(), GP64()
		skip, part := fmt.Sprintf(prefix+"_sskip_%d", lane), fmt.Sprintf(prefix+"_spart_%d", lane)
		remaining(lane, r, skip, part)
		MOVQ(Mem{Base: dst, Disp: 8 * lane}, d)
		VMOVDQU32(v, Mem{Base: d, Index: off, Scale: 1})
		JMP(LabelRef(skip))
		Label(part)
		k := K()
		lowBits(r, k)
		MOVQ(Mem{Base: dst, Disp: 8 * lane}, d)
		VMOVDQU8(v, k, Mem{Base: d, Index: off, Scale: 1})
		Label(skip)
	}
	fastLoad := func(lane int, v Register, disp int) {
		skip := fmt.Sprintf(prefix+"_flskip_%d", lane)
		xorSource16(lane, v, dst, src, off, 0, skip)
		Label(skip)
	}
	fastStore := func(lane int, v Register, disp int) {
		d := GP64()
		skip := fmt.Sprintf(prefix+"_fsskip_%d", lane)
		MOVQ(Mem{Base: dst, Disp: 8 * lane}, d)
		TESTQ(d, d)
		JZ(LabelRef(skip))
		VMOVDQU32(v, Mem{Base: d, Index: off, Scale: 1})
		Label(skip)
	}
	CMPQ(off, full)
	JAE(LabelRef(prefix + "_masked"))
	Comment("Every active lane has a whole block left.")
	t2 := c.allTemps()
	transpose16(&t2, scr, fastLoad, fastStore)
	JMP(LabelRef(prefix + "_next"))
	Label(prefix + "_masked")
	Comment("Last blocks: lengths checked, partial blocks masked.")
	transpose16(&t, scr, load, store)
	Label(prefix + "_next")
}

// genKeyStreamInit16: initialisation, then nblocks×16 keystream words of
// every lane to ks[c*stride:]. The state is consumed.
func genKeyStreamInit16() {
	TEXT(fn("initKeyStream"), 0, x16Sig(", ks *uint32, stride int, nblocks int, pf *[16]*byte"))
	Pragma("noescape")
	Doc(fn("initKeyStream")+" runs the initialisation of all 16 lanes of st, then",
		"writes nblocks×16 keystream words of each lane c to ks[c*stride:]. st is left undefined.",
		"While the rounds run it prefetches pf[c][64·b:64·b+64] for block b of every lane:",
		"the bytes the keystream will be applied to (pf[c] is only prefetched, never read).")
	_, ks, stride, n, c := keyStreamArgs16()
	pf := Load(Param("pf"), GP64())
	off := GP64()
	XORQ(off, off)
	prefetchSources16(pf, off, 0, 63)
	c.initRounds("iks16_init")
	Label("iks16_loop")
	prefetchSources16(pf, off, 127)
	ADDQ(U8(64), off)
	c.loadS1Tables()
	Comment("16 work rounds, both groups (ring offset 1 after the initialisation).")
	c.workBlock(1)
	c.output(storeKeyStream16(ks, stride))
	nextBlock16(ks, n, "iks16_loop")
	c.wipeFrame()
	VZEROUPPER()
	RET()
}

// genKeyStreamPair16 (GFNI emission only): initKeyStream16 on two states
// at once, as two interleaved ZMM groups (newPairZMM2), each on its own
// state, frame and keystream buffer: one group's R1/R2 recurrence runs in
// the other's latency. State a's keystream is stored as bytes (every word
// big-endian, the order an XOR applies them in), b's as words.
func genKeyStreamPair16() {
	TEXT(fn("initKeyStreamPair"), 0, fmt.Sprintf("func(a *[%d]uint32, b *[%d]uint32, ksA *byte, ksB *uint32, stride int, nblocks int, pf *[16]*byte)", stateRows*16, stateRows*16))
	Pragma("noescape")
	Doc(fn("initKeyStreamPair")+" runs the initialisation of all 16 lanes of a and of b, then",
		"writes nblocks×16 keystream words of each lane c of a to ksA[4*c*stride:] as big-endian",
		"bytes and of b to ksB[c*stride:] as words. a and b are left undefined. nblocks must be > 0.",
		"While the rounds run it prefetches pf[c][64·k:64·k+64] for block k of every lane (as",
		"initKeyStream16: the bytes the keystream will be applied to, only prefetched).")
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	ksA := Load(Param("ksA"), GP64())
	ksB := Load(Param("ksB"), GP64())
	stride := Load(Param("stride"), GP64())
	SHLQ(U8(2), stride)
	n := Load(Param("nblocks"), GP64())
	pf := Load(Param("pf"), GP64())
	off := GP64()
	XORQ(off, off)
	c := newPairZMM2()
	c.prologuePair([2]Register{a, b})
	prefetchSources16(pf, off, 0, 63)
	c.initRounds("iksp16_init")
	Label("iksp16_loop")
	prefetchSources16(pf, off, 127)
	ADDQ(U8(64), off)
	Comment("16 work rounds, both groups (ring offset 1 after the initialisation).")
	c.workBlock(1)
	c.g[0].output(func(lane int, v Register, disp int) {
		VPSHUFB(consts.Offset(cBswap), v, v)
		storeKeyStream16(ksA, stride)(lane, v, disp)
	})
	c.g[1].output(storeKeyStream16(ksB, stride))
	ADDQ(U8(64), ksA)
	nextBlock16(ksB, n, "iksp16_loop")
	c.wipeFrame()
	VZEROUPPER()
	RET()
}

// genXORKeyStreamPair16 (GFNI emission only): genXORInit16 on state a
// and genKeyStreamInit16 on state b in one call, as two interleaved ZMM
// groups (newPairZMM2): a's keystream XORed from src[c] into dst[c] for
// lens[c] bytes, b's written as words to ksB[c*stride:].
func genXORKeyStreamPair16() {
	TEXT(fn("initXORKeyStreamPair"), 0, fmt.Sprintf("func(a *[%d]uint32, b *[%d]uint32, dst *[16]*byte, src *[16]*byte, lens *[16]int, full int, ksB *uint32, stride int, nblocks int)", stateRows*16, stateRows*16))
	Pragma("noescape")
	Doc(fn("initXORKeyStreamPair")+" runs the initialisation of all 16 lanes of a and of b,",
		"then for nblocks blocks XORs a's keystream (words big-endian) from src[c] into dst[c]",
		"for lens[c] bytes, for every lane with dst[c] != nil (full as in initXORKeyStream),",
		"and writes b's keystream words of lane c to ksB[c*stride:]. nblocks×64 must cover the",
		"longest length. a and b are left undefined. nblocks must be > 0.")
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	c := newPairZMM2()
	c.prologuePair([2]Register{a, b})
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	lens := Load(Param("lens"), GP64())
	full := Load(Param("full"), GP64())
	ksB := Load(Param("ksB"), GP64())
	stride := Load(Param("stride"), GP64())
	SHLQ(U8(2), stride)
	n := Load(Param("nblocks"), GP64())
	off := GP64()
	XORQ(off, off)
	prefetchSources16(src, off, 0, 63)
	c.initRounds("ixksp16_init")
	Label("ixksp16_loop")
	prefetchSources16(src, off, 127)
	Comment("16 work rounds, both groups (ring offset 1 after the initialisation).")
	c.workBlock(1)
	xorOutput16(c.g[0], dst, src, lens, full, off, "ixksp16")
	c.g[1].output(storeKeyStream16(ksB, stride))
	ADDQ(U8(64), ksB)
	nextBlock16(off, n, "ixksp16_loop")
	c.wipeFrame()
	VZEROUPPER()
	RET()
}

// prefetchSources16 asks for the cache lines holding bytes off+disp of
// every lane's buffer (p[lane]: the XOR's sources, or the bytes a MAC will
// read with the keystream being generated; never nil, see the Go side's
// prefetchable) while the rounds of the current block compute. At a
// block's top, byte 127 ahead is the last byte of the next block, whose
// first line the previous prefetch (or the prologue's 0 and 63) already
// asked for; so every line is in flight one block, about 600 ns of rounds,
// before it is read. Written on another core (by the kernel's copy or a
// reader on another CPU), a line otherwise costs its load a cross-core
// fetch that the rounds of one block cannot hide. A prefetch never faults:
// past a lane's end it only fetches a line that is not used.
func prefetchSources16(p, off Register, disps ...int) {
	s := GP64()
	for lane := 0; lane < 16; lane++ {
		MOVQ(Mem{Base: p, Disp: 8 * lane}, s)
		for _, d := range disps {
			PREFETCHT0(Mem{Base: s, Index: off, Scale: 1, Disp: d})
		}
	}
}

// nextBlock16 advances p to the next 64-byte block of every lane, counts n
// down and loops back to loop while blocks remain.
func nextBlock16(p, n Register, loop string) {
	ADDQ(U8(64), p)
	DECQ(n)
	JNZ(LabelRef(loop))
}

// keyStreamArgs16 loads the arguments of a keystream kernel (st, ks,
// stride, in bytes, and nblocks) and emits the prologue of its pair.
func keyStreamArgs16() (st, ks, stride, nblocks Register, c *pair) {
	st = Load(Param("st"), GP64())
	ks = Load(Param("ks"), GP64())
	stride = Load(Param("stride"), GP64())
	SHLQ(U8(2), stride)
	nblocks = Load(Param("nblocks"), GP64())
	c = newPair()
	c.prologue(st)
	return st, ks, stride, nblocks, c
}

// storeKeyStream16 is the emitter that stores lane c's words at
// ks + c·stride (stride in bytes).
func storeKeyStream16(ks, stride Register) emitter {
	return func(lane int, v Register, disp int) {
		a := GP64()
		IMUL3Q(U32(lane), stride, a)
		VMOVDQU32(v, Mem{Base: ks, Index: a, Scale: 1, Disp: disp})
	}
}

// xorSource16 XORs lane's source bytes src[lane][off+disp:] into its
// keystream v (words byte-swapped to big endian first) and returns the
// register holding dst[lane]; it jumps to skip when dst[lane] is nil.
func xorSource16(lane int, v, dst, src, off Register, disp int, skip string) (d Register) {
	d, s := GP64(), GP64()
	MOVQ(Mem{Base: dst, Disp: 8 * lane}, d)
	TESTQ(d, d)
	JZ(LabelRef(skip))
	MOVQ(Mem{Base: src, Disp: 8 * lane}, s)
	VPSHUFB(consts.Offset(cBswap), v, v)
	VPXORD(Mem{Base: s, Index: off, Scale: 1, Disp: disp}, v, v)
	return d
}

// transpose16 transposes the 16 rows at scr (row i = word i of every lane;
// 64-byte aligned) into per-lane vectors and hands each lane's 16 words to
// emit: 4×4 dword transposes inside 128-bit lanes, written back, then 4×4
// transposes of 128-bit lanes. t supplies 8 ZMM temporaries. If load is
// not nil it is called for the four lanes of a group before emit is called
// for them, so that an XOR reads its four source blocks before it writes
// any destination (lane buffers a multiple of 4 KiB apart would otherwise
// make every load wait on the store before it: 4K aliasing).
//
// With 20 temporaries (and a load) all 16 lanes are loaded before any is
// stored: then no load of a block follows a store to the same address
// modulo 4 KiB whatever the lanes' placement.
func transpose16(t *pool, scr Register, load, emit emitter) {
	row := func(i int) Mem { return Mem{Base: scr, Disp: i * x16Row} }
	all := load != nil && len(*t) >= 20
	var held [4][4]Register
	Comment("Transpose 16×16 words: 4×4 inside 128-bit lanes, then 4×4 lanes.")
	for g := 0; g < 4; g++ {
		var r [4]Register
		for i := range r {
			r[i] = t.get()
			VMOVDQA64(row(4*g+i), r[i])
		}
		t0, t1, t2, t3 := t.get(), t.get(), t.get(), t.get()
		transposeDwords4(r[:], t0, t1, t2, t3)
		for i := range r {
			VMOVDQA64(r[i], row(4*g+i))
		}
		t.put(r[0], r[1], r[2], r[3], t0, t1, t2, t3)
	}
	for k := 0; k < 4; k++ {
		a, b, c, d := t.get(), t.get(), t.get(), t.get()
		VMOVDQA64(row(k), a)
		VMOVDQA64(row(4+k), b)
		VMOVDQA64(row(8+k), c)
		VMOVDQA64(row(12+k), d)
		p, q, r, s := t.get(), t.get(), t.get(), t.get()
		transposeLanes4(a, b, c, d, p, q, r, s) // lanes k, 4+k, 8+k, 12+k
		lanes := [4]Register{a, b, c, d}
		if load != nil {
			for i, v := range lanes {
				load(4*i+k, v, 0)
			}
		}
		t.put(p, q, r, s)
		if all {
			held[k] = lanes
			continue
		}
		for i, v := range lanes {
			emit(4*i+k, v, 0)
		}
		t.put(a, b, c, d)
	}
	if all {
		for k := range held {
			for i, v := range held[k] {
				emit(4*i+k, v, 0)
			}
		}
		for k := range held {
			t.put(held[k][:]...)
		}
	}
}
