package ublock

import "encoding/binary"

// The reference uBlock, four blocks per pass, nibble-sliced.
//
// A uBlock state is X0 ‖ X1, two halves of 16 (n = 128) or 32 (n = 256)
// nibbles, and every step but the S-box moves whole nibbles: the round key
// addition, the 32-bit rotations by 4, 8 and 20 bits, and the byte
// permutations PL and PR. So four blocks are loaded as 64-bit big-endian
// words, and the four words at the same position of the four blocks are
// transposed (transpose4) into four planes: plane j holds bit j of every
// nibble, bit 4k+i of it coming from nibble k of block i. A nibble
// position k of the words is nibble position k of the planes, so the
// linear layer is applied to each plane as if it were a word, while the
// S-box is one Boolean circuit over the four planes (64 nibbles at once).
// The state stays in that form through all rounds; round keys enter as
// planes (keyPlane). No memory index or branch depends on key or data.

// transpose4 transposes the 4×4 bit matrix in every nibble position of
// a, b, c, d: on return, bit 4k+i of output j is bit 4k+j of input i. It
// is its own inverse.
func transpose4(a, b, c, d uint64) (uint64, uint64, uint64, uint64) {
	t := (a>>1 ^ b) & 0x5555555555555555
	b ^= t
	a ^= t << 1
	t = (c>>1 ^ d) & 0x5555555555555555
	d ^= t
	c ^= t << 1
	t = (a>>2 ^ c) & 0x3333333333333333
	c ^= t
	a ^= t << 2
	t = (b>>2 ^ d) & 0x3333333333333333
	d ^= t
	b ^= t << 2
	return a, b, c, d
}

// keyPlane returns plane j of a round-key word shared by all four blocks:
// every nibble is all ones where bit j of the key's nibble is set.
func keyPlane(k uint64, j uint) uint64 {
	return (k >> j & nibbleLow) * 0xf
}

// rot4, rot8 and rot20 rotate each 32-bit word of x left (<<<_32).
func rot4(x uint64) uint64  { return x<<4&0xfffffff0fffffff0 | x>>28&0x0000000f0000000f }
func rot8(x uint64) uint64  { return x<<8&0xffffff00ffffff00 | x>>24&0x000000ff000000ff }
func rot20(x uint64) uint64 { return x<<20&0xfff00000fff00000 | x>>12&0x000fffff000fffff }

// mix is the XOR/rotate network of a round on the halves a = X0, b = X1
// (one word position or one plane of each).
func mix(a, b uint64) (uint64, uint64) {
	b ^= a
	a ^= rot4(b)
	b ^= rot8(a)
	a ^= rot8(b)
	b ^= rot20(a)
	a ^= b
	return a, b
}

// unmix inverts mix.
func unmix(a, b uint64) (uint64, uint64) {
	a ^= b
	b ^= rot20(a)
	a ^= rot8(b)
	b ^= rot8(a)
	a ^= rot4(b)
	b ^= a
	return a, b
}

// encrypt4x128 encrypts the four 128-bit blocks in w (see load) in place.
// The eight planes are kept in scalar variables (Go keeps arrays in
// memory, scalars in registers): a0..a3 of X0, b0..b3 of X1.
func encrypt4x128(s *Schedule, w *[8]uint64) {
	a0, a1, a2, a3 := transpose4(w[0], w[2], w[4], w[6])
	b0, b1, b2, b3 := transpose4(w[1], w[3], w[5], w[7])
	rk := s.RK[:16*(s.Rounds+1)]
	for len(rk) > 16 {
		k0, k1 := binary.BigEndian.Uint64(rk[0:8]), binary.BigEndian.Uint64(rk[8:16])
		a0, a1, a2, a3 = sbox(a0^keyPlane(k0, 0), a1^keyPlane(k0, 1), a2^keyPlane(k0, 2), a3^keyPlane(k0, 3))
		b0, b1, b2, b3 = sbox(b0^keyPlane(k1, 0), b1^keyPlane(k1, 1), b2^keyPlane(k1, 2), b3^keyPlane(k1, 3))
		a0, b0 = mix(a0, b0)
		a1, b1 = mix(a1, b1)
		a2, b2 = mix(a2, b2)
		a3, b3 = mix(a3, b3)
		a0, a1, a2, a3 = pl128(a0), pl128(a1), pl128(a2), pl128(a3)
		b0, b1, b2, b3 = pr128(b0), pr128(b1), pr128(b2), pr128(b3)
		rk = rk[16:]
	}
	k0, k1 := binary.BigEndian.Uint64(rk[0:8]), binary.BigEndian.Uint64(rk[8:16])
	w[0], w[2], w[4], w[6] = transpose4(a0^keyPlane(k0, 0), a1^keyPlane(k0, 1), a2^keyPlane(k0, 2), a3^keyPlane(k0, 3))
	w[1], w[3], w[5], w[7] = transpose4(b0^keyPlane(k1, 0), b1^keyPlane(k1, 1), b2^keyPlane(k1, 2), b3^keyPlane(k1, 3))
}

