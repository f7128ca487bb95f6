//go:build ignore

// gen_sbox writes sbox_ct.go: the S-box layer of the portable ZUC core as
// a Boolean circuit on bit planes, with no table and no branch.
//
// The eight S-box inputs of one round (the bytes of u and v) are
// transposed so that plane b holds bit b of every input byte; both
// circuits (S0 and S1) run on all eight planes and the result of each
// byte is selected by a constant mask. The circuits are derived here from
// the algebraic structure of the S-boxes, and checked against it on all
// 256 inputs before anything is written:
//
//   - S0 (GB/T 33133.1-2016 §5.1.2) is built from three 4-bit boxes:
//     x = x1‖x2 (high‖low nibble), q = x1 ⊕ P1[x2], r = x2 ⊕ P2[q],
//     s = q ⊕ P3[r], S0(x) = rotl8(s‖r, 5). Each 4-bit box becomes the
//     algebraic normal form of its four output bits (at most 11 ANDs
//     shared between them).
//   - S1 = L·inv(M·x) ⊕ 0x55, inv the inversion of the AES field
//     GF(2^8)/(x^8+x^4+x^3+x+1) (the structure kernels/_gen/zuc uses
//     for AESENCLAST). The inversion runs in the tower field
//     GF(2^4)[y]/(y^2+y+λ) over GF(2^4)/(w^4+w+1): the maps into the
//     tower basis and out of it are folded into M and L, leaving three
//     GF(2^4) multiplications, one GF(2^4) inversion (its ANF) and linear
//     maps.
//
// The tables below are the generator's own; none reaches the package.
//
// Run with `go generate` in this directory.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"log"
	"os"
	"strings"
)

// The 4-bit boxes of S0 (GB/T 33133.1-2016, the design of S0).
var (
	p1 = [16]byte{0x9, 0xf, 0x0, 0xe, 0xf, 0xf, 0x2, 0xa, 0x0, 0x4, 0x0, 0xc, 0x7, 0x5, 0x3, 0x9}
	p2 = [16]byte{0x8, 0xd, 0x6, 0x5, 0x7, 0x0, 0xc, 0x4, 0xb, 0x1, 0xe, 0xa, 0xf, 0x3, 0x9, 0x2}
	p3 = [16]byte{0x2, 0x6, 0xa, 0x6, 0x0, 0xd, 0xa, 0xf, 0x3, 0x3, 0xd, 0x5, 0x0, 0x9, 0xc, 0xd}
)

// The matrices of S1 = L·inv_AES(M·x) ⊕ 0x55, by columns, LSB first
// (column j is the image of bit j).
var (
	s1M = [8]byte{0x01, 0x32, 0x73, 0x75, 0xd9, 0xe8, 0xcd, 0x2d}
	s1L = [8]byte{0x97, 0x9a, 0x3c, 0x11, 0x69, 0xcd, 0xc4, 0xc5}
)

// The published S0 and S1 boxes are not repeated here: the package
// tests compare the generated circuit with them (the _test.go oracles).

func apply(cols [8]byte, x byte) byte {
	var y byte
	for j := 0; j < 8; j++ {
		if x>>j&1 != 0 {
			y ^= cols[j]
		}
	}
	return y
}

// Field arithmetic (generation time only).

func aesMul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1b
		}
		b >>= 1
	}
	return p
}

func aesInv(a byte) byte {
	if a == 0 {
		return 0
	}
	for b := 1; b < 256; b++ {
		if aesMul(a, byte(b)) == 1 {
			return byte(b)
		}
	}
	panic("no inverse")
}

func gf16Mul(a, b byte) byte {
	var p byte
	for i := 0; i < 4; i++ {
		if b>>i&1 != 0 {
			p ^= a << i
		}
	}
	for i := 6; i >= 4; i-- {
		if p>>i&1 != 0 {
			p ^= 0x13 << (i - 4)
		}
	}
	return p & 0xf
}

func gf16Inv(a byte) byte {
	for b := byte(1); b < 16; b++ {
		if gf16Mul(a, b) == 1 {
			return b
		}
	}
	return 0
}

// lambda is the constant of the tower y^2 + y + λ, found by search.
var lambda byte

// towerMul multiplies a = a1·y + a0 and b (hi nibble a1, lo nibble a0)
// with y^2 = y + λ.
func towerMul(a, b byte) byte {
	a1, a0, b1, b0 := a>>4, a&0xf, b>>4, b&0xf
	m := gf16Mul(a1, b1)
	hi := m ^ gf16Mul(a1, b0) ^ gf16Mul(a0, b1)
	lo := gf16Mul(m, lambda) ^ gf16Mul(a0, b0)
	return hi<<4 | lo
}

