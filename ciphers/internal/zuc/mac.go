package zuc

import (
	"encoding/binary"
	"math/bits"
)

// The MACs of the ZUC family are linear in the message: every message bit
// m_i that is 1 XORs a keystream window starting at bit i into the tag. A
// run of message bits against a keystream window is a carry-less product,
// so this file computes them with a constant-time carry-less multiplier
// built from ordinary integer multiplications (the "holes" technique:
// operands are split into four interleaved bit classes, so the carries of
// each class never reach the next bit of the same class). clmulLo is the
// reference form; the loops below write the same arithmetic out inline
// because the compiler will not inline it (cost 142 > 80), and the call
// per message word is measurable.

// Bit-class masks of the carry-less multiplier.
const (
	cm0 = 0x1111111111111111
	cm1 = 0x2222222222222222
	cm2 = 0x4444444444444444
	cm3 = 0x8888888888888888
)

// clmulLo returns the low 64 bits of the carry-less product x ⊗ y.
//
// Each product of two class-restricted operands has at most 16 pairs per
// output bit position below 64, and 16 only at positions ≥ 60 whose carry
// leaves the 64-bit word, so masking each class recovers the exact parity.
// Multiplication is constant-time on the platforms gmtun supports.
func clmulLo(x, y uint64) uint64 {
	x0, x1, x2, x3 := x&cm0, x&cm1, x&cm2, x&cm3
	y0, y1, y2, y3 := y&cm0, y&cm1, y&cm2, y&cm3
	z0 := x0*y0 ^ x1*y3 ^ x2*y2 ^ x3*y1
	z1 := x0*y1 ^ x1*y0 ^ x2*y3 ^ x3*y2
	z2 := x0*y2 ^ x1*y1 ^ x2*y0 ^ x3*y3
	z3 := x0*y3 ^ x1*y2 ^ x2*y1 ^ x3*y0
	return z0&cm0 | z1&cm1 | z2&cm2 | z3&cm3
}

// window32 returns the XOR of the 32-bit keystream windows (hi ‖ lo)<<j,
// top half, over the message bits j (most significant first) set in m:
// the contribution of one message word to a 32-bit MAC word. It is
// bits 32..63 of (hi ‖ lo) ⊗ rev(m).
func window32(hi, lo, m uint32) uint32 {
	return uint32(clmulLo(uint64(hi)<<32|uint64(lo), uint64(bits.Reverse32(m))) >> 32)
}

// windowWords returns t ⊕ window32(z[l], z[l+1], word l of msg) over the
// len(msg)/4 ≤ 16 whole message words of msg.
func windowWords(t uint32, z *[2 * BlockWords]uint32, msg []byte) uint32 {
	nw := min(len(msg)/4, BlockWords)
	for l := 0; l < nw; l++ {
		x := uint64(z[l])<<32 | uint64(z[l+1])
		y := uint64(bits.Reverse32(binary.BigEndian.Uint32(msg[4*l:])))
		x0, x1, x2, x3 := x&cm0, x&cm1, x&cm2, x&cm3
		y0, y1, y2, y3 := y&cm0, y&cm1, y&cm2, y&cm3
		z0 := x0*y0 ^ x1*y3 ^ x2*y2 ^ x3*y1
		z1 := x0*y1 ^ x1*y0 ^ x2*y3 ^ x3*y2
		z2 := x0*y2 ^ x1*y1 ^ x2*y0 ^ x3*y3
		z3 := x0*y3 ^ x1*y2 ^ x2*y1 ^ x3*y0
		t ^= uint32((z0&cm0 | z1&cm1 | z2&cm2 | z3&cm3) >> 32)
	}
	return t
}

// loadMasked returns the big-endian 64-bit message unit at p with the
// bits past nbits (0 < nbits ≤ 64) cleared; bytes past ⌈nbits/8⌉ are not read.
func loadMasked(p []byte, nbits int) uint64 {
	if nbits >= 64 {
		return binary.BigEndian.Uint64(p)
	}
	var b [8]byte
	copy(b[:], p[:(nbits+7)/8])
	return binary.BigEndian.Uint64(b[:]) &^ (^uint64(0) >> uint(nbits))
}

// macBuf is the sliding keystream window of the MAC loops: z[0:32] holds
// keystream words 16c..16c+31 while message chunk c (512 bits) is
// processed, zr their bit reversals (filled only when withRev is set).
// have counts valid words; left counts words still to generate.
type macBuf struct {
	z, zr   [2 * BlockWords]uint32
	have    int
	left    int
	withRev bool
}

