package main

import (
	"fmt"
	"os"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The bitsliced kernel: uBlock-128 encryption (16 or 24 rounds) of 512
// blocks per pass on ZMM registers, one 64-byte bit plane per state bit
// (AVX-512 F/BW only).
//
// Layout. A pass is 8192 bytes = 128 rows of 64 bytes (row k holds blocks
// 4k … 4k+3, one per 128-bit lane). The forward transpose is
//
//	F1: in each group of 16 rows (g = k>>4) and each lane, a 16×16 byte
//	    transpose (four levels of VPUNPCK{L,H}BW, in registers);
//	F2: for each byte position p, an 8×8 bit transpose across the 8 rows
//	    16g+p (three SWAPMOVE levels with shifts 1, 2, 4).
//
// Afterwards plane (p, r), bit r (0 = least significant) of block byte p,
// is at slot 16r+p of the state buffer. Both steps are involutions, so the
// inverse runs F2 then F1 with the same code.
//
// Round on planes (bsModel is the Go model of exactly this, checked
// against a table-based uBlock before emission):
//
//	S layer    4 VPTERNLOGD per nibble (bsSBoxProgram: two output bits
//	           are 3-input functions of the input bits, the other two
//	           3-input functions of inputs and those)
//	linear     per 32-bit word position j and nibble bit q, 16 planes
//	           (8 nibbles of X0, 8 of X1): the rotations <<<_32 4m are
//	           nibble renaming, and the six XOR steps are five VPTERNLOGD/
//	           VPXORD levels (bsLinear); the next round key is folded into
//	           the last two with an embedded-broadcast dword mask
//	PL, PR     renaming: the outputs are stored at their permuted slots
//
// The S layer has no pass of its own: each linear group computes bit q of
// S for its 16 nibbles from the state (sboxBit: 1 to 3 VPTERNLOGD and 3
// or 4 loads per bit), so a round stores only its 128 output planes (a
// separate S pass, storing 128 planes more, measured 823 cycles a round
// on Zen 4 against 631).
//
// RK_0 is XORed in at the end of the forward transpose. The key table
// (kernels/ublock.BitslicedKey) holds per round key 128 dwords, 0 or
// 0xffffffff, at the slot of the output they are XORed into (bsKeyTable).
// Everything is straight-line or counted by public lengths: constant time.

const (
	bsPassBytes  = 8192
	bsKeyRecord  = 512 // 128 dword masks
	bsPlaneBytes = 64
	// bsGap separates the two 8 KiB buffers so that a slot of one and
	// the same slot of the other are not 4 KiB apart (the loads of the
	// linear layer would wait on unrelated stores: 4K aliasing).
	bsGap = 1024 + 64*5
)

// bsSlot is the state-buffer slot of plane (p, r).
func bsSlot(p, r int) int { return 16*r + p }

// bsNibblePlane returns the byte p and bit r of bit q of nibble n (0 = the
// most significant) of word j of half h.
func bsNibblePlane(h, j, n, q int) (p, r int) {
	p = 8*h + 4*j + n/2
	r = q
	if n%2 == 0 {
		r += 4
	}
	return p, r
}

// ---- the S-box circuit ----

// sbStep computes wire out = ternlog(imm; args), args[0] the truth-table
// index bit 2 (VPTERNLOGD's destination operand), args[2] bit 0. Wires
// 0..3 are the input bits x0..x3 (x0 the least significant), 4..7 the
// output bits.
type sbStep struct {
	out  int
	args [3]int
	imm  uint8
}

func tern(imm uint8, a, b, c uint16) uint16 {
	var r uint16
	for m := 0; m < 16; m++ {
		i := (a>>m&1)<<2 | (b>>m&1)<<1 | c>>m&1
		r |= uint16(imm>>i&1) << m
	}
	return r
}

// ternImm returns the immediate with out = ternlog(imm; a, b, c) on the
// 16 minterms, if there is one.
func ternImm(out, a, b, c uint16) (uint8, bool) {
	var imm, set uint8
	for m := 0; m < 16; m++ {
		i := (a>>m&1)<<2 | (b>>m&1)<<1 | c>>m&1
		v := uint8(out >> m & 1)
		switch {
		case set>>i&1 == 0:
			set |= 1 << i
			imm |= v << i
		case imm>>i&1 != v:
			return 0, false
		}
	}
	return imm, true
}

// sbTables returns the truth tables (over the 16 inputs) of the input and
// output bits of S.
func sbTables() (tt [8]uint16) {
	for m := 0; m < 16; m++ {
		for i := 0; i < 4; i++ {
			tt[i] |= uint16(m>>i&1) << m
			tt[4+i] |= uint16(sbox[m]>>i&1) << m
		}
	}
	return tt
}

// bsSBoxProgram finds a VPTERNLOGD program for S: repeatedly the first
// output bit (in a fixed order) that is a ternary function of three wires
// already computed, inputs first. It panics if some output bit has no such
// form, and checks the program on all 16 inputs against the table.
func bsSBoxProgram() []sbStep {
	tt := sbTables()
	have := []int{0, 1, 2, 3}
	done := map[int]bool{}
	var prog []sbStep
	for len(prog) < 4 {
		found := false
		for o := 4; o < 8 && !found; o++ {
			if done[o] {
				continue
			}
			for a := 0; a < len(have) && !found; a++ {
				for b := a + 1; b < len(have) && !found; b++ {
					for c := b + 1; c < len(have) && !found; c++ {
						args := [3]int{have[a], have[b], have[c]}
						if imm, ok := ternImm(tt[o], tt[args[0]], tt[args[1]], tt[args[2]]); ok {
							prog = append(prog, sbStep{out: o, args: args, imm: imm})
							done[o], found = true, true
							have = append(have, o)
						}
					}
				}
			}
		}
		if !found {
			panic("ublock bitsliced: no 4-instruction VPTERNLOGD program for S")
		}
	}
	// Check on every input.
	for x := 0; x < 16; x++ {
		var w [8]uint16
		for i := 0; i < 4; i++ {
			w[i] = uint16(x >> i & 1 * 0xffff)
		}
		for _, s := range prog {
			w[s.out] = tern(s.imm, w[s.args[0]], w[s.args[1]], w[s.args[2]])
		}
		var y byte
		for i := 0; i < 4; i++ {
			y |= byte(w[4+i]&1) << i
		}
		if y != sbox[x] {
			panic(fmt.Sprintf("ublock bitsliced: S-box program wrong at %x", x))
		}
	}
	return prog
}

// ---- the key table ----

// bsKeyTable lays out round keys RK_0 … RK_rounds (16 bytes each) as the
// kernel reads them: record i (bsKeyRecord bytes) holds at dword
// bsSlot(p, r) the mask of the key bit XORed into plane (p, r): for i = 0
// bit r of RK_0 byte p; for i ≥ 1 that bit of RK_i for the X1 planes, and
// for the X0 planes that bit XOR the bit of the X1 plane the last linear
// step XORs into them (8+PR⁻¹[PL[p]]), which already carries its own key.
// kernels/ublock.BitslicedKey.Init is the same function.
func bsKeyTable(rk []byte, rounds int) []uint32 {
	bit := func(i, p, r int) uint32 { return uint32(rk[16*i+p]>>r&1) * 0xffffffff }
	prInv := invPerm(pr128)
	t := make([]uint32, (rounds+1)*128)
	for i := 0; i <= rounds; i++ {
		for p := 0; p < 16; p++ {
			for r := 0; r < 8; r++ {
				m := bit(i, p, r)
				if i > 0 && p < 8 {
					m ^= bit(i, 8+prInv[pl128[p]], r)
				}
				t[128*i+bsSlot(p, r)] = m
			}
		}
	}
	return t
}

// ---- the Go model ----

// bsLinear runs the linear layer of one group (word j, nibble bit q) on
// a[n], b[n] (X0 and X1 nibble n bit q), returning the outputs before the
// key: the five levels the kernel emits.
func bsLinear(a, b [8]uint64) (a5, b4 [8]uint64) {
	var a1, b2, a3 [8]uint64
	for n := 0; n < 8; n++ {
		a1[n] = a[n] ^ b[(n+1)%8] ^ a[(n+1)%8]
	}
	for n := 0; n < 8; n++ {
		b2[n] = b[n] ^ a[n] ^ a1[(n+2)%8]
	}
	for n := 0; n < 8; n++ {
		a3[n] = a1[n] ^ b2[(n+2)%8]
	}
	for n := 0; n < 8; n++ {
		b4[n] = b2[n] ^ a3[(n+5)%8]
	}
	for n := 0; n < 8; n++ {
		a5[n] = a3[n] ^ b4[n]
	}
	return a5, b4
}

// bsModel encrypts 64 blocks with the plane-level algorithm (state as 128
// slots of 64-bit planes, the S-box program, bsLinear, renamed stores,
// bsKeyTable masks) and compares with a table-based uBlock.
func bsModel(prog []sbStep) {
	x := uint32(0x2545f491)
	rnd := func() byte { x = x*1664525 + 1013904223; return byte(x >> 24) }
	for _, rounds := range []int{16, 24} {
		rk := make([]byte, 16*(rounds+1))
		for i := range rk {
			rk[i] = rnd()
		}
		km := bsKeyTable(rk, rounds)
		var blocks [64][16]byte
		var st [128]uint64
		for i := range blocks {
			for p := range blocks[i] {
				blocks[i][p] = rnd()
				for r := 0; r < 8; r++ {
					st[bsSlot(p, r)] |= uint64(blocks[i][p]>>r&1) << i
				}
			}
		}
		mask := func(i, slot int) uint64 { return uint64(km[128*i+slot]) | uint64(km[128*i+slot])<<32 }
		for s := range st {
			st[s] ^= mask(0, s)
		}
		plInv, prInv := invPerm(pl128), invPerm(pr128)
		for i := 0; i < rounds; i++ {
			for p := 0; p < 16; p++ {
				for hi := 0; hi < 2; hi++ {
					var w [8]uint64
					for q := 0; q < 4; q++ {
						w[q] = st[bsSlot(p, 4*hi+q)]
					}
					for _, s := range prog {
						w[s.out] = tern64(s.imm, w[s.args[0]], w[s.args[1]], w[s.args[2]])
					}
					for q := 0; q < 4; q++ {
						st[bsSlot(p, 4*hi+q)] = w[4+q]
					}
				}
			}
			var nx [128]uint64
			for j := 0; j < 2; j++ {
				for q := 0; q < 4; q++ {
					var a, b [8]uint64
					for n := 0; n < 8; n++ {
						pa, r := bsNibblePlane(0, j, n, q)
						pb, _ := bsNibblePlane(1, j, n, q)
						a[n], b[n] = st[bsSlot(pa, r)], st[bsSlot(pb, r)]
					}
					a5, b4 := bsLinear(a, b)
					for n := 0; n < 8; n++ {
						pa, r := bsNibblePlane(0, j, n, q)
						da, db := bsSlot(plInv[pa], r), bsSlot(8+prInv[pa], r)
						nx[db] = b4[n] ^ mask(i+1, db)
						nx[da] = a5[n] ^ mask(i+1, db) ^ mask(i+1, da)
					}
				}
			}
			st = nx
		}
		for i := range blocks {
			want := bsRefEncrypt(rk, rounds, blocks[i])
			for p := 0; p < 16; p++ {
				var got byte
				for r := 0; r < 8; r++ {
					got |= byte(st[bsSlot(p, r)]>>i&1) << r
				}
				if got != want[p] {
					panic(fmt.Sprintf("ublock bitsliced: plane model wrong (%d rounds, block %d byte %d)", rounds, i, p))
				}
			}
		}
	}
}

func tern64(imm uint8, a, b, c uint64) uint64 {
	var r uint64
	for i := 0; i < 8; i++ {
		if imm>>i&1 == 0 {
			continue
		}
		t := ^uint64(0)
		for k, v := range [3]uint64{a, b, c} {
			if i>>(2-k)&1 == 1 {
				t &= v
			} else {
				t &= ^v
			}
		}
		r |= t
	}
	return r
}

// bsRefEncrypt is table-based uBlock-128 encryption (notes §4) for
// bsModel, with the round keys given.
func bsRefEncrypt(rk []byte, rounds int, blk [16]byte) [16]byte {
	word := func(h []byte, w int) uint32 {
		return uint32(h[4*w])<<24 | uint32(h[4*w+1])<<16 | uint32(h[4*w+2])<<8 | uint32(h[4*w+3])
	}
	put := func(h []byte, w int, v uint32) {
		h[4*w], h[4*w+1], h[4*w+2], h[4*w+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	rot := func(h []byte, s int) []byte {
		o := make([]byte, 8)
		for w := 0; w < 2; w++ {
			v := word(h, w)
			put(o, w, v<<s|v>>(32-s))
		}
		return o
	}
	xor := func(a, b []byte) {
		for i := range a {
			a[i] ^= b[i]
		}
	}
	perm := func(h []byte, p []int) {
		in := append([]byte(nil), h...)
		for i := range p {
			h[i] = in[p[i]]
		}
	}
	x0, x1 := blk[:8], blk[8:]
	for i := 0; i < rounds; i++ {
		xor(blk[:], rk[16*i:16*i+16])
		for k := range blk {
			blk[k] = sbox[blk[k]>>4]<<4 | sbox[blk[k]&15]
		}
		xor(x1, x0)
		xor(x0, rot(x1, 4))
		xor(x1, rot(x0, 8))
		xor(x0, rot(x1, 8))
		xor(x1, rot(x0, 20))
		xor(x0, x1)
		perm(x0, pl128)
		perm(x1, pr128)
	}
	xor(blk[:], rk[16*rounds:16*rounds+16])
	return blk
}

// ---- the emitter ----

var zr = [32]VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
	Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}

// bsCount counts the instructions of one pass by kind.
type bsCount struct{ vec, moves, loads, stores, memOps int }

type bsGen struct {
	prog []sbStep
	tt   [8]uint16
	n    *bsCount // counting target (the part being emitted); nil: none
	mul  int      // how many times the code being emitted runs per pass
}

func (g *bsGen) load(m Mem, z VecPhysical) {
	VMOVDQU64(m, z)
	g.n.loads += g.mul
}

func (g *bsGen) store(z VecPhysical, m Mem) {
	VMOVDQU64(z, m)
	g.n.stores += g.mul
}

func (g *bsGen) vop(mem bool) {
	g.n.vec += g.mul
	if mem {
		g.n.memOps += g.mul
	}
}

// immFor returns the immediate of the function with truth table out of
// the operands with tables a (the destination), b and c.
func (g *bsGen) immFor(out, a, b, c uint16) uint8 {
	imm, ok := ternImm(out, a, b, c)
	if !ok {
		panic("ublock bitsliced: operand order has no immediate")
	}
	return imm
}

// bsRing hands out temporaries in turn (a cone of S uses far fewer than
// the ring holds, so none is reused while live).
type bsRing struct {
	regs []VecPhysical
	next int
}

func (r *bsRing) get() VecPhysical {
	z := r.regs[r.next%len(r.regs)]
	r.next++
	return z
}

// sboxBit emits output bit q of S on the nibble (p, hi) of the state at
// base into dst: the steps of the program that bit depends on, the
// destination operand of each chosen top-down (an intermediate dying
// there, computed in place; else an input used once, loaded straight
// into the destination; else a copy), an input used once elsewhere as
// the memory operand, other inputs loaded once into temporaries.
func (g *bsGen) sboxBit(base GPPhysical, p, hi, q int, dst VecPhysical, ring *bsRing) {
	// The cone of output wire 4+q, in program order.
	need := map[int]bool{4 + q: true}
	var cone []sbStep
	for k := len(g.prog) - 1; k >= 0; k-- {
		s := g.prog[k]
		if need[s.out] {
			cone = append([]sbStep{s}, cone...)
			for _, a := range s.args {
				need[a] = true
			}
		}
	}
	uses := map[int]int{}
	for _, s := range cone {
		for _, a := range s.args {
			uses[a]++
		}
	}
	mem := func(w int) Mem { return Mem{Base: base, Disp: bsPlaneBytes * bsSlot(p, 4*hi+w)} }
	// Plan: target register and destination argument of every step.
	target := map[int]VecPhysical{4 + q: dst}
	dstArg := map[int]int{}
	for k := len(cone) - 1; k >= 0; k-- {
		s := cone[k]
		t, ok := target[s.out]
		if !ok {
			t = ring.get()
			target[s.out] = t
		}
		d := -1
		for _, a := range s.args { // an intermediate used only here
			if a >= 4 && uses[a] == 1 {
				d = a
				target[a] = t
				break
			}
		}
		for _, a := range s.args { // else an input used only here
			if d < 0 && a < 4 && uses[a] == 1 {
				d = a
			}
		}
		if d < 0 {
			d = s.args[0] // copied
		}
		dstArg[s.out] = d
	}
	inReg := map[int]VecPhysical{}
	regOf := func(w int) VecPhysical {
		if z, ok := inReg[w]; ok {
			return z
		}
		if w >= 4 {
			return target[w]
		}
		z := ring.get()
		g.load(mem(w), z)
		inReg[w] = z
		return z
	}
	for _, s := range cone {
		t, d := target[s.out], dstArg[s.out]
		switch {
		case d >= 4 && uses[d] == 1:
			// computed in t already
		case d < 4 && uses[d] == 1:
			g.load(mem(d), t)
		default:
			VMOVDQA64(regOf(d), t)
			g.n.moves += g.mul
		}
		var rest []int
		skipped := false
		for _, a := range s.args {
			if a == d && !skipped {
				skipped = true
				continue
			}
			rest = append(rest, a)
		}
		// The memory operand (last): an input used only here.
		if rest[0] < 4 && uses[rest[0]] == 1 && !(rest[1] < 4 && uses[rest[1]] == 1) {
			rest[0], rest[1] = rest[1], rest[0]
		}
		b := regOf(rest[0])
		var c Op
		isMem := rest[1] < 4 && uses[rest[1]] == 1
		if isMem {
			c = mem(rest[1])
			g.n.loads += g.mul
		} else {
			c = regOf(rest[1])
		}
		imm := g.immFor(g.tt[s.out], g.tt[d], g.tt[rest[0]], g.tt[rest[1]])
		VPTERNLOGD(U8(imm), c, b, t)
		g.vop(false)
	}
}

// linear emits the linear layer, PL/PR and the next key for group (j, q):
// bit q of S of its 16 nibbles from cur, bsLinear's five levels, 16 stores to nxt at the
// permuted slots; kp points at the key record.
func (g *bsGen) linear(cur, nxt, kp GPPhysical, j, q int) {
	plInv, prInv := invPerm(pl128), invPerm(pr128)
	A, B, A1 := zr[0:8], zr[8:16], zr[16:24]
	// Bit q of S of every nibble of the group, from the state before the
	// S layer (sboxBit), temporaries from Z16–Z31.
	ring := &bsRing{regs: zr[16:32]}
	for n := 0; n < 8; n++ {
		pa, _ := bsNibblePlane(0, j, n, q)
		pb, _ := bsNibblePlane(1, j, n, q)
		hi := 1 - n%2
		g.sboxBit(cur, pa, hi, q, A[n], ring)
		g.sboxBit(cur, pb, hi, q, B[n], ring)
	}
	const x3 = 0x96 // a ⊕ b ⊕ c
	for n := 0; n < 8; n++ {
		VMOVDQA64(A[n], A1[n])
		VPTERNLOGD(U8(x3), A[(n+1)%8], B[(n+1)%8], A1[n])
		g.n.moves += g.mul
		g.vop(false)
	}
	for n := 0; n < 8; n++ {
		VPTERNLOGD(U8(x3), A1[(n+2)%8], A[n], B[n])
		g.vop(false)
	}
	for n := 0; n < 8; n++ {
		VPXORD(B[(n+2)%8], A1[n], A1[n])
		g.vop(false)
	}
	dst := func(n int) (da, db int) {
		pa, r := bsNibblePlane(0, j, n, q)
		return bsSlot(plInv[pa], r), bsSlot(8+prInv[pa], r)
	}
	for n := 0; n < 8; n++ {
		_, db := dst(n)
		VPTERNLOGD_BCST(U8(x3), Mem{Base: kp, Disp: 4 * db}, A1[(n+5)%8], B[n])
		g.vop(true)
	}
	for n := 0; n < 8; n++ {
		da, db := dst(n)
		VPTERNLOGD_BCST(U8(x3), Mem{Base: kp, Disp: 4 * da}, B[n], A1[n])
		g.vop(true)
		g.store(B[n], Mem{Base: nxt, Disp: bsPlaneBytes * db})
	}
	for n := 0; n < 8; n++ {
		da, _ := dst(n)
		g.store(A1[n], Mem{Base: nxt, Disp: bsPlaneBytes * da})
	}
}

// f1 emits F1 on one group of 16 rows: in(k) to out(k), k = 0..15, in
// registers (Z0–Z15 and Z16–Z31 in turn).
func (g *bsGen) f1(in, out func(k int) Mem) {
	cur, nxt := zr[0:16], zr[16:32]
	for k := 0; k < 16; k++ {
		g.load(in(k), cur[k])
	}
	for lvl := 0; lvl < 4; lvl++ {
		for k := 0; k < 8; k++ {
			VPUNPCKLBW(cur[k+8], cur[k], nxt[2*k])
			VPUNPCKHBW(cur[k+8], cur[k], nxt[2*k+1])
			g.vop(false)
			g.vop(false)
		}
		cur, nxt = nxt, cur
	}
	for k := 0; k < 16; k++ {
		g.store(cur[k], out(k))
	}
}

// f2Masks loads the SWAPMOVE masks: for s = 1, 2, 4 the bytes 0x55,
// 0x33, 0x0f (Z26–Z28) and the same shifted left by s (Z29–Z31).
func (g *bsGen) f2Masks() {
	for i, v := range []uint32{0x55555555, 0x33333333, 0x0f0f0f0f} {
		MOVL(U32(v), EBX)
		VPBROADCASTD(EBX, zr[26+i])
		MOVL(U32(v<<(1<<i)), EBX)
		VPBROADCASTD(EBX, zr[29+i])
	}
}

// f2 emits F2 on 8 rows: in(a) to out(a), a = 0..7; post, if set, runs on
// each output register before its store.
func (g *bsGen) f2(in, out func(a int) Mem, post func(a int, z VecPhysical)) {
	z := zr[0:8]
	for a := 0; a < 8; a++ {
		g.load(in(a), z[a])
	}
	// b' = m ? a≫s : b, a' = (m≪s) ? b≪s : a.
	for li, s := range []int{1, 2, 4} {
		m, ms := zr[26+li], zr[29+li]
		pair := 0
		for a := 0; a < 8; a++ {
			if a&s != 0 {
				continue
			}
			b := a + s
			t1, t2 := zr[8+2*pair], zr[9+2*pair]
			pair++
			VPSRLW(U8(s), z[a], t1)
			VPSLLW(U8(s), z[b], t2)
			// dst z[b] = m ? t1 : z[b]: truth index (zb, t1, m) → f = m ? t1 : zb.
			VPTERNLOGD(U8(selImm(2, 1, 0)), m, t1, z[b])
			VPTERNLOGD(U8(selImm(2, 1, 0)), ms, t2, z[a])
			for i := 0; i < 4; i++ {
				g.vop(false)
			}
		}
	}
	for a := 0; a < 8; a++ {
		if post != nil {
			post(a, z[a])
		}
		g.store(z[a], out(a))
	}
}

// selImm is the immediate of f = c ? b : a for operands (a, b, c) at
// truth-table index bits (ia, ib, ic).
func selImm(ia, ib, ic int) int {
	imm := 0
	for i := 0; i < 8; i++ {
		a, b, c := i>>ia&1, i>>ib&1, i>>ic&1
		v := a
		if c == 1 {
			v = b
		}
		imm |= v << i
	}
	return imm
}

// genBitsliced emits encryptBitsliced128AVX512.
func genBitsliced() {
	prog := bsSBoxProgram()
	bsModel(prog)
	g := &bsGen{prog: prog, tt: sbTables()}
	name := "encryptBitsliced128AVX512"
	TEXT(name, 0, "func(km *byte, rounds int, dst, src *byte, npasses int)")
	Pragma("noescape")
	Doc(name+" encrypts npasses × 512 blocks of 16 bytes from src to dst with uBlock-128 (rounds 16 or 24) under the bitsliced key table km (kernels/ublock.BitslicedKey layout), bitsliced on ZMM registers (AVX-512 F/BW): one bit plane per state bit, VPTERNLOGD S-box and linear layer, PL and PR as renaming.",
		"The 16 KiB stack area that held the planes is zeroed before return.")
	frame := AllocLocal(2*bsPassBytes + bsGap + 64)
	Load(Param("km"), RSI)
	Load(Param("rounds"), RDX)
	Load(Param("dst"), R8)
	Load(Param("src"), R9)
	Load(Param("npasses"), R10)
	LEAQ(frame, R11)
	ADDQ(U8(63), R11)
	ANDQ(I8(-64), R11)
	LEAQ(Mem{Base: R11, Disp: bsPassBytes + bsGap}, RDI) // buffer B; R11 is buffer A
	var fwd, rnd, inv, total bsCount
	TESTQ(R10, R10)
	JZ(LabelRef(name + "_wipe"))
	Label(name + "_pass")

	Comment("Blocks to planes: F1 (src rows into buffer B), then F2 (B into the planes of A) with RK_0.")
	g.n, g.mul = &fwd, 1
	for grp := 0; grp < 8; grp++ {
		g.f1(func(k int) Mem { return Mem{Base: R9, Disp: 64 * (16*grp + k)} },
			func(k int) Mem { return Mem{Base: RDI, Disp: 64 * (16*grp + k)} })
	}
	g.f2Masks()
	for p := 0; p < 16; p++ {
		g.f2(func(a int) Mem { return Mem{Base: RDI, Disp: 64 * (16*a + p)} },
			func(r int) Mem { return Mem{Base: R11, Disp: bsPlaneBytes * bsSlot(p, r)} },
			func(r int, z VecPhysical) {
				VPXORD_BCST(Mem{Base: RSI, Disp: 4 * bsSlot(p, r)}, z, z)
				g.vop(true)
			})
	}

	Comment("Rounds: per word position and nibble bit, the S-box bits from cur (R12), the linear layer and the next key into nxt (R13).")
	MOVQ(R11, R12)
	MOVQ(RDI, R13)
	LEAQ(Mem{Base: RSI, Disp: bsKeyRecord}, RAX)
	MOVQ(RDX, RCX)
	Label(name + "_round")
	g.n, g.mul = &rnd, 1
	for j := 0; j < 2; j++ {
		for q := 0; q < 4; q++ {
			g.linear(R12, R13, RAX, j, q)
		}
	}
	XCHGQ(R12, R13)
	ADDQ(U32(bsKeyRecord), RAX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_round"))

	Comment("Planes to blocks: F2 (cur into the rows of nxt), then F1 (nxt into dst).")
	g.n, g.mul = &inv, 1
	g.f2Masks()
	for p := 0; p < 16; p++ {
		g.f2(func(r int) Mem { return Mem{Base: R12, Disp: bsPlaneBytes * bsSlot(p, r)} },
			func(a int) Mem { return Mem{Base: R13, Disp: 64 * (16*a + p)} }, nil)
	}
	for grp := 0; grp < 8; grp++ {
		g.f1(func(k int) Mem { return Mem{Base: R13, Disp: 64 * (16*grp + k)} },
			func(k int) Mem { return Mem{Base: R8, Disp: 64 * (16*grp + k)} })
	}
	ADDQ(U32(bsPassBytes), R8)
	ADDQ(U32(bsPassBytes), R9)
	DECQ(R10)
	JNZ(LabelRef(name + "_pass"))

	Comment("Zero the planes and rows (16 KiB).")
	Label(name + "_wipe")
	VPXORD(Z0, Z0, Z0)
	MOVQ(U32((2*bsPassBytes+bsGap)/64), RCX)
	Label(name + "_wipeloop")
	VMOVDQU64(Z0, Mem{Base: R11})
	ADDQ(U8(64), R11)
	DECQ(RCX)
	JNZ(LabelRef(name + "_wipeloop"))
	VZEROUPPER()
	RET()

	for _, c := range []*bsCount{&fwd, &inv} {
		total.vec += c.vec
		total.loads += c.loads
		total.stores += c.stores
		total.memOps += c.memOps
		total.moves += c.moves
	}
	fmt.Fprintf(os.Stderr, "ublock bitsliced: S-box %d VPTERNLOGD; per pass: forward transpose %+v, per round %+v, inverse transpose %+v\n",
		len(prog), fwd, rnd, inv)
	for _, r := range []int{16, 24} {
		fmt.Fprintf(os.Stderr, "ublock bitsliced: %d rounds: %d vector ops (%d with a broadcast key operand), %d register moves, %d loads, %d stores per 512 blocks\n",
			r, total.vec+r*rnd.vec, total.memOps+r*rnd.memOps, total.moves+r*rnd.moves, total.loads+r*rnd.loads, total.stores+r*rnd.stores)
	}
}