// The circuit: wires are numbered; inputs first. Gates are hash-consed.

type gate struct {
	op   byte // 'i' input, '^', '&', '~', '1' (all ones)
	a, b int
}

type circuit struct {
	gates []gate
	memo  map[gate]int
}

func newCircuit(inputs int) *circuit {
	c := &circuit{memo: map[gate]int{}}
	for i := 0; i < inputs; i++ {
		c.add(gate{'i', i, 0})
	}
	return c
}

func (c *circuit) add(g gate) int {
	if (g.op == '^' || g.op == '&') && g.a > g.b {
		g.a, g.b = g.b, g.a
	}
	if w, ok := c.memo[g]; ok {
		return w
	}
	c.gates = append(c.gates, g)
	c.memo[g] = len(c.gates) - 1
	return len(c.gates) - 1
}

func (c *circuit) xor(a, b int) int { return c.add(gate{'^', a, b}) }
func (c *circuit) and(a, b int) int { return c.add(gate{'&', a, b}) }
func (c *circuit) not(a int) int    { return c.add(gate{'~', a, 0}) }

// zero is represented by -1 in XOR sums.
func (c *circuit) xorAll(ws []int) int {
	acc := -1
	for _, w := range ws {
		if acc < 0 {
			acc = w
		} else {
			acc = c.xor(acc, w)
		}
	}
	return acc
}

// linear applies the GF(2)-linear map f (on n-bit values) to the wires in
// (bit j = in[j]); a zero output is returned as -1.
func (c *circuit) linear(in []int, f func(byte) byte) []int {
	out := make([]int, len(in))
	for i := range out {
		var ws []int
		for j := range in {
			if f(1<<j)>>i&1 != 0 {
				ws = append(ws, in[j])
			}
		}
		out[i] = c.xorAll(ws)
	}
	return out
}

// anf4 builds the 4-bit function f of the wires in[0..3] (bit j = in[j])
// from the algebraic normal forms of its output bits.
func (c *circuit) anf4(in []int, f func(byte) byte) []int {
	prod := map[int]int{}
	var product func(m int) int
	product = func(m int) int {
		if w, ok := prod[m]; ok {
			return w
		}
		hi := 3
		for m>>hi&1 == 0 {
			hi--
		}
		rest := m &^ (1 << hi)
		var w int
		if rest == 0 {
			w = in[hi]
		} else {
			w = c.and(product(rest), in[hi])
		}
		prod[m] = w
		return w
	}
	out := make([]int, 4)
	for i := 0; i < 4; i++ {
		// Möbius transform of output bit i.
		var a [16]byte
		for x := 0; x < 16; x++ {
			a[x] = f(byte(x)) >> i & 1
		}
		for k := 0; k < 4; k++ {
			for x := 0; x < 16; x++ {
				if x>>k&1 != 0 {
					a[x] ^= a[x&^(1<<k)]
				}
			}
		}
		var ws []int
		for m := 1; m < 16; m++ {
			if a[m] != 0 {
				ws = append(ws, product(m))
			}
		}
		w := c.xorAll(ws)
		if a[0] != 0 {
			if w < 0 {
				w = c.add(gate{'1', 0, 0})
			} else {
				w = c.not(w)
			}
		}
		if w < 0 {
			panic("constant-zero output bit")
		}
		out[i] = w
	}
	return out
}

// gf16MulW multiplies two GF(2^4) elements given as wires.
func (c *circuit) gf16MulW(a, b []int) []int {
	var p [7][]int
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			p[i+j] = append(p[i+j], c.and(a[i], b[j]))
		}
	}
	// w^4 = w + 1, w^5 = w^2 + w, w^6 = w^3 + w^2.
	for k := 6; k >= 4; k-- {
		p[k-4] = append(p[k-4], p[k]...)
		p[k-3] = append(p[k-3], p[k]...)
	}
	out := make([]int, 4)
	for i := range out {
		out[i] = c.xorAll(p[i])
	}
	return out
}

func xorW(c *circuit, a, b []int) []int {
	out := make([]int, len(a))
	for i := range a {
		switch {
		case a[i] < 0:
			out[i] = b[i]
		case b[i] < 0:
			out[i] = a[i]
		default:
			out[i] = c.xor(a[i], b[i])
		}
	}
	return out
}

