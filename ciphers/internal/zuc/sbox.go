package zuc

//go:generate go run gen_sbox.go

// transpose8 transposes the 8×8 bit matrix x whose row r is byte r
// (bits 8r..8r+7) and column c bit c of each byte: bit 8r+c moves to bit
// 8c+r. It is its own inverse. sboxLayer uses it to turn the eight S-box
// inputs of a round into bit planes and back (three delta swaps).
func transpose8(x uint64) uint64 {
	t := (x ^ x>>7) & 0x00aa00aa00aa00aa
	x ^= t ^ t<<7
	t = (x ^ x>>14) & 0x0000cccc0000cccc
	x ^= t ^ t<<14
	t = (x ^ x>>28) & 0x00000000f0f0f0f0
	return x ^ t ^ t<<28
}

// planes8 turns the eight lanes' S-box inputs w[j] (eight bytes each, as
// sboxLayer packs them) into bit planes: bit 8j+k of plane b is bit b of
// byte k of w[j]. Each word is transposed as an 8×8 bit matrix, then the
// eight words as an 8×8 byte matrix. unplanes8 is its inverse.
func planes8(w *[8]uint64) [8]uint64 {
	var p [8]uint64
	for j := range p {
		p[j] = transpose8(w[j])
	}
	byteTranspose(&p)
	return p
}

// unplanes8 is the inverse of planes8: the byte transpose, then the bit
// transpose of every word.
func unplanes8(p *[8]uint64) [8]uint64 {
	w := *p
	byteTranspose(&w)
	for j := range w {
		w[j] = transpose8(w[j])
	}
	return w
}

// byteTranspose transposes the 8×8 byte matrix whose row j is p[j] (byte
// b of p[j] moves to byte j of p[b]) in three rounds of delta swaps.
func byteTranspose(p *[8]uint64) {
	for j := 0; j < 4; j++ {
		t := (p[j]>>32 ^ p[j+4]) & 0x00000000ffffffff
		p[j] ^= t << 32
		p[j+4] ^= t
	}
	for _, j := range [4]int{0, 1, 4, 5} {
		t := (p[j]>>16 ^ p[j+2]) & 0x0000ffff0000ffff
		p[j] ^= t << 16
		p[j+2] ^= t
	}
	for j := 0; j < 8; j += 2 {
		t := (p[j]>>8 ^ p[j+1]) & 0x00ff00ff00ff00ff
		p[j] ^= t << 8
		p[j+1] ^= t
	}
}