// wordSource is where a MAC takes its keystream: a State (st non-nil)
// or, for the lanes of the multi-lane portable core, words already
// generated (ks). Both are concrete, so nothing escapes.
type wordSource struct {
	st *State
	ks []uint32
}

// keyWords stores the next len(dst) keystream words in dst. A source of
// generated words must hold enough of them.
func (w *wordSource) keyWords(dst []uint32) {
	if w.st != nil {
		w.st.KeyWords(dst)
		return
	}
	n := copy(dst, w.ks)
	w.ks = w.ks[n:]
}

// fill generates words up to min(32, have+left).
func (b *macBuf) fill(st *wordSource) {
	n := min(len(b.z)-b.have, b.left)
	st.keyWords(b.z[b.have : b.have+n])
	if b.withRev {
		for i := b.have; i < b.have+n; i++ {
			b.zr[i] = bits.Reverse32(b.z[i])
		}
	}
	b.have += n
	b.left -= n
}

// slide drops the first 16 words and generates the next ones.
func (b *macBuf) slide(st *wordSource) {
	copy(b.z[:BlockWords], b.z[BlockWords:])
	copy(b.zr[:BlockWords], b.zr[BlockWords:])
	b.have -= BlockWords
	b.fill(st)
}

// EIA3Generic returns the 128-EIA3 MAC (3GPP 128-EEA3 & 128-EIA3 Document
// 1 v1.7 §4.4; GB/T 33133.3-2021) of the first nbits bits of msg. st must
// have just been initialised with Init128(IK, IVEIA3(...)).
// 0 ≤ nbits ≤ 8·len(msg); bits past nbits are ignored.
//
// With L = ⌈nbits/32⌉+2 keystream words z, T = ⊕ over set message bits i
// of the 32-bit window at bit i, then T ⊕= window at bit nbits, and
// MAC = T ⊕ z_{L−1} (the word at bit 32·(L−1)).
func EIA3Generic(st *State, msg []byte, nbits int) uint32 {
	return eia3(&wordSource{st: st}, msg, nbits)
}

// eia3 is EIA3Generic on the keystream of st.
func eia3(st *wordSource, msg []byte, nbits int) uint32 {
	var b macBuf
	b.left = (nbits+31)/32 + 2
	b.fill(st)
	var t uint32
	for nbits >= 8*BlockSize {
		t = windowWords(t, &b.z, msg[:BlockSize])
		msg, nbits = msg[BlockSize:], nbits-8*BlockSize
		b.slide(st)
	}
	nw, r := nbits/32, uint(nbits%32)
	t = windowWords(t, &b.z, msg[:4*nw])
	last := nw + 1
	if r > 0 {
		m := uint32(loadMasked(msg[4*nw:], int(r)) >> 32)
		t ^= window32(b.z[nw], b.z[nw+1], m)
		last++
	}
	t ^= uint32((uint64(b.z[nw])<<32 | uint64(b.z[nw+1])) << r >> 32)
	return t ^ b.z[last]
}

// MAC256Generic computes the ZUC-256 MAC ("The ZUC-256 Stream Cipher",
// 2018, §3.2) of the first nbits bits of msg into tag, whose length (4, 8
// or 16 bytes) is the tag size t/8. st must have just been initialised with
// Init256 and the d constants of that tag size (D256(len(tag))).
// 0 ≤ nbits ≤ 8·len(msg); bits past nbits are ignored.
//
// T starts as the first t keystream bits; each set message bit i XORs the
// t-bit window at bit t+i, and finally the window at bit t+nbits.
func MAC256Generic(st *State, msg []byte, nbits int, tag []byte) {
	mac256(&wordSource{st: st}, msg, nbits, tag)
}