// eval runs the circuit on the 256 inputs (bitsliced: input wire j is
// bit j of the input byte) and returns the value of each wire as 256 bits.
func (c *circuit) eval() [][4]uint64 {
	v := make([][4]uint64, len(c.gates))
	for w, g := range c.gates {
		for k := 0; k < 4; k++ {
			switch g.op {
			case 'i':
				for x := 0; x < 64; x++ {
					if (64*k+x)>>g.a&1 != 0 {
						v[w][k] |= 1 << x
					}
				}
			case '^':
				v[w][k] = v[g.a][k] ^ v[g.b][k]
			case '&':
				v[w][k] = v[g.a][k] & v[g.b][k]
			case '~':
				v[w][k] = ^v[g.a][k]
			case '1':
				v[w][k] = ^uint64(0)
			}
		}
	}
	return v
}

func check(c *circuit, out []int, f func(byte) byte, name string) {
	v := c.eval()
	for x := 0; x < 256; x++ {
		var y byte
		for i, w := range out {
			if v[w][x/64]>>(x%64)&1 != 0 {
				y |= 1 << i
			}
		}
		if y != f(byte(x)) {
			log.Fatalf("%s circuit wrong at %#02x: %#02x, want %#02x", name, x, y, f(byte(x)))
		}
	}
}

func s0Ref(x byte) byte {
	x1, x2 := x>>4, x&0xf
	q := x1 ^ p1[x2]
	r := x2 ^ p2[q]
	s := q ^ p3[r]
	sr := s<<4 | r
	return sr<<5 | sr>>3
}

func s1Ref(x byte) byte { return apply(s1L, aesInv(apply(s1M, x))) ^ 0x55 }

func main() {
	// The tower: λ such that y^2 + y + λ has no root in GF(2^4).
	for l := byte(1); l < 16 && lambda == 0; l++ {
		root := false
		for y := byte(0); y < 16; y++ {
			if gf16Mul(y, y)^y == l {
				root = true
			}
		}
		if !root {
			lambda = l
		}
	}
	// g: a root of the AES polynomial in the tower; φ(α^i) = g^i.
	var phi [256]byte
	found := false
	for g := 2; g < 256 && !found; g++ {
		var pw [9]byte
		pw[0] = 1
		for i := 1; i <= 8; i++ {
			pw[i] = towerMul(pw[i-1], byte(g))
		}
		if pw[8]^pw[4]^pw[3]^pw[1]^pw[0] != 0 {
			continue
		}
		for x := 0; x < 256; x++ {
			var y byte
			for i := 0; i < 8; i++ {
				if x>>i&1 != 0 {
					y ^= pw[i]
				}
			}
			phi[x] = y
		}
		found = true
	}
	if !found {
		log.Fatal("no isomorphism")
	}
	var phiInv [256]byte
	for x := 0; x < 256; x++ {
		phiInv[phi[x]] = byte(x)
	}
	for a := 0; a < 256; a++ {
		for b := 0; b < 256; b++ {
			if phi[aesMul(byte(a), byte(b))] != towerMul(phi[a], phi[b]) {
				log.Fatal("φ is not a field isomorphism")
			}
		}
	}

	// S0.
	c0 := newCircuit(8)
	in := []int{0, 1, 2, 3, 4, 5, 6, 7}
	x2, x1 := in[:4], in[4:]
	q := xorW(c0, x1, c0.anf4(x2, func(v byte) byte { return p1[v] }))
	r := xorW(c0, x2, c0.anf4(q, func(v byte) byte { return p2[v] }))
	s := xorW(c0, q, c0.anf4(r, func(v byte) byte { return p3[v] }))
	sr := append(append([]int{}, r...), s...)
	o0 := make([]int, 8)
	for i := range sr {
		o0[(i+5)%8] = sr[i]
	}
	check(c0, o0, s0Ref, "S0")

	// S1.
	c1 := newCircuit(8)
	y := c1.linear(in, func(v byte) byte { return phi[apply(s1M, v)] })
	a0, a1 := y[:4], y[4:]
	delta := xorW(c1, xorW(c1,
		c1.linear(a1, func(v byte) byte { return gf16Mul(gf16Mul(v, v), lambda) }),
		c1.gf16MulW(a1, a0)),
		c1.linear(a0, func(v byte) byte { return gf16Mul(v, v) }))
	d := c1.anf4(delta, gf16Inv)
	b1 := c1.gf16MulW(a1, d)
	b0 := c1.gf16MulW(xorW(c1, a0, a1), d)
	z := append(append([]int{}, b0...), b1...)
	o1 := c1.linear(z, func(v byte) byte { return apply(s1L, phiInv[v]) })
	for i := range o1 {
		if 0x55>>i&1 != 0 {
			o1[i] = c1.not(o1[i])
		}
	}
	check(c1, o1, s1Ref, "S1")

	var b bytes.Buffer
	b.WriteString(`// Code generated by gen_sbox.go; DO NOT EDIT.

package zuc

`)
	fmt.Fprintf(&b, `// sboxLayer returns S(u) and S(v), S = (S0, S1, S0, S1) the S-box layer of
// GB/T 33133.1-2016 §5.1.2 (S0 on the most significant byte), computed
// without tables or branches: the eight bytes are transposed into bit
// planes (plane b holds bit b of every byte), the S0 circuit (%d gates)
// and the S1 circuit (%d gates) of gen_sbox.go run on all planes, and each
// byte takes the output of its own S-box through a constant mask.
func sboxLayer(u, v uint32) (uint32, uint32) {
	x := transpose8(uint64(u)<<32 | uint64(v))
	x0, x1, x2, x3 := x, x>>8, x>>16, x>>24
	x4, x5, x6, x7 := x>>32, x>>40, x>>48, x>>56
`, live(c0, o0), live(c1, o1))
	emit(&b, c0, o0, "g", "a")
	emit(&b, c1, o1, "h", "b")
	b.WriteString("\t// Bytes 1, 3, 5, 7 (the most significant of each pair) take S0.\n\tvar y uint64\n")
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&b, "\ty |= (a%d&0xaa | b%d&0x55) & 0xff << %d\n", i, i, 8*i)
	}
	b.WriteString("\ty = transpose8(y)\n\treturn uint32(y >> 32), uint32(y)\n}\n\n")

	b.WriteString(`// sboxLayer8 is sboxLayer on eight lanes at once: in[j] = u_j<<32 | v_j
// becomes S(u_j)<<32 | S(v_j). The 64 input bytes are transposed into
// eight 64-bit bit planes (planes8), so one evaluation of each circuit
// serves all eight lanes.
func sboxLayer8(in *[8]uint64) {
	p := in
	planes8(p)
	x0, x1, x2, x3, x4, x5, x6, x7 := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
`)
	emit(&b, c0, o0, "g", "a")
	emit(&b, c1, o1, "h", "b")
	b.WriteString("\t// Bytes 1, 3, 5, 7 of every lane (bytes 1, 3, 5, 7 of a plane) take S0.\n")
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&b, "\tp[%d] = a%d&0xff00ff00ff00ff00 | b%d&0x00ff00ff00ff00ff\n", i, i, i)
	}
	b.WriteString("\tplanes8(p)\n}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		os.Stdout.Write(b.Bytes())
		log.Fatal(err)
	}
	if err := os.WriteFile("sbox_ct.go", out, 0o644); err != nil {
		log.Fatal(err)
	}
}

