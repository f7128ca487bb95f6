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
