package main

import (
	"fmt"
	"math/bits"
)

// sm4SBox is the SM4 S-box τ of GB/T 32907-2016 §6.2.1 (Table 1), indexed by
// the input byte. Every circuit derived below is checked against it on all
// 256 inputs before any assembly is emitted.
var sm4SBox = [256]byte{
	0xd6, 0x90, 0xe9, 0xfe, 0xcc, 0xe1, 0x3d, 0xb7, 0x16, 0xb6, 0x14, 0xc2, 0x28, 0xfb, 0x2c, 0x05,
	0x2b, 0x67, 0x9a, 0x76, 0x2a, 0xbe, 0x04, 0xc3, 0xaa, 0x44, 0x13, 0x26, 0x49, 0x86, 0x06, 0x99,
	0x9c, 0x42, 0x50, 0xf4, 0x91, 0xef, 0x98, 0x7a, 0x33, 0x54, 0x0b, 0x43, 0xed, 0xcf, 0xac, 0x62,
	0xe4, 0xb3, 0x1c, 0xa9, 0xc9, 0x08, 0xe8, 0x95, 0x80, 0xdf, 0x94, 0xfa, 0x75, 0x8f, 0x3f, 0xa6,
	0x47, 0x07, 0xa7, 0xfc, 0xf3, 0x73, 0x17, 0xba, 0x83, 0x59, 0x3c, 0x19, 0xe6, 0x85, 0x4f, 0xa8,
	0x68, 0x6b, 0x81, 0xb2, 0x71, 0x64, 0xda, 0x8b, 0xf8, 0xeb, 0x0f, 0x4b, 0x70, 0x56, 0x9d, 0x35,
	0x1e, 0x24, 0x0e, 0x5e, 0x63, 0x58, 0xd1, 0xa2, 0x25, 0x22, 0x7c, 0x3b, 0x01, 0x21, 0x78, 0x87,
	0xd4, 0x00, 0x46, 0x57, 0x9f, 0xd3, 0x27, 0x52, 0x4c, 0x36, 0x02, 0xe7, 0xa0, 0xc4, 0xc8, 0x9e,
	0xea, 0xbf, 0x8a, 0xd2, 0x40, 0xc7, 0x38, 0xb5, 0xa3, 0xf7, 0xf2, 0xce, 0xf9, 0x61, 0x15, 0xa1,
	0xe0, 0xae, 0x5d, 0xa4, 0x9b, 0x34, 0x1a, 0x55, 0xad, 0x93, 0x32, 0x30, 0xf5, 0x8c, 0xb1, 0xe3,
	0x1d, 0xf6, 0xe2, 0x2e, 0x82, 0x66, 0xca, 0x60, 0xc0, 0x29, 0x23, 0xab, 0x0d, 0x53, 0x4e, 0x6f,
	0xd5, 0xdb, 0x37, 0x45, 0xde, 0xfd, 0x8e, 0x2f, 0x03, 0xff, 0x6a, 0x72, 0x6d, 0x6c, 0x5b, 0x51,
	0x8d, 0x1b, 0xaf, 0x92, 0xbb, 0xdd, 0xbc, 0x7f, 0x11, 0xd9, 0x5c, 0x41, 0x1f, 0x10, 0x5a, 0xd8,
	0x0a, 0xc1, 0x31, 0x88, 0xa5, 0xcd, 0x7b, 0xbd, 0x2d, 0x74, 0xd0, 0x12, 0xb8, 0xe5, 0xb4, 0xb0,
	0x89, 0x69, 0x97, 0x4a, 0x0c, 0x96, 0x77, 0x7e, 0x65, 0xb9, 0xf1, 0x09, 0xc5, 0x6e, 0xc6, 0x84,
	0x18, 0xf0, 0x7d, 0xec, 0x3a, 0xdc, 0x4d, 0x20, 0x79, 0xee, 0x5f, 0x3e, 0xd7, 0xcb, 0x39, 0x48,
}

// polySM4 is the field polynomial x^8+x^7+x^6+x^5+x^4+x^2+1 under which
// SM4's S-box is an affine-inverse-affine map (Liu et al., "Algebraic
// structure of the SMS4 block cipher"). The derivation below tries both bit
// orders and accepts only an exhaustive match with the table.
const polySM4 = 0x1f5

