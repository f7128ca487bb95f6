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

// planes8 turns the eight lanes' S-box inputs in place into bit planes:
// bit b of byte k of w[j] (lane j, as sboxLayer packs it) moves to bit j
// of byte k of w[b], so word b is the plane of bit b of all 64 bytes, byte
// k of every lane in byte k of the plane. It exchanges the three bits of
// the word index with the three bits of the bit-in-byte index, one delta
// swap per index bit, and is its own inverse.
func planes8(w *[8]uint64) {
	for j := range 8 {
		if j&1 == 0 {
			t := (w[j]>>1 ^ w[j+1]) & 0x5555555555555555
			w[j] ^= t << 1
			w[j+1] ^= t
		}
	}
	for j := range 8 {
		if j&2 == 0 {
			t := (w[j]>>2 ^ w[j+2]) & 0x3333333333333333
			w[j] ^= t << 2
			w[j+2] ^= t
		}
	}
	for j := range 4 {
		t := (w[j]>>4 ^ w[j+4]) & 0x0f0f0f0f0f0f0f0f
		w[j] ^= t << 4
		w[j+4] ^= t
	}
}
