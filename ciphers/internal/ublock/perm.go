package ublock

// The byte permutations PL and PR of the round function and their inverses,
// as gathers (out byte i = in byte P[i], byte 0 the most significant),
// grouped by how far each byte moves: shifts and masks by public constants.
// TestPermutations checks them against the spec's tables (tables_test.go).

// pl128 is PL on a 64-bit half (n = 128).
func pl128(x uint64) uint64 {
	return x>>32&0x00000000ff000000 |
		x>>24&0x0000000000ff0000 |
		x>>16&0x00000000000000ff |
		x<<8&0xff0000000000ff00 |
		x<<16&0x00ffff0000000000 |
		x<<24&0x000000ff00000000
}

// pr128 is PR on a 64-bit half (n = 128).
func pr128(x uint64) uint64 {
	return x>>32&0x00000000000000ff |
		x>>24&0x000000ffff000000 |
		x>>16&0x000000000000ff00 |
		x<<8&0x0000000000ff0000 |
		x<<16&0xff00000000000000 |
		x<<24&0x0000ff0000000000 |
		x<<48&0x00ff000000000000
}

// plInv128 is PL⁻¹ on a 64-bit half (n = 128).
func plInv128(x uint64) uint64 {
	return x>>24&0x000000000000ff00 |
		x>>16&0x000000ffff000000 |
		x>>8&0x00ff0000000000ff |
		x<<16&0x0000000000ff0000 |
		x<<24&0x0000ff0000000000 |
		x<<32&0xff00000000000000
}

// prInv128 is PR⁻¹ on a 64-bit half (n = 128).
func prInv128(x uint64) uint64 {
	return x>>48&0x00000000000000ff |
		x>>24&0x0000000000ff0000 |
		x>>16&0x0000ff0000000000 |
		x>>8&0x000000000000ff00 |
		x<<16&0x00000000ff000000 |
		x<<24&0xffff000000000000 |
		x<<32&0x000000ff00000000
}

// pl256 is PL on a 128-bit half (n = 256), as its high and low 64-bit words.
func pl256(hi, lo uint64) (uint64, uint64) {
	return hi>>8&0x00000000ff000000 |
			hi<<8&0x0000000000ff0000 |
			hi<<16&0xff00000000000000 |
			hi<<48&0x00ff000000000000 |
			lo>>40&0x000000000000ff00 |
			lo>>24&0x00000000000000ff |
			lo>>16&0x0000ff0000000000 |
			lo<<16&0x000000ff00000000,
		hi>>56&0x00000000000000ff |
			hi>>8&0x000000000000ff00 |
			hi<<8&0xff00000000000000 |
			hi<<24&0x00ff000000000000 |
			lo>>16&0x0000000000ff0000 |
			lo>>8&0x000000ff00000000 |
			lo<<16&0x00000000ff000000 |
			lo<<40&0x0000ff0000000000
}

// pr256 is PR on a 128-bit half (n = 256), as its high and low 64-bit words.
func pr256(hi, lo uint64) (uint64, uint64) {
	return hi>>32&0x000000000000ff00 |
			hi>>8&0x0000ff0000ff0000 |
			hi<<48&0xff00000000000000 |
			lo>>24&0x00000000ff000000 |
			lo&0x00000000000000ff |
			lo<<8&0x000000ff00000000 |
			lo<<16&0x00ff000000000000,
		hi>>16&0x0000000000ff00ff |
			hi>>8&0x00ff000000000000 |
			hi<<56&0xff00000000000000 |
			lo>>48&0x000000000000ff00 |
			lo>>8&0x000000ff00000000 |
			lo<<16&0x00000000ff000000 |
			lo<<24&0x0000ff0000000000
}

// plInv256 is PL⁻¹ on a 128-bit half (n = 256).
func plInv256(hi, lo uint64) (uint64, uint64) {
	return hi>>48&0x00000000000000ff |
			hi>>16&0x0000ff0000000000 |
			hi>>8&0x000000000000ff00 |
			hi<<8&0x000000ff00000000 |
			lo>>24&0x00000000ff000000 |
			lo>>8&0x00ff000000000000 |
			lo<<8&0x0000000000ff0000 |
			lo<<56&0xff00000000000000,
		hi>>16&0x0000000000ff0000 |
			hi<<16&0xff00000000000000 |
			hi<<24&0x00000000ff000000 |
			hi<<40&0x00ff000000000000 |
			lo>>40&0x00000000000000ff |
			lo>>16&0x000000000000ff00 |
			lo<<8&0x0000ff0000000000 |
			lo<<16&0x000000ff00000000
}

// prInv256 is PR⁻¹ on a 128-bit half (n = 256).
func prInv256(hi, lo uint64) (uint64, uint64) {
	return hi>>48&0x000000000000ff00 |
			hi<<8&0x00ff0000ff000000 |
			hi<<32&0x0000ff0000000000 |
			lo>>56&0x00000000000000ff |
			lo<<8&0xff00000000000000 |
			lo<<16&0x000000ff00ff0000,
		hi>>16&0x000000ff00000000 |
			hi>>8&0x00000000ff000000 |
			hi&0x00000000000000ff |
			hi<<24&0x00ff000000000000 |
			lo>>24&0x0000000000ff0000 |
			lo>>16&0x000000000000ff00 |
			lo<<8&0x0000ff0000000000 |
			lo<<48&0xff00000000000000
}