// decrypt4x128 decrypts the four 128-bit blocks in w in place.
func decrypt4x128(s *Schedule, w *[8]uint64) {
	rk := s.RK[:16*(s.Rounds+1)]
	k0, k1 := binary.BigEndian.Uint64(rk[len(rk)-16:]), binary.BigEndian.Uint64(rk[len(rk)-8:])
	a0, a1, a2, a3 := transpose4(w[0], w[2], w[4], w[6])
	b0, b1, b2, b3 := transpose4(w[1], w[3], w[5], w[7])
	a0, a1, a2, a3 = a0^keyPlane(k0, 0), a1^keyPlane(k0, 1), a2^keyPlane(k0, 2), a3^keyPlane(k0, 3)
	b0, b1, b2, b3 = b0^keyPlane(k1, 0), b1^keyPlane(k1, 1), b2^keyPlane(k1, 2), b3^keyPlane(k1, 3)
	for i := s.Rounds - 1; i >= 0; i-- {
		a0, b0 = unmix(plInv128(a0), prInv128(b0))
		a1, b1 = unmix(plInv128(a1), prInv128(b1))
		a2, b2 = unmix(plInv128(a2), prInv128(b2))
		a3, b3 = unmix(plInv128(a3), prInv128(b3))
		a0, a1, a2, a3 = sboxInv(a0, a1, a2, a3)
		b0, b1, b2, b3 = sboxInv(b0, b1, b2, b3)
		k := rk[16*i : 16*i+16]
		k0, k1 = binary.BigEndian.Uint64(k[0:8]), binary.BigEndian.Uint64(k[8:16])
		a0, a1, a2, a3 = a0^keyPlane(k0, 0), a1^keyPlane(k0, 1), a2^keyPlane(k0, 2), a3^keyPlane(k0, 3)
		b0, b1, b2, b3 = b0^keyPlane(k1, 0), b1^keyPlane(k1, 1), b2^keyPlane(k1, 2), b3^keyPlane(k1, 3)
	}
	w[0], w[2], w[4], w[6] = transpose4(a0, a1, a2, a3)
	w[1], w[3], w[5], w[7] = transpose4(b0, b1, b2, b3)
}

// planes256 is the state of four 256-bit blocks: the planes of the high
// and low 64-bit words of X0 (ah, al) and of X1 (bh, bl).
type planes256 struct {
	ah, al, bh, bl [4]uint64
}

// load transposes four blocks, given as words w[4i..4i+3] (X0 high, X0
// low, X1 high, X1 low of block i), into p.
func (p *planes256) load(w *[16]uint64) {
	p.ah[0], p.ah[1], p.ah[2], p.ah[3] = transpose4(w[0], w[4], w[8], w[12])
	p.al[0], p.al[1], p.al[2], p.al[3] = transpose4(w[1], w[5], w[9], w[13])
	p.bh[0], p.bh[1], p.bh[2], p.bh[3] = transpose4(w[2], w[6], w[10], w[14])
	p.bl[0], p.bl[1], p.bl[2], p.bl[3] = transpose4(w[3], w[7], w[11], w[15])
}

// store is the inverse of load.
func (p *planes256) store(w *[16]uint64) {
	w[0], w[4], w[8], w[12] = transpose4(p.ah[0], p.ah[1], p.ah[2], p.ah[3])
	w[1], w[5], w[9], w[13] = transpose4(p.al[0], p.al[1], p.al[2], p.al[3])
	w[2], w[6], w[10], w[14] = transpose4(p.bh[0], p.bh[1], p.bh[2], p.bh[3])
	w[3], w[7], w[11], w[15] = transpose4(p.bl[0], p.bl[1], p.bl[2], p.bl[3])
}

// addKey256 XORs round key RK_i into p.
func addKey256(s *Schedule, p *planes256, i int) {
	rk := s.RK[32*i : 32*i+32]
	k0, k1 := binary.BigEndian.Uint64(rk[0:8]), binary.BigEndian.Uint64(rk[8:16])
	k2, k3 := binary.BigEndian.Uint64(rk[16:24]), binary.BigEndian.Uint64(rk[24:32])
	for j := range 4 {
		p.ah[j] ^= keyPlane(k0, uint(j))
		p.al[j] ^= keyPlane(k1, uint(j))
		p.bh[j] ^= keyPlane(k2, uint(j))
		p.bl[j] ^= keyPlane(k3, uint(j))
	}
}

// sbox256 applies S (or S⁻¹) to every nibble of p.
func (p *planes256) sbox(f func(x0, x1, x2, x3 uint64) (uint64, uint64, uint64, uint64)) {
	p.ah[0], p.ah[1], p.ah[2], p.ah[3] = f(p.ah[0], p.ah[1], p.ah[2], p.ah[3])
	p.al[0], p.al[1], p.al[2], p.al[3] = f(p.al[0], p.al[1], p.al[2], p.al[3])
	p.bh[0], p.bh[1], p.bh[2], p.bh[3] = f(p.bh[0], p.bh[1], p.bh[2], p.bh[3])
	p.bl[0], p.bl[1], p.bl[2], p.bl[3] = f(p.bl[0], p.bl[1], p.bl[2], p.bl[3])
}

