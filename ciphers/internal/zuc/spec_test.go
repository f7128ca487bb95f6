package zuc

// A literal, slow transcription of the standards, used as the oracle for
// the optimised code in this package. It shares only the byte S-boxes with the package
// (the published vectors check those).

import "math/bits"

const p31 = 1<<31 - 1

// add31 is addition modulo 2^31−1 (GB/T 33133.1-2016 §5.1.3 note).
func add31(a, b uint32) uint32 {
	c := a + b
	return c&p31 + c>>31
}

// rot31 is multiplication by 2^k modulo 2^31−1.
func rot31(a uint32, k uint) uint32 { return (a<<k | a>>(31-k)) & p31 }

type specState struct {
	s      [16]uint32
	r1, r2 uint32
}

func specL1(x uint32) uint32 {
	return x ^ bits.RotateLeft32(x, 2) ^ bits.RotateLeft32(x, 10) ^ bits.RotateLeft32(x, 18) ^ bits.RotateLeft32(x, 24)
}

func specL2(x uint32) uint32 {
	return x ^ bits.RotateLeft32(x, 8) ^ bits.RotateLeft32(x, 14) ^ bits.RotateLeft32(x, 22) ^ bits.RotateLeft32(x, 30)
}

func specS(x uint32) uint32 {
	return uint32(s0box[x>>24])<<24 | uint32(s1box[x>>16&0xff])<<16 | uint32(s0box[x>>8&0xff])<<8 | uint32(s1box[x&0xff])
}

// br is the bit reorganisation (§5.1.1).
func (st *specState) br() (x0, x1, x2, x3 uint32) {
	s := &st.s
	x0 = (s[15]>>15)<<16 | s[14]&0xffff
	x1 = (s[11]&0xffff)<<16 | s[9]>>15
	x2 = (s[7]&0xffff)<<16 | s[5]>>15
	x3 = (s[2]&0xffff)<<16 | s[0]>>15
	return
}

// f is the nonlinear function F (§5.1.2).
func (st *specState) f(x0, x1, x2 uint32) uint32 {
	w := (x0 ^ st.r1) + st.r2
	w1 := st.r1 + x1
	w2 := st.r2 ^ x2
	st.r1 = specS(specL1(w1<<16 | w2>>16))
	st.r2 = specS(specL2(w2<<16 | w1>>16))
	return w
}

// lfsr is LFSRWithInitialisationMode(u) / LFSRWithWorkMode (u = 0)
// (§5.1.3), reducing after every addition.
func (st *specState) lfsr(u uint32, init bool) {
	s := &st.s
	v := rot31(s[15], 15)
	v = add31(v, rot31(s[13], 17))
	v = add31(v, rot31(s[10], 21))
	v = add31(v, rot31(s[4], 20))
	v = add31(v, rot31(s[0], 8))
	v = add31(v, s[0])
	if init {
		v = add31(v, u)
	}
	if v == 0 {
		v = p31
	}
	copy(s[:], s[1:])
	s[15] = v
}

func (st *specState) initRounds() {
	for range 32 {
		x0, x1, x2, _ := st.br()
		w := st.f(x0, x1, x2)
		st.lfsr(w>>1, true)
	}
	x0, x1, x2, _ := st.br()
	st.f(x0, x1, x2)
	st.lfsr(0, false)
}

func (st *specState) word() uint32 {
	x0, x1, x2, x3 := st.br()
	z := st.f(x0, x1, x2) ^ x3
	st.lfsr(0, false)
	return z
}

func specInit128(key, iv []byte) *specState {
	st := new(specState)
	d := [16]uint32{
		0b100010011010111, 0b010011010111100, 0b110001001101011, 0b001001101011110,
		0b101011110001001, 0b011010111100010, 0b111000100110101, 0b000100110101111,
		0b100110101111000, 0b010111100010011, 0b110101111000100, 0b001101011110001,
		0b101111000100110, 0b011110001001101, 0b111100010011010, 0b100011110101100,
	}
	for i := range 16 {
		st.s[i] = uint32(key[i])<<23 | d[i]<<8 | uint32(iv[i])
	}
	st.initRounds()
	return st
}

