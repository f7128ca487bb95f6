package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The two steps of the register transpositions of the vector kernels
// (x8.go, x16_gen.go, x16_load.go): 4×4 dwords inside 128-bit lanes, and
// 4×4 128-bit lanes of ZMM registers.

// transposeDwords4 transposes the 4×4 dwords inside every 128-bit lane of
// r[0..3] in place: afterwards dword j of r[i] is what dword i of r[j] was.
// t0..t3 are temporaries.
func transposeDwords4(r []Register, t0, t1, t2, t3 Register) {
	VPUNPCKLDQ(r[1], r[0], t0)
	VPUNPCKHDQ(r[1], r[0], t1)
	VPUNPCKLDQ(r[3], r[2], t2)
	VPUNPCKHDQ(r[3], r[2], t3)
	VPUNPCKLQDQ(t2, t0, r[0])
	VPUNPCKHQDQ(t2, t0, r[1])
	VPUNPCKLQDQ(t3, t1, r[2])
	VPUNPCKHQDQ(t3, t1, r[3])
}

// transposeLanes4 transposes the 4×4 128-bit lanes of the ZMM registers a,
// b, c, d in place: afterwards lane j of the i-th is what lane i of the
// j-th was. p, q, r, s are temporaries.
func transposeLanes4(a, b, c, d, p, q, r, s Register) {
	VSHUFI32X4(U8(0x88), b, a, p) // A0 A2 B0 B2
	VSHUFI32X4(U8(0xdd), b, a, q) // A1 A3 B1 B3
	VSHUFI32X4(U8(0x88), d, c, r) // C0 C2 D0 D2
	VSHUFI32X4(U8(0xdd), d, c, s) // C1 C3 D1 D3
	VSHUFI32X4(U8(0x88), r, p, a) // A0 B0 C0 D0
	VSHUFI32X4(U8(0x88), s, q, b) // A1 B1 C1 D1
	VSHUFI32X4(U8(0xdd), r, p, c) // A2 B2 C2 D2
	VSHUFI32X4(U8(0xdd), s, q, d) // A3 B3 C3 D3
}
