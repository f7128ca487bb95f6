package zuc

import "math/bits"

// Sizes of keys and IVs.
const (
	KeySize128 = 16 // ZUC-128 key, bytes
	IVSize128  = 16 // ZUC-128 IV, bytes
	KeySize256 = 32 // ZUC-256 key, bytes
	IVSize256  = 23 // ZUC-256 IV: IV0..IV16 bytes, then IV17..IV24 (6 bits each) packed into 6 bytes
	BlockWords = 16 // keystream words produced by one unrolled block
	BlockSize  = 4 * BlockWords
)

// kd128 are the 15-bit constants d0..d15 of ZUC-128 key loading
// (GB/T 33133.1-2016 §6.1, key loading).
var kd128 = [16]uint32{
	0x44d7, 0x26bc, 0x626b, 0x135e, 0x5789, 0x35e2, 0x7135, 0x09af,
	0x4d78, 0x2f13, 0x6bc4, 0x1af1, 0x5e26, 0x3c4d, 0x789a, 0x47ac,
}

// d256 are the 7-bit constants d0..d15 of ZUC-256 key loading ("The
// ZUC-256 Stream Cipher", 2018, §2.1 and §3.1): index 0 for the keystream,
// 1, 2, 3 for MAC tags of 32, 64 and 128 bits.
var d256 = [4][16]byte{
	{0x22, 0x2f, 0x24, 0x2a, 0x6d, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x52, 0x10, 0x30},
	{0x22, 0x2f, 0x25, 0x2a, 0x6d, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x52, 0x10, 0x30},
	{0x23, 0x2f, 0x24, 0x2a, 0x6d, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x52, 0x10, 0x30},
	{0x23, 0x2f, 0x25, 0x2a, 0x6d, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x52, 0x10, 0x30},
}

// D256 returns the ZUC-256 key-loading constants d0..d15 ("The ZUC-256
// Stream Cipher", 2018, §3.1) for the keystream (tagSize 0) or for a MAC
// with a tag of tagSize bytes (4, 8 or 16). It returns false for any other
// tagSize.
func D256(tagSize int) (d [16]byte, ok bool) {
	switch tagSize {
	case 0:
		return d256[0], true
	case 4:
		return d256[1], true
	case 8:
		return d256[2], true
	case 16:
		return d256[3], true
	}
	return d, false
}

// State is the ZUC state: the LFSR cells s0..s15 (31-bit values in
// 1..2^31−1, where 2^31−1 stands for 0) and the F registers R1, R2
// (GB/T 33133.1-2016 §5). The zero value is not a valid state; call Init128
// or Init256 first. A State is a plain value: copy it to fork a stream.
type State struct {
	s      [16]uint32
	r1, r2 uint32
}

// Init128 loads a ZUC-128 key and IV and runs the initialisation stage
// (GB/T 33133.1-2016 §6.1: 32 rounds in initialisation mode, then one
// working-mode round whose output is discarded).
func (st *State) Init128(key, iv *[16]byte) {
	st.load128(key, iv)
	st.finishInit()
}

// load128 loads the LFSR with a ZUC-128 key and IV and clears R1, R2,
// without running the initialisation rounds.
func (st *State) load128(key, iv *[16]byte) {
	for i := range 16 {
		st.s[i] = uint32(key[i])<<23 | kd128[i]<<8 | uint32(iv[i])
	}
	st.r1, st.r2 = 0, 0
}

// Init256 loads a ZUC-256 key, 23-byte IV and key-loading constants d
// (see D256) and runs the initialisation stage ("The ZUC-256 Stream
// Cipher", 2018, §3.1: 32 initialisation rounds, then one working round
// whose output is discarded).
//
// The IV holds the paper's IV0..IV16 as bytes 0..16 and the 6-bit symbols
// IV17..IV24 packed most-significant-bit first into bytes 17..22, as
// gmsm and GmSSL take it.
func (st *State) Init256(key *[32]byte, iv *[23]byte, d *[16]byte) {
	st.load256(key, iv, d)
	st.finishInit()
}

