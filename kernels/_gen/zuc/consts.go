package main

import (
	"encoding/binary"

	"github.com/gmtun/gmtun/internal/reftables"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// ----------------------------------------------------------------------------
// Constants of the specification and their SIMD encodings.

// S-box S0 (GB/T 33133.1 §3.3.3) is built from three 4-bit boxes:
// x = x1‖x2 (high‖low nibble), q = x1 ⊕ P1[x2], r = x2 ⊕ P2[q],
// s = q ⊕ P3[r], S0(x) = rotl8(s‖r, 5).
var (
	p1 = [16]byte{0x9, 0xf, 0x0, 0xe, 0xf, 0xf, 0x2, 0xa, 0x0, 0x4, 0x0, 0xc, 0x7, 0x5, 0x3, 0x9}
	p2 = [16]byte{0x8, 0xd, 0x6, 0x5, 0x7, 0x0, 0xc, 0x4, 0xb, 0x1, 0xe, 0xa, 0xf, 0x3, 0x9, 0x2}
	p3 = [16]byte{0x2, 0x6, 0xa, 0x6, 0x0, 0xd, 0xa, 0xf, 0x3, 0x3, 0xd, 0x5, 0x0, 0x9, 0xc, 0xd}
)

// s0Tail folds the last layer and the rotation into one 16-entry table:
// rotl8(s‖r, 5) = (s<<1) ⊕ rotl8(r, 5) and s = q ⊕ P3[r], hence
// S0(x) = (q<<1) ⊕ T[r] with T[r] = (P3[r]<<1) ⊕ rotl8(r, 5).
func s0Tail() (t [16]byte) {
	for r := range t {
		rr := byte(r)
		t[r] = p3[r]<<1 ^ (rr<<5 | rr>>3)
	}
	return t
}

// s0Table is S0 as a 256-byte table, from the three 4-bit boxes.
func s0Table() (t [256]byte) {
	for x := range t {
		x1, x2 := byte(x>>4), byte(x&15)
		q := x1 ^ p1[x2]
		r := x2 ^ p2[q]
		s := q ^ p3[r]
		v := s<<4 | r
		t[x] = v<<5 | v>>3
	}
	return t
}

// S1 (GB/T 33133.1 §3.3.3) is affine-equivalent to inversion in the AES field:
// S1(x) = L·inv_AES(M·x) ⊕ 0x55, where M maps GF(2^8)/(x^8+x^7+x^3+x+1)
// into GF(2^8)/(x^8+x^4+x^3+x+1) (AES). Columns are LSB first: column j is
// the image of bit j. The package tests re-derive these against the S1 table.
var (
	s1M = [8]byte{0x01, 0x32, 0x73, 0x75, 0xd9, 0xe8, 0xcd, 0x2d}
	s1L = [8]byte{0x97, 0x9a, 0x3c, 0x11, 0x69, 0xcd, 0xc4, 0xc5}
)

// gfniMatrix encodes a GF(2) 8×8 matrix given by its columns into the qword
// operand of GF2P8AFFINEQB: output bit i is the parity of (byte 7−i of the
// qword) AND x, so byte 7−i holds row i.
func gfniMatrix(cols [8]byte) uint64 {
	var q uint64
	for i := 0; i < 8; i++ {
		var row byte
		for j := 0; j < 8; j++ {
			row |= (cols[j] >> i & 1) << j
		}
		q |= uint64(row) << (8 * (7 - i))
	}
	return q
}

// constant table layout: every entry is 64 bytes (one ZMM, or two YMM of
// which the YMM kernels use the first; a 16-byte pattern is repeated).
const (
	cMask31  = iota * 64 // 0x7fffffff per dword (p = 2^31−1)
	cNibble              // 0x0f per byte
	cP1                  // S0 layer 1, per 128-bit lane
	cP2                  // S0 layer 2
	cT                   // S0 layer 3 + rotation (s0Tail)
	cGather              // odd bytes (S0 inputs) → low qword, even bytes (S1) → high qword
	cScatter             // inverse of cGather
	cS1M                 // GFNI matrix M
	cS1L                 // GFNI matrix L
	cBswap               // big-endian keystream bytes
	cRol8                // dword rotations by 8, 16, 24 (AVX2 L1/L2)
	cRol16
	cRol24
	cRevLo  // bit reversal of a low nibble, result in the high nibble (MAC)
	cRevHi  // bit reversal of a high nibble, result in the low nibble (MAC)
	cRevMat // GFNI matrix reversing the bits of every byte (MAC)
	cD128   // d_i<<8 in dword i: the ZUC-128 constants of LFSR cell i (x16 lane load)
	cL256A0 // ZUC-256 x16 load: VPSHUFB of IV bytes 0–15 into the low two bytes of the cells
	cL256A1 // the same from IV bytes 16–22
	cL256B0 // IV bytes 0–15 into byte 3 of the cells (the 8-bit field at bit 23 after >> 1)
	cL256S1 // IV bytes 16–22 holding the 6-bit symbols IV_17..IV_24 into bytes 2–3 of cells 5–12
	cL256Sh // per-cell right shift that brings the symbol to bit 16
	cL256Sm // 0x3f<<16 in cells 5–12
	cMLo    // S1 through AES-NI: input map M, low nibble
	cMHi    // input map M, high nibble
	cGLo    // output map G, low nibble (with G's constant)
	cGHi    // output map G, high nibble
	cInvSR  // inverse AES ShiftRows byte shuffle
	cZero   // zero AES round key
	cS0     // S0 as a 256-byte table (four entries: bytes 0–63, …, 192–255; x16 ZMM emission)
	_
	_
	_
	cCount
)

var consts Mem

// zuc128D are the 15-bit constants d_0..d_15 of ZUC-128 key loading
// (GB/T 33133.1-2016), from internal/reftables.
var zuc128D = reftables.ZUC128D

func emitConsts() {
	// The assembler wants DATA in increasing offsets: fill a byte image first.
	var img [cCount]byte
	put16 := func(at int, b [16]byte) {
		for rep := 0; rep < 4; rep++ {
			copy(img[at+16*rep:], b[:])
		}
	}
	put32 := func(at int, v uint32) {
		for i := 0; i < 16; i++ {
			binary.LittleEndian.PutUint32(img[at+4*i:], v)
		}
	}
	put64 := func(at int, v uint64) {
		for i := 0; i < 8; i++ {
			binary.LittleEndian.PutUint64(img[at+8*i:], v)
		}
	}
	put32(cMask31, 0x7fffffff)
	var nib, gather, scatter, bswap, r8, r16, r24 [16]byte
	for i := range nib {
		nib[i] = 0x0f
	}
	for i := 0; i < 8; i++ {
		gather[i] = byte(2*i + 1) // S0 takes the odd bytes (bits 31..24, 15..8)
		gather[8+i] = byte(2 * i) // S1 takes the even bytes
	}
	for p := 0; p < 16; p++ {
		if p%2 == 1 {
			scatter[p] = byte((p - 1) / 2)
		} else {
			scatter[p] = byte(8 + p/2)
		}
	}
	for d := 0; d < 4; d++ {
		for b := 0; b < 4; b++ {
			bswap[4*d+b] = byte(4*d + 3 - b)
			r8[4*d+b] = byte(4*d + (b+3)%4)
			r16[4*d+b] = byte(4*d + (b+2)%4)
			r24[4*d+b] = byte(4*d + (b+1)%4)
		}
	}
	put16(cNibble, nib)
	put16(cP1, p1)
	put16(cP2, p2)
	put16(cT, s0Tail())
	put16(cGather, gather)
	put16(cScatter, scatter)
	put16(cBswap, bswap)
	put16(cRol8, r8)
	put16(cRol16, r16)
	put16(cRol24, r24)
	put64(cS1M, gfniMatrix(s1M))
	s0 := s0Table()
	copy(img[cS0:cS0+256], s0[:])
	put64(cS1L, gfniMatrix(s1L))
	var revLo, revHi [16]byte
	var revCols [8]byte
	for n := range revLo {
		r := bitRev4(byte(n))
		revLo[n], revHi[n] = r<<4, r
	}
	for j := range revCols {
		revCols[j] = 1 << (7 - j) // bit j → bit 7−j
	}
	put16(cRevLo, revLo)
	put16(cRevHi, revHi)
	put64(cRevMat, gfniMatrix(revCols))
	for i, d := range zuc128D {
		binary.LittleEndian.PutUint32(img[cD128+4*i:], d<<8)
	}

	l256Consts(img[:])
	aesniConsts(put16)

	consts = GLOBL("zuc_consts", RODATA|NOPTR)
	for i := 0; i < len(img); i += 8 {
		DATA(i, U64(binary.LittleEndian.Uint64(img[i:])))
	}
}

// ternImm returns the VPTERNLOGD immediate of f(A, B, C), where A is the
// destination operand, B the middle and C the first (memory-capable) one.
func ternImm(f func(a, b, c bool) bool) U8 {
	var imm uint8
	for i := 0; i < 8; i++ {
		if f(i&4 != 0, i&2 != 0, i&1 != 0) {
			imm |= 1 << i
		}
	}
	return U8(imm)
}

// l256Consts fills the constants of the 16-lane ZUC-256 load (genLoad256x16):
// the IV fields of the cells of the 2018 layout (see kernels/zuc (lanes_amd64.go),
// storeZUC256) as byte shuffles of the IV broadcast to every 128-bit lane.
func l256Consts(img []byte) {
	a0, a1, b0, s1 := img[cL256A0:][:64], img[cL256A1:][:64], img[cL256B0:][:64], img[cL256S1:][:64]
	for _, t := range [][]byte{a0, a1, b0, s1} {
		for i := range t {
			t[i] = 0x80 // VPSHUFB: zero
		}
	}
	// at sets byte b (0 = least significant) of cell i to IV byte v.
	at := func(i, b, v int) {
		if v < 16 {
			a0[4*i+b] = byte(v)
		} else {
			a1[4*i+b] = byte(v - 16)
		}
	}
	at(7, 0, 2)
	at(8, 1, 3)
	at(8, 0, 11)
	at(9, 1, 12)
	at(9, 0, 4)
	at(11, 1, 6)
	at(11, 0, 13)
	at(12, 1, 7)
	at(12, 0, 14)
	at(13, 1, 15)
	at(13, 0, 8)
	at(14, 1, 16)
	at(14, 0, 9)
	for i, v := range map[int]int{5: 0, 6: 1, 7: 10, 10: 5} {
		b0[4*i+3] = byte(v)
	}
	// IV_17..IV_24: the 6-bit symbols of the 48-bit big-endian t = IV bytes
	// 17..22; symbol j at bits s..s+5 of t, s = 42−6j, in cell 5+j. Bytes
	// L = s/8 and L+1 of t (t's byte L is IV byte 22−L, index 6−L of the
	// high broadcast) go to bytes 2 and 3 of the cell; a shift by s mod 8
	// and the mask leave the symbol at bits 16..21.
	for j := 0; j < 8; j++ {
		i, s := 5+j, 42-6*j
		l := s / 8
		s1[4*i+2] = byte(6 - l)
		if l+1 <= 5 {
			s1[4*i+3] = byte(5 - l)
		}
		binary.LittleEndian.PutUint32(img[cL256Sh+4*i:], uint32(s%8))
		binary.LittleEndian.PutUint32(img[cL256Sm+4*i:], 0x3f<<16)
	}
}

// S1 through AES-NI (the 8AESNI kernels). AESENCLAST with a zero round key
// computes ShiftRows(SubBytes(y)) with SubBytes(y) = A·inv(y) ⊕ 0x63, so
//
//	S1(x) = G(SubBytes(M·x)), G(s) = L·A⁻¹·(s ⊕ 0x63) ⊕ 0x55,
//
// where M and G are applied with VPSHUFB nibble tables (a linear map is the
// XOR of its images of the low and the high nibble) and ShiftRows is undone
// by a byte shuffle before the AES round.

// apply returns the image of x under the matrix with columns cols.
func apply(cols [8]byte, x byte) byte {
	var y byte
	for j := 0; j < 8; j++ {
		if x>>j&1 != 0 {
			y ^= cols[j]
		}
	}
	return y
}

// aesAffine is the linear part A of the AES S-box affine map:
// A·x = x ⊕ rotl(x,1) ⊕ rotl(x,2) ⊕ rotl(x,3) ⊕ rotl(x,4).
func aesAffine(x byte) byte {
	r := func(k uint) byte { return x<<k | x>>(8-k) }
	return x ^ r(1) ^ r(2) ^ r(3) ^ r(4)
}

// s1Tables returns the nibble tables of M (mLo, mHi) and of the output map
// G (gLo, gHi; gLo holds the constant G(0)).
func s1Tables() (mLo, mHi, gLo, gHi [16]byte) {
	var aInv [256]byte
	for x := 0; x < 256; x++ {
		aInv[aesAffine(byte(x))] = byte(x)
	}
	g := func(s byte) byte { return apply(s1L, aInv[s^0x63]) ^ 0x55 }
	g0 := g(0)
	for n := 0; n < 16; n++ {
		mLo[n] = apply(s1M, byte(n))
		mHi[n] = apply(s1M, byte(n<<4))
		gLo[n] = g(byte(n)) // linear part ⊕ g0, g0 included once
		gHi[n] = g(byte(n<<4)) ^ g0
	}
	return
}

// aesniConsts fills the constants of S1 through AES-NI (cZero stays zero).
func aesniConsts(put16 func(at int, b [16]byte)) {
	// AES state byte i is row i%4, column i/4; ShiftRows moves the byte at
	// row r, column c to column c−r: out[r+4c] = in[r+4((c+r)%4)]. Its
	// inverse as a VPSHUFB: invSR[r+4c] = r+4((c−r)%4), so that
	// ShiftRows(invSR(y)) = y.
	var invSR [16]byte
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			invSR[r+4*c] = byte(r + 4*((c-r+4)%4))
		}
	}
	mLo, mHi, gLo, gHi := s1Tables()
	put16(cMLo, mLo)
	put16(cMHi, mHi)
	put16(cGLo, gLo)
	put16(cGHi, gHi)
	put16(cInvSR, invSR)
}
