package main

import (
	"fmt"
	"math/bits"

	"github.com/gmtun/gmtun/internal/reftables"
	"github.com/gmtun/gmtun/kernels/_gen/internal/gf"
)

// sm4SBox is the SM4 S-box τ of GB/T 32907-2016 §6.2.1 (Table 1), from
// internal/reftables (the one transcription the tests use too). Every
// circuit derived below is checked against it on all 256 inputs before any
// assembly is emitted.
var sm4SBox = reftables.SM4SBox

// polySM4 is the field polynomial x^8+x^7+x^6+x^5+x^4+x^2+1 under which
// SM4's S-box is an affine-inverse-affine map (Liu et al., "Algebraic
// structure of the SMS4 block cipher"). The derivation below tries both bit
// orders and accepts only an exhaustive match with the table.
const polySM4 = 0x1f5

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
			panic(fmt.Sprintf("sm4circuit gen: %s is not linear (input %#02x)", name, x))
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
// in tower field t and in, out linear: the constants d and e are left to
// the caller (ciphers/internal/sm4 folds them into its round inputs), so
// the circuit itself is linear layers around the inversion, with no NOT
// gates.
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
			inv[x] = gf.Inv(byte(x), poly)
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
	panic("sm4circuit gen: no affine-inverse-affine form of the SM4 S-box found")
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
				panic("sm4circuit gen: tower form does not reproduce the S-box")
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
			panic("sm4circuit gen: β basis is not a basis")
		}
		for x := 0; x < 256; x += 7 {
			for y := 0; y < 256; y++ {
				if phi.apply(gf.Mul(byte(x), byte(y), poly)) != t.mul256(phi.apply(byte(x)), phi.apply(byte(y))) {
					panic("sm4circuit gen: tower map is not multiplicative")
				}
			}
		}
		isos = append(isos, [2]lin{phi, linOf("phi⁻¹", func(y byte) byte { return back[y] })})
	}
	return isos
}
