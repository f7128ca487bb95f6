package main

import "fmt"

// sm4SBox is the SM4 S-box τ of GB/T 32907-2016 §6.2.1 (Table 1), indexed by
// the input byte. It is the ground truth every derived transform below is
// checked against, exhaustively, before any assembly is emitted.
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

// Field polynomials. SM4's S-box is built on GF(2^8) modulo
// x^8+x^7+x^6+x^5+x^4+x^2+1; AES (and so GFNI's GF2P8AFFINEINVQB and
// AESENCLAST) uses x^8+x^4+x^3+x+1 (FIPS 197 §4.2).
const (
	polySM4 = 0x1f5
	polyAES = 0x11b
)

// gfMul multiplies a and b in GF(2^8) modulo poly (variable time; this runs
// only in the generator on public constants).
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

// gfInv returns the multiplicative inverse of a modulo poly (a^254), with
// 0 mapped to 0 as in both S-box constructions.
func gfInv(a byte, poly uint16) byte {
	r := byte(1)
	for i := 0; i < 254; i++ {
		r = gfMul(r, a, poly)
	}
	return r
}

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
			panic(fmt.Sprintf("sm4ctr gen: %s is not affine (input %#02x)", name, x))
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
	return gf2p8affineqb(gfInv(x, polyAES), m, imm)
}

// aesSubByte models the SubBytes step of AESENCLAST (FIPS 197 §5.1.1):
// inversion in the AES field followed by the AES affine map with 0x63.
func aesSubByte(x byte) byte {
	b := gfInv(x, polyAES)
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
			inv[x] = gfInv(byte(x), poly)
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
	panic("sm4ctr gen: no affine-inverse-affine form of the SM4 S-box found")
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
			pw = gfMul(pw, byte(beta), polyAES)
		}
		if v != 0 {
			continue
		}
		var basis [8]byte
		pw = 1
		for k := range basis {
			basis[k] = pw
			pw = gfMul(pw, byte(beta), polyAES)
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
			iso = t(gfInv(byte(x), poly)) == gfInv(t(byte(x)), polyAES)
		}
		if !iso {
			continue
		}
		pre := affineOf("pre", func(x byte) byte { return t(a.apply(x)) })
		post := affineOf("post", func(y byte) byte { return a.apply(tInv[y]) })
		var subInv [256]byte
		for x := 0; x < 256; x++ {
			subInv[aesSubByte(byte(x))] = gfInv(byte(x), polyAES)
		}
		postAES := affineOf("postAES", func(y byte) byte { return post.apply(subInv[y]) })
		return sboxTransforms{pre: pre, post: post, postAES: postAES}
	}
	panic("sm4ctr gen: no field isomorphism found")
}

// checkGFNI verifies, with the instruction models, that the two-instruction
// GFNI S-box layer equals SM4's τ on every byte.
func (s sboxTransforms) checkGFNI() {
	for x := 0; x < 256; x++ {
		y := gf2p8affineqb(byte(x), s.pre.matrix(), s.pre.c)
		y = gf2p8affineinvqb(y, s.post.matrix(), s.post.c)
		if y != sm4SBox[x] {
			panic(fmt.Sprintf("sm4ctr gen: GFNI S-box wrong at %#02x", x))
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
			panic(fmt.Sprintf("sm4ctr gen: AES-NI S-box wrong at %#02x", x))
		}
	}
}