// specInit256 loads a ZUC-256 key and the 25 IV symbols of the paper.
func specInit256(key []byte, iv25 []byte, d []byte) *specState {
	st := new(specState)
	c := func(a, dd, b, e byte) uint32 { return uint32(a)<<23 | uint32(dd)<<16 | uint32(b)<<8 | uint32(e) }
	K, IV := key, iv25
	st.s = [16]uint32{
		c(K[0], d[0], K[21], K[16]),
		c(K[1], d[1], K[22], K[17]),
		c(K[2], d[2], K[23], K[18]),
		c(K[3], d[3], K[24], K[19]),
		c(K[4], d[4], K[25], K[20]),
		c(IV[0], d[5]|IV[17], K[5], K[26]),
		c(IV[1], d[6]|IV[18], K[6], K[27]),
		c(IV[10], d[7]|IV[19], K[7], IV[2]),
		c(K[8], d[8]|IV[20], IV[3], IV[11]),
		c(K[9], d[9]|IV[21], IV[12], IV[4]),
		c(IV[5], d[10]|IV[22], K[10], K[28]),
		c(K[11], d[11]|IV[23], IV[6], IV[13]),
		c(K[12], d[12]|IV[24], IV[7], IV[14]),
		c(K[13], d[13], IV[15], IV[8]),
		c(K[14], d[14]|K[31]>>4, IV[16], IV[9]),
		c(K[15], d[15]|K[31]&0x0f, K[30], K[29]),
	}
	st.initRounds()
	return st
}

// unpackIV25 expands a 23-byte packed ZUC-256 IV into 25 symbols.
func unpackIV25(iv []byte) []byte {
	out := make([]byte, 25)
	copy(out, iv[:17])
	var acc uint64
	for _, b := range iv[17:23] {
		acc = acc<<8 | uint64(b)
	}
	for i := 0; i < 8; i++ {
		out[17+i] = byte(acc>>(42-6*i)) & 0x3f
	}
	return out
}

func (st *specState) words(n int) []uint32 {
	z := make([]uint32, n)
	for i := range z {
		z[i] = st.word()
	}
	return z
}

// bit returns keystream bit i (most significant bit of z[0] is bit 0).
func bit(z []uint32, i int) uint32 { return z[i/32] >> (31 - i%32) & 1 }

// window returns the w-bit keystream window starting at bit i as w/32 words.
func window(z []uint32, i, w int) []uint32 {
	out := make([]uint32, w/32)
	for k := 0; k < w; k++ {
		out[k/32] |= bit(z, i+k) << (31 - k%32)
	}
	return out
}

func msgBit(m []byte, i int) byte { return m[i/8] >> (7 - i%8) & 1 }

// specEIA3 is 128-EIA3 bit by bit (Document 1 v1.7 §4.4).
func specEIA3(key []byte, count uint32, bearer, dir uint8, m []byte, length int) uint32 {
	iv := IVEIA3(count, bearer, dir)
	st := specInit128(key, iv[:])
	L := (length+31)/32 + 2
	z := st.words(L)
	var t uint32
	for i := 0; i < length; i++ {
		if msgBit(m, i) == 1 {
			t ^= window(z, i, 32)[0]
		}
	}
	t ^= window(z, length, 32)[0]
	return t ^ z[L-1]
}

// specMAC256 is the ZUC-256 MAC bit by bit (2018 paper §3.2).
func specMAC256(key, iv []byte, m []byte, length, tagBits int) []uint32 {
	d, _ := D256(tagBits / 8)
	st := specInit256(key, unpackIV25(iv), d[:])
	z := st.words((2*tagBits+length)/32 + 2)
	t := window(z, 0, tagBits)
	for i := 0; i < length; i++ {
		if msgBit(m, i) == 1 {
			w := window(z, tagBits+i, tagBits)
			for q := range t {
				t[q] ^= w[q]
			}
		}
	}
	w := window(z, tagBits+length, tagBits)
	for q := range t {
		t[q] ^= w[q]
	}
	return t
}

// specEEA3 is 128-EEA3 (Document 1 v1.7 §3.4), output bits past length zero.
func specEEA3(key []byte, count uint32, bearer, dir uint8, in []byte, length int) []byte {
	iv := IVEEA3(count, bearer, dir)
	st := specInit128(key, iv[:])
	n := (length + 7) / 8
	z := st.words((length + 31) / 32)
	out := make([]byte, n)
	for i := 0; i < n; i++ {
		out[i] = in[i] ^ byte(z[i/4]>>(24-8*(i%4)))
	}
	if length%8 != 0 {
		out[n-1] &= byte(0xff << (8 - length%8))
	}
	return out
}