// mac256 is MAC256Generic on the keystream of st.
func mac256(st *wordSource, msg []byte, nbits int, tag []byte) {
	n := len(tag) / 4 // tag words: 1, 2 or 4
	if n == 1 {
		mac256Tag32(st, msg, nbits, tag)
		return
	}
	var b macBuf
	b.withRev = true
	b.left = 2*n + (nbits+31)/32 + 1
	b.fill(st)
	var t [4]uint32
	copy(t[:n], b.z[:n])

	// The message is taken 64 bits at a time against pairs of tag words:
	// for the 128-bit keystream window K = khi ‖ klo starting at word
	// a = n+l+q and M = rev(m), tag words q, q+1 gain bits 64..127 of
	// K ⊗ M = lo64(khi ⊗ M) ⊕ hi64(klo ⊗ M), and hi64(x ⊗ y) =
	// rev(lo64(rev x ⊗ rev y)) >> 1. The second term is accumulated in the
	// reversed domain (acr) and turned around once at the end.
	var acc, acr [2]uint64
	for nbits >= 8*BlockSize {
		mac256Units(&acc, &acr, &b, n, msg[:BlockSize], 8*BlockSize)
		msg, nbits = msg[BlockSize:], nbits-8*BlockSize
		b.slide(st)
	}
	mac256Units(&acc, &acr, &b, n, msg, nbits)
	for p := 0; p < n/2; p++ {
		out := acc[p] ^ bits.Reverse64(acr[p])>>1
		t[2*p] ^= uint32(out >> 32)
		t[2*p+1] ^= uint32(out)
	}
	nw, r := nbits/32, uint(nbits%32)
	for q := 0; q < n; q++ {
		a := n + nw + q
		t[q] ^= uint32((uint64(b.z[a])<<32 | uint64(b.z[a+1])) << r >> 32)
		binary.BigEndian.PutUint32(tag[4*q:], t[q])
	}
}

// mac256Units accumulates the first nbits ≤ 512 bits of msg, in 64-bit
// units, into the tag-pair accumulators of MAC256Generic (n = 2 or 4 tag
// words).
func mac256Units(acc, acr *[2]uint64, b *macBuf, n int, msg []byte, nbits int) {
	for l := 0; 32*l < nbits; l += 2 {
		m := loadMasked(msg[4*l:], nbits-32*l)
		mr := bits.Reverse64(m)
		u0, u1, u2, u3 := mr&cm0, mr&cm1, mr&cm2, mr&cm3
		v0, v1, v2, v3 := m&cm0, m&cm1, m&cm2, m&cm3
		for p := 0; p < n/2; p++ {
			a := n + l + 2*p
			x := uint64(b.z[a])<<32 | uint64(b.z[a+1])
			x0, x1, x2, x3 := x&cm0, x&cm1, x&cm2, x&cm3
			z0 := x0*u0 ^ x1*u3 ^ x2*u2 ^ x3*u1
			z1 := x0*u1 ^ x1*u0 ^ x2*u3 ^ x3*u2
			z2 := x0*u2 ^ x1*u1 ^ x2*u0 ^ x3*u3
			z3 := x0*u3 ^ x1*u2 ^ x2*u1 ^ x3*u0
			acc[p] ^= z0&cm0 | z1&cm1 | z2&cm2 | z3&cm3
			x = uint64(b.zr[a+3])<<32 | uint64(b.zr[a+2])
			x0, x1, x2, x3 = x&cm0, x&cm1, x&cm2, x&cm3
			z0 = x0*v0 ^ x1*v3 ^ x2*v2 ^ x3*v1
			z1 = x0*v1 ^ x1*v0 ^ x2*v3 ^ x3*v2
			z2 = x0*v2 ^ x1*v1 ^ x2*v0 ^ x3*v3
			z3 = x0*v3 ^ x1*v2 ^ x2*v1 ^ x3*v0
			acr[p] ^= z0&cm0 | z1&cm1 | z2&cm2 | z3&cm3
		}
	}
}

// mac256Tag32 is MAC256Generic for 32-bit tags: one tag word, the message
// taken a word at a time against the windows starting at word 1.
func mac256Tag32(st *wordSource, msg []byte, nbits int, tag []byte) {
	var b macBuf
	b.left = 2 + (nbits+31)/32 + 1
	b.fill(st)
	t := b.z[0]
	var zs [2 * BlockWords]uint32 // the windows start one word in
	for nbits >= 8*BlockSize {
		copy(zs[:], b.z[1:])
		t = windowWords(t, &zs, msg[:BlockSize])
		msg, nbits = msg[BlockSize:], nbits-8*BlockSize
		b.slide(st)
	}
	copy(zs[:], b.z[1:])
	nw, r := nbits/32, uint(nbits%32)
	t = windowWords(t, &zs, msg[:4*nw])
	if r > 0 {
		m := uint32(loadMasked(msg[4*nw:], int(r)) >> 32)
		t ^= window32(zs[nw], zs[nw+1], m)
	}
	t ^= uint32((uint64(zs[nw])<<32 | uint64(zs[nw+1])) << r >> 32)
	binary.BigEndian.PutUint32(tag, t)
}
