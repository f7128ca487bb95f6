package main

import (
	"fmt"

	"github.com/gmtun/gmtun/internal/reftables"
	"github.com/gmtun/gmtun/kernels/_gen/internal/gf"
)

// sm4SBox is the SM4 S-box τ of GB/T 32907-2016 §6.2.1 (Table 1), from
// internal/reftables (the one transcription the tests use too). It is the
// ground truth every derived transform below is checked against,
// exhaustively, before any assembly is emitted.
var sm4SBox = reftables.SM4SBox

// Field polynomials. SM4's S-box is built on GF(2^8) modulo
// x^8+x^7+x^6+x^5+x^4+x^2+1; AES (and so GFNI's GF2P8AFFINEINVQB and
// AESENCLAST) uses x^8+x^4+x^3+x+1 (FIPS 197 §4.2).
const (
	polySM4 = 0x1f5
	polyAES = 0x11b
)

func parity(x byte) byte {
	x ^= x >> 4
	x ^= x >> 2
	x ^= x >> 1
	return x & 1
}

// affine is an affine map on GF(2)^8: output bit i is
// parity(rows[i] & x) XOR bit i of c.
type affine struct {
	rows [8]byte
	c    byte
}

func (a affine) apply(x byte) byte {
	y := a.c
	for i := 0; i < 8; i++ {
		y ^= parity(a.rows[i]&x) << i
	}
	return y
}

// affineOf recovers the affine map that f computes from its values on 0
// and the unit vectors, and checks on all 256 inputs that f is affine.
func affineOf(name string, f func(byte) byte) affine {
	a := affine{c: f(0)}
	for j := 0; j < 8; j++ {
		col := f(1<<j) ^ a.c
		for i := 0; i < 8; i++ {
			a.rows[i] |= (col >> i & 1) << j
		}
	}
	for x := 0; x < 256; x++ {
		if a.apply(byte(x)) != f(byte(x)) {
			panic(fmt.Sprintf("sm4 gen: %s is not affine (input %#02x)", name, x))
		}
	}
	return a
}

// matrix encodes the linear part of a as the 64-bit matrix operand of
// GF2P8AFFINEQB: row i (the row giving output bit i) is byte 7-i of the
// qword (Intel SDM Vol. 2B, GF2P8AFFINEQB, affine_byte).
func (a affine) matrix() uint64 {
	var m uint64
	for i := 0; i < 8; i++ {
		m |= uint64(a.rows[i]) << (8 * (7 - i))
	}
	return m
}

// gf2p8affineqb models one byte of GF2P8AFFINEQB exactly as the SDM's
// pseudocode states it: bit i = parity(A.byte[7-i] AND x) XOR imm.bit[i].
func gf2p8affineqb(x byte, m uint64, imm byte) byte {
	var y byte
	for i := 0; i < 8; i++ {
		y |= parity(byte(m>>(8*(7-i)))&x) << i
	}
	return y ^ imm
}

// gf2p8affineinvqb models GF2P8AFFINEINVQB: the same affine step applied to
// the inverse of x in the AES field.
func gf2p8affineinvqb(x byte, m uint64, imm byte) byte {
	return gf2p8affineqb(gf.Inv(x, polyAES), m, imm)
}

// aesSubByte models the SubBytes step of AESENCLAST (FIPS 197 §5.1.1):
// inversion in the AES field followed by the AES affine map with 0x63.
func aesSubByte(x byte) byte {
	b := gf.Inv(x, polyAES)
	rotl := func(v byte, n uint) byte { return v<<n | v>>(8-n) }
	return b ^ rotl(b, 1) ^ rotl(b, 2) ^ rotl(b, 3) ^ rotl(b, 4) ^ 0x63
}

// sboxTransforms are the affine maps around an AES-field inversion that
// reproduce SM4's S-box: τ(x) = post(inv_AES(pre(x))).
type sboxTransforms struct {
	pre, post affine
	// postAES follows AESENCLAST's SubBytes instead of a bare inversion:
	// τ(x) = postAES(SubBytes(pre(x))).
	postAES affine
}

// deriveSBox finds SM4's algebraic structure and maps it into the AES
// field. The S-box is τ(x) = A·I(A·x + C) + C with I the inversion in SM4's
// field and A a circulant matrix (Liu et al., "Algebraic structure of the
// SMS4 block cipher"); the bit-order conventions of the published form are
// not relied on: every circulant A, constant C and both bit orders of the
// field polynomial are tried and only an exhaustive match is accepted.
// A field isomorphism T (x ↦ β^i basis, β a root of SM4's polynomial in the
// AES field) then turns I into T⁻¹·I_AES·T, giving
// pre = T·(A·x + C) and post = A·T⁻¹·y + C.
func deriveSBox() sboxTransforms {
	rot := func(v byte, n int) byte { n &= 7; return v<<n | v>>(8-n) }
	for _, poly := range []uint16{polySM4, bitReversePoly(polySM4)} {
		inv := make([]byte, 256)
		for x := range inv {
			inv[x] = gf.Inv(byte(x), poly)
		}
		for dir := -1; dir <= 1; dir += 2 {
			for r0 := 1; r0 < 256; r0++ {
				var a affine
				for i := 0; i < 8; i++ {
					a.rows[i] = rot(byte(r0), dir*i)
				}
				for c := 0; c < 256; c++ {
					ac := a
					ac.c = byte(c)
					if !matchesSBox(func(x byte) byte { return ac.apply(inv[ac.apply(x)]) }) {
						continue
					}
					return mapToAES(ac, poly)
				}
			}
		}
	}
	panic("sm4 gen: no affine-inverse-affine form of the SM4 S-box found")
}