// encrypt4x256 encrypts the four 256-bit blocks in w (see load) in place.
func encrypt4x256(s *Schedule, w *[16]uint64) {
	var p planes256
	p.load(w)
	for i := range s.Rounds {
		addKey256(s, &p, i)
		p.sbox(sbox)
		for j := range 4 {
			ah, bh := mix(p.ah[j], p.bh[j])
			al, bl := mix(p.al[j], p.bl[j])
			p.ah[j], p.al[j] = pl256(ah, al)
			p.bh[j], p.bl[j] = pr256(bh, bl)
		}
	}
	addKey256(s, &p, s.Rounds)
	p.store(w)
}

// decrypt4x256 decrypts the four 256-bit blocks in w in place.
func decrypt4x256(s *Schedule, w *[16]uint64) {
	var p planes256
	p.load(w)
	addKey256(s, &p, s.Rounds)
	for i := s.Rounds - 1; i >= 0; i-- {
		for j := range 4 {
			ah, al := plInv256(p.ah[j], p.al[j])
			bh, bl := prInv256(p.bh[j], p.bl[j])
			p.ah[j], p.bh[j] = unmix(ah, bh)
			p.al[j], p.bl[j] = unmix(al, bl)
		}
		p.sbox(sboxInv)
		addKey256(s, &p, i)
	}
	p.store(w)
}

// ecbGeneric runs the four-block function of the variant over whole
// blocks of src into dst; a last partial group is padded with zero blocks
// that are not written back. dst may equal src.
func ecbGeneric(s *Schedule, dst, src []byte, decrypt bool) {
	bs := s.BlockSize
	if len(src)%bs != 0 || len(dst) < len(src) {
		panic("ublock: input not full blocks or output too short")
	}
	group := 4 * bs
	for len(src) > 0 {
		n := min(len(src), group)
		var w [16]uint64
		for i := range n / 8 {
			w[i] = binary.BigEndian.Uint64(src[8*i:])
		}
		switch {
		case bs == BlockSize && !decrypt:
			encrypt4x128(s, (*[8]uint64)(w[:8]))
		case bs == BlockSize:
			decrypt4x128(s, (*[8]uint64)(w[:8]))
		case !decrypt:
			encrypt4x256(s, &w)
		default:
			decrypt4x256(s, &w)
		}
		for i := range n / 8 {
			binary.BigEndian.PutUint64(dst[8*i:], w[i])
		}
		src, dst = src[n:], dst[n:]
	}
}

// encryptBlocksGeneric encrypts whole blocks of src (len(src) a multiple
// of s.BlockSize) into dst (ECB); dst may equal src.
func encryptBlocksGeneric(s *Schedule, dst, src []byte) { ecbGeneric(s, dst, src, false) }

// decryptBlocksGeneric decrypts whole blocks of src into dst (ECB); dst
// may equal src.
func decryptBlocksGeneric(s *Schedule, dst, src []byte) { ecbGeneric(s, dst, src, true) }

// ctr32XORGeneric XORs the GCM counter-mode keystream (SP 800-38D §6.5,
// GCTR) into src and writes dst, for the 128-bit-block variants: keystream
// block i is E(ctr), after which the last four bytes of ctr, a big-endian
// counter, are incremented mod 2^32 (inc32). len(src) may end in a
// partial block; on return *ctr is the next unused counter block. dst
// may equal src (exact overlap only) and must be at least len(src) long.
func ctr32XORGeneric(s *Schedule, ctr *[16]byte, dst, src []byte) {
	if s.BlockSize != BlockSize {
		panic("ublock: CTR needs a 128-bit block")
	}
	if len(dst) < len(src) {
		panic("ublock: output smaller than input")
	}
	hi := binary.BigEndian.Uint64(ctr[0:8])
	mid := uint64(binary.BigEndian.Uint32(ctr[8:12])) << 32
	c := binary.BigEndian.Uint32(ctr[12:16])
	for len(src) > 0 {
		var w [8]uint64
		for i := range 4 {
			w[2*i], w[2*i+1] = hi, mid|uint64(c+uint32(i))
		}
		encrypt4x128(s, &w)
		n := min(len(src), 4*BlockSize)
		c += uint32((n + BlockSize - 1) / BlockSize)
		var ks [4 * BlockSize]byte
		for i := range w {
			binary.BigEndian.PutUint64(ks[8*i:], w[i])
		}
		for i := range n {
			dst[i] = src[i] ^ ks[i]
		}
		src, dst = src[n:], dst[n:]
	}
	binary.BigEndian.PutUint32(ctr[12:16], c)
}
