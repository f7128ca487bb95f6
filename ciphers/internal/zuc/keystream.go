package zuc

import "encoding/binary"

// KeystreamBlockGeneric runs 16 working-mode rounds and stores the next 16
// keystream words z_i (GB/T 33133.1-2016 §6.2) in ks.
func KeystreamBlockGeneric(st *State, ks *[BlockWords]uint32) {
	enterCore()
	keystreamBlock(st, ks)
}

// KeyWords stores the next len(ks) keystream words in ks, advancing the
// state by exactly len(ks) rounds.
func (st *State) KeyWords(ks []uint32) {
	enterCore()
	for len(ks) >= BlockWords {
		keystreamBlock(st, (*[BlockWords]uint32)(ks))
		ks = ks[BlockWords:]
	}
	for i := range ks {
		ks[i] = st.keyword()
	}
}

// keyword runs one working-mode round and returns its keystream word
// (GB/T 33133.1-2016 §6.2). It is the unrolled block's single-round twin,
// used for word counts that are not a multiple of 16.
func (st *State) keyword() uint32 {
	enterCore()
	s := &st.s
	x0 := (s[15]&0x7fff8000)<<1 | s[14]&0xffff
	z := ((x0 ^ st.r1) + st.r2) ^ (s[2]<<16 | s[0]>>15)
	st.workRound()
	return z
}

// XORKeyStreamBlocksGeneric sets dst = src ⊕ keystream for len(src)
// bytes, a multiple of BlockSize, using the keystream words big-endian
// (first word first), and advances the state by len(src)/4 rounds.
// len(dst) must be at least len(src).
func XORKeyStreamBlocksGeneric(st *State, dst, src []byte) {
	enterCore()
	var ks [BlockWords]uint32
	dst = dst[:len(src)]
	for len(src) >= BlockSize {
		keystreamBlock(st, &ks)
		d, s := (*[BlockSize]byte)(dst), (*[BlockSize]byte)(src)
		for i := 0; i < BlockWords; i += 2 {
			k := uint64(ks[i])<<32 | uint64(ks[i+1])
			binary.BigEndian.PutUint64(d[4*i:], binary.BigEndian.Uint64(s[4*i:])^k)
		}
		dst, src = dst[BlockSize:], src[BlockSize:]
	}
}

// XORKeyStreamGeneric sets dst = src ⊕ keystream for any length, the
// one-shot form used for whole packets: the state is advanced by whole
// blocks (⌈len/64⌉·16 rounds), so the unused words of a final partial
// block are lost. len(dst) must be at least len(src).
func XORKeyStreamGeneric(st *State, dst, src []byte) {
	n := len(src) &^ (BlockSize - 1)
	XORKeyStreamBlocksGeneric(st, dst, src[:n])
	if n == len(src) {
		return
	}
	var buf [BlockSize]byte
	st.KeystreamBytes(&buf)
	src = src[n:]
	dst = dst[n : n+len(src)]
	for i := range src {
		dst[i] = src[i] ^ buf[i]
	}
}

// KeystreamBytes stores the next 16 keystream words in buf, big-endian.
func (st *State) KeystreamBytes(buf *[BlockSize]byte) {
	enterCore()
	var ks [BlockWords]uint32
	keystreamBlock(st, &ks)
	for i, w := range ks {
		binary.BigEndian.PutUint32(buf[4*i:], w)
	}
}
