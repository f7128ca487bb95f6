package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The uBlock rounds on register pairs: the round-key records, one
// encryption round (and its VPERMB form), one decryption round, and the
// loop over the rounds of a pass.

// roundKeys returns the four vectors of the record at K: registers on
// AVX-512 (loaded once per round for all pairs), memory operands on AVX2.
func (g *kern) roundKeys(K GPVirtual) [4]Op {
	var k [4]Op
	for i := range k {
		m := Mem{Base: K, Disp: 64 * i}
		if g.a.zmm {
			k[i] = g.reg(m)
		} else {
			k[i] = m
		}
	}
	return k
}

// encRound emits one encryption round (notes §4) on the pair (A, B) with
// the round key record k.
func (g *kern) encRound(A, B VecVirtual, k [4]Op) {
	a := g.a
	var h [2]VecVirtual
	for i, x := range []VecVirtual{A, B} {
		h[i] = a.vec()
		if a.zmm {
			// lo = (x ⊕ k) ∧ 0f, hi = ((x ≫ 4) ⊕ (k ≫ 4)) ∧ 0f.
			VPSRLW(U8(4), x, h[i])
			VPTERNLOGD(U8(0x48), k[i], g.mask, x)
			VPTERNLOGD(U8(0x48), k[2+i], g.mask, h[i])
		} else {
			a.xor(k[i], x, x)
			VPSRLW(U8(4), x, h[i])
			VPAND(g.mask, h[i], h[i])
			VPAND(g.mask, x, x)
		}
		VPSHUFB(x, g.tlo, x)
		VPSHUFB(h[i], g.thi, h[i])
	}
	// X0 = S(X0), X1 = S(X1) ⊕ X0.
	a.xor(h[0], A, A)
	if a.zmm {
		VPTERNLOGD(U8(0x96), A, h[1], B)
	} else {
		a.xor(h[1], B, B)
		a.xor(A, B, B)
	}
	t := a.vec()
	a.rol(4, B, t)
	a.xor(t, A, A)
	a.rol(8, A, t)
	a.xor(t, B, B)
	a.rol(8, B, t)
	a.xor(t, A, A)
	a.rol(20, A, t)
	a.xor(t, B, B)
	a.xor(B, A, A)
	VPSHUFB(g.pl, A, A)
	VPSHUFB(g.pr, B, B)
}

// vbmiRound emits one encryption round on (A, B) = (X0 ⊕ k(X0), X1 ⊕
// k(X1)), the S-box inputs, and leaves the next round's inputs there: the
// S-box is one VPERMB per nibble from 64-entry tables in registers (S of
// the index's low nibble), whose 6-bit index makes the 0x0f masks
// unnecessary; the
// last step of the linear layer, X0 ⊕= X1, and the next round key fold
// into one VPTERNLOGD before PL, the key taken as kA = PL⁻¹(k(X0)) so
// PL(X0 ⊕ X1 ⊕ kA) = PL(X0 ⊕ X1) ⊕ k(X0). 20 instructions per pair and
// round (the AVX512 round: 23).
func (g *kern) vbmiRound(A, B, kA, kB VecVirtual) {
	a := g.a
	hA, hB := a.vec(), a.vec()
	VPSRLW(U8(4), A, hA)
	VPSRLW(U8(4), B, hB)
	VPERMB(g.tlo, A, A)
	VPERMB(g.thi, hA, hA)
	VPERMB(g.tlo, B, B)
	VPERMB(g.thi, hB, hB)
	a.xor(hA, A, A)
	VPTERNLOGD(U8(0x96), A, hB, B)
	t := a.vec()
	a.rol(4, B, t)
	a.xor(t, A, A)
	a.rol(8, A, t)
	a.xor(t, B, B)
	a.rol(8, B, t)
	a.xor(t, A, A)
	a.rol(20, A, t)
	a.xor(t, B, B)
	VPTERNLOGD(U8(0x96), kA, B, A)
	VPSHUFB(g.pl, A, A)
	VPSHUFB(g.pr, B, B)
	a.xor(kB, B, B)
}

// decRound emits one decryption round (notes §4.2) with the round key
// record k.
func (g *kern) decRound(A, B VecVirtual, k [4]Op) {
	a := g.a
	VPSHUFB(g.pl, A, A)
	VPSHUFB(g.pr, B, B)
	t := a.vec()
	a.xor(B, A, A)
	a.rol(20, A, t)
	a.xor(t, B, B)
	a.rol(8, B, t)
	a.xor(t, A, A)
	a.rol(8, A, t)
	a.xor(t, B, B)
	a.rol(4, B, t)
	a.xor(t, A, A)
	a.xor(A, B, B)
	for i, x := range []VecVirtual{A, B} {
		h := a.vec()
		VPSRLW(U8(4), x, h)
		a.and(g.mask, h, h)
		a.and(g.mask, x, x)
		VPSHUFB(x, g.tlo, x)
		VPSHUFB(h, g.thi, h)
		if a.zmm {
			VPTERNLOGD(U8(0x96), k[i], h, x)
		} else {
			a.xor(h, x, x)
			a.xor(k[i], x, x)
		}
	}
}

// rounds emits the cipher on the pairs with the round-key table at rk and
// the round count in rounds (a register it consumes).
func (g *kern) rounds(A, B []VecVirtual, rk, rounds GPVirtual) {
	K := GP64()
	loop := fmt.Sprintf("%s_rounds%d", g.name, len(A))
	if g.a.vbmi {
		for p := range A {
			g.a.xor(Mem{Base: rk}, A[p], A[p])
			g.a.xor(Mem{Base: rk, Disp: 64}, B[p], B[p])
		}
		LEAQ(Mem{Base: rk, Disp: recordBytes}, K)
		Label(loop)
		kA, kB := g.reg(Mem{Base: K, Disp: 256}), g.reg(Mem{Base: K, Disp: 64})
		for p := range A {
			g.vbmiRound(A[p], B[p], kA, kB)
		}
		ADDQ(U32(recordBytes), K)
		DECQ(rounds)
		JNZ(LabelRef(loop))
		return
	}
	if !g.dec {
		MOVQ(rk, K)
		Label(loop)
		k := g.roundKeys(K)
		for p := range A {
			g.encRound(A[p], B[p], k)
		}
		ADDQ(U32(recordBytes), K)
		DECQ(rounds)
		JNZ(LabelRef(loop))
		for p := range A {
			g.a.xor(Mem{Base: K}, A[p], A[p])
			g.a.xor(Mem{Base: K, Disp: 64}, B[p], B[p])
		}
		return
	}
	IMUL3Q(U32(recordBytes), rounds, K)
	ADDQ(rk, K)
	for p := range A {
		g.a.xor(Mem{Base: K}, A[p], A[p])
		g.a.xor(Mem{Base: K, Disp: 64}, B[p], B[p])
	}
	Label(loop)
	SUBQ(U32(recordBytes), K)
	k := g.roundKeys(K)
	for p := range A {
		g.decRound(A[p], B[p], k)
	}
	DECQ(rounds)
	JNZ(LabelRef(loop))
}
