package ublock

// The uBlock S-box S and its inverse as Boolean circuits, derived from
// their algebraic normal forms (tables_test.go checks both on all 16
// inputs against the spec's tables). Each argument is a bit plane: bit j
// of a 4-bit input x = x3x2x1x0 comes from xj, and the outputs are the
// planes of S(x). The same gates run on the transposed block state (64
// nibbles per call) and, masked, on packed words in the key schedule.

// sbox returns the planes of S(x3x2x1x0).
func sbox(x0, x1, x2, x3 uint64) (y0, y1, y2, y3 uint64) {
	t23 := x2 & x3
	y0 = ^(x0 ^ t23)
	y1 = ^((x0 | x1) ^ (x0 & x2 &^ x1) ^ (x3 & (x0 ^ x2)))
	y2 = ^((x1 &^ x0) ^ x2 ^ (x1 & t23))
	y3 = (x1 | x2) ^ x3
	return
}

// sboxInv returns the planes of S⁻¹(x3x2x1x0).
func sboxInv(x0, x1, x2, x3 uint64) (y0, y1, y2, y3 uint64) {
	y0 = (x0 & x1 &^ x3) ^ (x2 &^ x3) ^ (x3 &^ x0)
	y1 = x1 ^ (x0 | x3)
	y2 = ^((x0 &^ x1) ^ x2)
	y3 = ^(x3 ^ (x2 &^ y1))
	return
}

// nibbleLow selects bit 0 of every nibble of a word.
const nibbleLow = 0x1111111111111111

// sboxWord applies S to each of the 16 nibbles of w (SWAR, for the key
// schedule).
func sboxWord(w uint64) uint64 {
	y0, y1, y2, y3 := sbox(w&nibbleLow, w>>1&nibbleLow, w>>2&nibbleLow, w>>3&nibbleLow)
	return y0&nibbleLow | (y1&nibbleLow)<<1 | (y2&nibbleLow)<<2 | (y3&nibbleLow)<<3
}

// sboxInvWord applies S⁻¹ to each of the 16 nibbles of w.
func sboxInvWord(w uint64) uint64 {
	y0, y1, y2, y3 := sboxInv(w&nibbleLow, w>>1&nibbleLow, w>>2&nibbleLow, w>>3&nibbleLow)
	return y0&nibbleLow | (y1&nibbleLow)<<1 | (y2&nibbleLow)<<2 | (y3&nibbleLow)<<3
}

// tWord multiplies each of the 16 nibbles of w by x in GF(2^4) modulo
// x^4 + x + 1 (the key schedule's T): a shift left by one, and the bit
// shifted out of the nibble comes back as x + 1.
func tWord(w uint64) uint64 {
	return w<<1&0xeeeeeeeeeeeeeeee ^ (w>>3&nibbleLow)*3
}