// load256 loads the LFSR with a ZUC-256 key, IV and constants and clears
// R1, R2, without running the initialisation rounds.
func (st *State) load256(key *[32]byte, iv *[23]byte, d *[16]byte) {
	k := func(i int) uint32 { return uint32(key[i]) }
	v := func(i int) uint32 { return uint32(iv[i]) }
	// The eight 6-bit symbols IV17..IV24 from the 48 packed bits.
	p := uint64(iv[17])<<40 | uint64(iv[18])<<32 | uint64(iv[19])<<24 | uint64(iv[20])<<16 | uint64(iv[21])<<8 | uint64(iv[22])
	sym := func(i int) uint32 { return uint32(p>>(6*(24-i))) & 0x3f }
	// cell = a (8 bits) ‖ d (7 bits) ‖ b (8 bits) ‖ c (8 bits).
	cell := func(a, dd, b, c uint32) uint32 { return a<<23 | dd<<16 | b<<8 | c }
	dd := func(i int) uint32 { return uint32(d[i]) }
	st.s = [16]uint32{
		cell(k(0), dd(0), k(21), k(16)),
		cell(k(1), dd(1), k(22), k(17)),
		cell(k(2), dd(2), k(23), k(18)),
		cell(k(3), dd(3), k(24), k(19)),
		cell(k(4), dd(4), k(25), k(20)),
		cell(v(0), dd(5)|sym(17), k(5), k(26)),
		cell(v(1), dd(6)|sym(18), k(6), k(27)),
		cell(v(10), dd(7)|sym(19), k(7), v(2)),
		cell(k(8), dd(8)|sym(20), v(3), v(11)),
		cell(k(9), dd(9)|sym(21), v(12), v(4)),
		cell(v(5), dd(10)|sym(22), k(10), k(28)),
		cell(k(11), dd(11)|sym(23), v(6), v(13)),
		cell(k(12), dd(12)|sym(24), v(7), v(14)),
		cell(k(13), dd(13), v(15), v(8)),
		cell(k(14), dd(14)|k(31)>>4, v(16), v(9)),
		cell(k(15), dd(15)|k(31)&0x0f, k(30), k(29)),
	}
	st.r1, st.r2 = 0, 0
}

// finishInit runs the 32 initialisation rounds and the discarded first
// working round common to ZUC-128 and ZUC-256.
func (st *State) finishInit() {
	enterCore()
	initBlock(st)
	initBlock(st)
	st.workRound()
}

// workRound runs one working-mode round and discards its output
// (GB/T 33133.1-2016 §6.2, first step).
func (st *State) workRound() {
	s := &st.s
	x1 := s[11]<<16 | s[9]>>15
	x2 := s[7]<<16 | s[5]>>15
	w1 := st.r1 + x1
	w2 := st.r2 ^ x2
	u := w1<<16 | w2>>16
	v := w2<<16 | w1>>16
	u ^= bits.RotateLeft32(u, 2) ^ bits.RotateLeft32(u, 10) ^ bits.RotateLeft32(u, 18) ^ bits.RotateLeft32(u, 24)
	v ^= bits.RotateLeft32(v, 8) ^ bits.RotateLeft32(v, 14) ^ bits.RotateLeft32(v, 22) ^ bits.RotateLeft32(v, 30)
	st.r1, st.r2 = sboxLayer(u, v)
	f := uint64(s[15])<<15 + uint64(s[13])<<17 + uint64(s[10])<<21 + uint64(s[4])<<20 + uint64(s[0])<<8 + uint64(s[0])
	f = f&0x7fffffff + f>>31
	copy(s[:15], s[1:])
	s[15] = uint32(f&0x7fffffff + f>>31)
}

// IVEEA3 returns the 128-EEA3 initialisation vector (3GPP 128-EEA3 &
// 128-EIA3 Document 1 v1.7 §3.3 / GB/T 33133.2-2021):
// COUNT ‖ BEARER ‖ DIRECTION ‖ 0^26, repeated. bearer must be < 32 and
// direction < 2.
func IVEEA3(count uint32, bearer, direction uint8) (iv [16]byte) {
	iv[0], iv[1], iv[2], iv[3] = byte(count>>24), byte(count>>16), byte(count>>8), byte(count)
	iv[4] = bearer<<3 | direction<<2
	copy(iv[8:], iv[:8])
	return iv
}

// IVEIA3 returns the 128-EIA3 initialisation vector (Document 1 v1.7
// §4.3 / GB/T 33133.3-2021): IV0..3 = COUNT, IV4 = BEARER‖000,
// IV8 = IV0 ⊕ DIRECTION·2^7, IV9..IV12 = IV1..IV4, IV14 = DIRECTION·2^7,
// the other bytes zero. bearer must be < 32 and direction < 2.
func IVEIA3(count uint32, bearer, direction uint8) (iv [16]byte) {
	iv[0], iv[1], iv[2], iv[3] = byte(count>>24), byte(count>>16), byte(count>>8), byte(count)
	iv[4] = bearer << 3
	copy(iv[8:], iv[:8])
	iv[8] ^= direction << 7
	iv[14] ^= direction << 7
	return iv
}