// gfMul multiplies in GF(2^8) modulo poly (generator-time, public data).
func gfMul(a, b byte, poly uint16) byte {
	var r uint16
	x := uint16(a)
	for i := 0; i < 8; i++ {
		if b>>i&1 == 1 {
			r ^= x
		}
		x <<= 1
		if x&0x100 != 0 {
			x ^= poly
		}
	}
	return byte(r)
}

// gfInv is a^254 modulo poly (0 maps to 0).
func gfInv(a byte, poly uint16) byte {
	r := byte(1)
	for i := 0; i < 254; i++ {
		r = gfMul(r, a, poly)
	}
	return r
}

// lin is a linear map on GF(2)^8: output bit i = parity(rows[i] & x).
type lin [8]byte

func (m lin) apply(x byte) byte {
	var y byte
	for i, r := range m {
		y |= byte(bits.OnesCount8(r&x)&1) << i
	}
	return y
}

// linOf recovers the linear map f computes and checks that f is linear.
func linOf(name string, f func(byte) byte) lin {
	var m lin
	for j := 0; j < 8; j++ {
		col := f(1 << j)
		for i := 0; i < 8; i++ {
			m[i] |= (col >> i & 1) << j
		}
	}
	for x := 0; x < 256; x++ {
		if m.apply(byte(x)) != f(byte(x)) {
			panic(fmt.Sprintf("sm4bs gen: %s is not linear (input %#02x)", name, x))
		}
	}
	return m
}

// ---------------------------------------------------------------------------
// Tower field GF(((2^2)^2)^2), polynomial bases throughout:
//
//	GF(4)   = GF(2)[W]/(W^2+W+1),   element a1·W + a0     (bits 1, 0)
//	GF(16)  = GF(4)[Z]/(Z^2+Z+μ),   element c1·Z + c0     (nibble = c1<<2|c0)
//	GF(256) = GF(16)[Y]/(Y^2+Y+ν),  element h·Y + l       (byte = h<<4|l)
//
// with μ = W and ν found by search (Y^2+Y+ν irreducible over GF(16)).
// Inversion (Itoh–Tsujii / norm form, derived from (hY+l)(h'Y+l') = 1):
//
//	Δ = h²ν + h·l + l²,   (hY+l)⁻¹ = (h·Δ⁻¹)Y + (h+l)·Δ⁻¹
//
// and likewise one level down, with GF(4) inversion being squaring.
// ---------------------------------------------------------------------------

// tower holds the two field constants μ (GF(4)) and ν (GF(16)).
type tower struct{ mu, nu byte }

func mul4(a, b byte) byte {
	a1, a0, b1, b0 := a>>1&1, a&1, b>>1&1, b&1
	hi := a1&b1 ^ a1&b0 ^ a0&b1
	lo := a1&b1 ^ a0&b0
	return hi<<1 | lo
}

func (t tower) mul16(a, b byte) byte {
	a1, a0, b1, b0 := a>>2&3, a&3, b>>2&3, b&3
	p := mul4(a1, b1)
	hi := p ^ mul4(a1, b0) ^ mul4(a0, b1)
	lo := mul4(p, t.mu) ^ mul4(a0, b0)
	return hi<<2 | lo
}

func (t tower) mul256(a, b byte) byte {
	h1, l1, h2, l2 := a>>4, a&15, b>>4, b&15
	p := t.mul16(h1, h2)
	hi := p ^ t.mul16(h1, l2) ^ t.mul16(l1, h2)
	lo := t.mul16(p, t.nu) ^ t.mul16(l1, l2)
	return hi<<4 | lo
}

// towers lists every (μ, ν) with Z^2+Z+μ irreducible over GF(4) and
// Y^2+Y+ν irreducible over GF(16).
func towers() []tower {
	var ts []tower
	for mu := byte(2); mu <= 3; mu++ {
		for nu := byte(1); nu < 16; nu++ {
			t := tower{mu, nu}
			root := false
			for y := byte(0); y < 16; y++ {
				if t.mul16(y, y)^y^nu == 0 {
					root = true
				}
			}
			if !root {
				ts = append(ts, t)
			}
		}
	}
	return ts
}

func (t tower) invTable() [256]byte {
	var inv [256]byte
	for x := 1; x < 256; x++ {
		for y := 1; y < 256; y++ {
			if t.mul256(byte(x), byte(y)) == 1 {
				inv[x] = byte(y)
				break
			}
		}
	}
	return inv
}

// sboxForm is τ(x) = out(inv_T(in(x ⊕ d))) ⊕ e with inv_T the inversion
// in tower field t and in, out linear: the constants d and e are folded
// into the round keys by the kernel (see keyFolds), so the circuit itself
// is linear layers around the inversion, with no NOT gates.
type sboxForm struct {
	t       tower
	in, out lin
	d, e    byte
}