// liveSet returns the wires the outputs depend on.
func liveSet(c *circuit, out []int) []bool {
	l := make([]bool, len(c.gates))
	for _, w := range out {
		l[w] = true
	}
	for w := len(c.gates) - 1; w >= 0; w-- {
		if !l[w] {
			continue
		}
		g := c.gates[w]
		switch g.op {
		case '^', '&':
			l[g.a], l[g.b] = true, true
		case '~':
			l[g.a] = true
		}
	}
	return l
}

func live(c *circuit, out []int) int {
	n := 0
	for w, ok := range liveSet(c, out) {
		if ok && c.gates[w].op != 'i' {
			n++
		}
	}
	return n
}

// emit writes the live gates of c as Go statements on uint64 planes, the
// inputs being x0..x7, and assigns output i to <res>i.
func emit(b *bytes.Buffer, c *circuit, out []int, prefix, res string) {
	l := liveSet(c, out)
	name := func(w int) string {
		if g := c.gates[w]; g.op == 'i' {
			return fmt.Sprintf("x%d", g.a)
		}
		return fmt.Sprintf("%s%d", prefix, w)
	}
	for w, g := range c.gates {
		if !l[w] || g.op == 'i' {
			continue
		}
		var e string
		switch g.op {
		case '^':
			e = name(g.a) + " ^ " + name(g.b)
		case '&':
			e = name(g.a) + " & " + name(g.b)
		case '~':
			e = "^" + name(g.a)
		case '1':
			e = "^uint64(0)"
		}
		fmt.Fprintf(b, "\t%s := %s\n", name(w), e)
	}
	var outs []string
	for _, w := range out {
		outs = append(outs, name(w))
	}
	var lhs []string
	for i := range out {
		lhs = append(lhs, fmt.Sprintf("%s%d", res, i))
	}
	fmt.Fprintf(b, "\t%s := %s\n", strings.Join(lhs, ", "), strings.Join(outs, ", "))
}