func bitReversePoly(p uint16) uint16 {
	var r uint16
	for i := 0; i <= 8; i++ {
		r |= (p >> i & 1) << (8 - i)
	}
	return r
}

func matchesSBox(f func(byte) byte) bool {
	for x := 0; x < 256; x++ {
		if f(byte(x)) != sm4SBox[x] {
			return false
		}
	}
	return true
}

// mapToAES builds the isomorphism from SM4's field (modulo poly) to the
// AES field and returns the pre/post transforms around I_AES.
func mapToAES(a affine, poly uint16) sboxTransforms {
	for beta := 2; beta < 256; beta++ {
		// β must be a root of poly in the AES field.
		var v, pw byte = 0, 1
		for k := 0; k <= 8; k++ {
			if poly>>k&1 == 1 {
				v ^= pw
			}
			pw = gf.Mul(pw, byte(beta), polyAES)
		}
		if v != 0 {
			continue
		}
		var basis [8]byte
		pw = 1
		for k := range basis {
			basis[k] = pw
			pw = gf.Mul(pw, byte(beta), polyAES)
		}
		t := func(x byte) byte {
			var y byte
			for k := 0; k < 8; k++ {
				if x>>k&1 == 1 {
					y ^= basis[k]
				}
			}
			return y
		}
		var tInv [256]byte
		seen := 0
		for x := 0; x < 256; x++ {
			tInv[t(byte(x))] = byte(x)
		}
		for x := 0; x < 256; x++ {
			if t(tInv[x]) == byte(x) {
				seen++
			}
		}
		if seen != 256 {
			continue
		}
		// T must carry SM4-field inversion to AES-field inversion.
		iso := true
		for x := 0; x < 256 && iso; x++ {
			iso = t(gf.Inv(byte(x), poly)) == gf.Inv(t(byte(x)), polyAES)
		}
		if !iso {
			continue
		}
		pre := affineOf("pre", func(x byte) byte { return t(a.apply(x)) })
		post := affineOf("post", func(y byte) byte { return a.apply(tInv[y]) })
		var subInv [256]byte
		for x := 0; x < 256; x++ {
			subInv[aesSubByte(byte(x))] = gf.Inv(byte(x), polyAES)
		}
		postAES := affineOf("postAES", func(y byte) byte { return post.apply(subInv[y]) })
		return sboxTransforms{pre: pre, post: post, postAES: postAES}
	}
	panic("sm4 gen: no field isomorphism found")
}

// checkGFNI verifies, with the instruction models, that the two-instruction
// GFNI S-box layer equals SM4's τ on every byte.
func (s sboxTransforms) checkGFNI() {
	for x := 0; x < 256; x++ {
		y := gf2p8affineqb(byte(x), s.pre.matrix(), s.pre.c)
		y = gf2p8affineinvqb(y, s.post.matrix(), s.post.c)
		if y != sm4SBox[x] {
			panic(fmt.Sprintf("sm4 gen: GFNI S-box wrong at %#02x", x))
		}
	}
}

// nibbleTables splits affine a into two 16-entry VPSHUFB tables so that
// a(x) = lo[x & 15] ^ hi[x >> 4]; the constant goes into lo.
func nibbleTables(a affine) (lo, hi [16]byte) {
	for n := 0; n < 16; n++ {
		lo[n] = a.apply(byte(n))
		hi[n] = a.apply(byte(n<<4)) ^ a.c
	}
	return lo, hi
}

// checkAESNI verifies the AES-NI S-box layer (nibble-table pre transform,
// AESENCLAST's SubBytes with a zero round key, nibble-table post transform)
// against τ on every byte.
func (s sboxTransforms) checkAESNI() {
	preLo, preHi := nibbleTables(s.pre)
	postLo, postHi := nibbleTables(s.postAES)
	for x := 0; x < 256; x++ {
		y := preLo[x&15] ^ preHi[x>>4]
		y = aesSubByte(y)
		y = postLo[y&15] ^ postHi[y>>4]
		if y != sm4SBox[x] {
			panic(fmt.Sprintf("sm4 gen: AES-NI S-box wrong at %#02x", x))
		}
	}
}