// sboxForms finds τ = A·I(A·x ⊕ C) ⊕ C in SM4's field (A circulant) and,
// for every tower field and every isomorphism φ from SM4's field to it
// (x ↦ β^i basis, β any root of SM4's polynomial), rewrites
// τ(x) = Aφ⁻¹·inv_T(φA·(x ⊕ d)) ⊕ e. d and e are found by search (d =
// A⁻¹C, e = C) and every form is checked on all 256 inputs.
func sboxForms() []sboxForm {
	rot := func(v byte, n int) byte { n &= 7; return v<<n | v>>(8-n) }
	for _, poly := range []uint16{polySM4, bitRev9(polySM4)} {
		var inv [256]byte
		for x := range inv {
			inv[x] = gfInv(byte(x), poly)
		}
		for dir := -1; dir <= 1; dir += 2 {
			for r0 := 1; r0 < 256; r0++ {
				var a lin
				for i := range a {
					a[i] = rot(byte(r0), dir*i)
				}
				for c := 0; c < 256; c++ {
					ok := true
					for x := 0; x < 256 && ok; x++ {
						ok = a.apply(inv[a.apply(byte(x))^byte(c)])^byte(c) == sm4SBox[x]
					}
					if ok {
						return formsFor(a, poly)
					}
				}
			}
		}
	}
	panic("sm4bs gen: no affine-inverse-affine form of the SM4 S-box found")
}

func formsFor(a lin, poly uint16) []sboxForm {
	var forms []sboxForm
	for _, t := range towers() {
		tinv := t.invTable()
		for _, iso := range towerIsos(poly, t) {
			phi, phiInv := iso[0], iso[1]
			in := linOf("in", func(x byte) byte { return phi.apply(a.apply(x)) })
			out := linOf("out", func(y byte) byte { return a.apply(phiInv.apply(y)) })
			s0 := func(x byte) byte { return out.apply(tinv[in.apply(x)]) }
			found := false
			for d := 0; d < 256 && !found; d++ {
				e := sm4SBox[d] // τ(d) = s0(0) ⊕ e = e
				match := true
				for x := 0; x < 256 && match; x++ {
					match = s0(byte(x)^byte(d))^e == sm4SBox[x]
				}
				if match {
					forms = append(forms, sboxForm{t: t, in: in, out: out, d: byte(d), e: e})
					found = true
				}
			}
			if !found {
				panic("sm4bs gen: tower form does not reproduce the S-box")
			}
		}
	}
	return forms
}

func bitRev9(p uint16) uint16 {
	var r uint16
	for i := 0; i <= 8; i++ {
		r |= (p >> i & 1) << (8 - i)
	}
	return r
}

// towerIsos returns every isomorphism φ from SM4's field (mod poly) to the
// tower field t, with its inverse, as GF(2)-linear maps; each is checked
// to be multiplicative on all pairs.
func towerIsos(poly uint16, t tower) [][2]lin {
	var isos [][2]lin
	for beta := 2; beta < 256; beta++ {
		var v, pw byte = 0, 1
		for k := 0; k <= 8; k++ {
			if poly>>k&1 == 1 {
				v ^= pw
			}
			pw = t.mul256(pw, byte(beta))
		}
		if v != 0 {
			continue
		}
		var phi lin
		pw = 1
		for k := 0; k < 8; k++ {
			for i := 0; i < 8; i++ {
				phi[i] |= (pw >> i & 1) << k
			}
			pw = t.mul256(pw, byte(beta))
		}
		var back [256]byte
		var seen [256]bool
		for x := 0; x < 256; x++ {
			y := phi.apply(byte(x))
			seen[y] = true
			back[y] = byte(x)
		}
		bij := true
		for _, s := range seen {
			bij = bij && s
		}
		if !bij {
			panic("sm4bs gen: β basis is not a basis")
		}
		for x := 0; x < 256; x += 7 {
			for y := 0; y < 256; y++ {
				if phi.apply(gfMul(byte(x), byte(y), poly)) != t.mul256(phi.apply(byte(x)), phi.apply(byte(y))) {
					panic("sm4bs gen: tower map is not multiplicative")
				}
			}
		}
		isos = append(isos, [2]lin{phi, linOf("phi⁻¹", func(y byte) byte { return back[y] })})
	}
	return isos
}
