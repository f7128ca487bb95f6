package sm4

import "github.com/gmtun/gmtun/ciphers/internal/aead"

// CTR is an SM4-CTR keystream (NIST SP 800-38A §6.5) with a 128-bit
// big-endian counter that increments over the whole block. It implements
// cipher.Stream. Like every cipher.Stream it carries its position, so one
// CTR must not be used by several goroutines at once; its key schedule is
// a private copy.
type CTR struct {
	enc [32]uint32
	ctr [BlockSize]byte // next counter block
	ks  [BlockSize]byte // keystream of the previous counter block
	off int             // ks[off:] is still unused; BlockSize when empty
}

// NewCTR returns the CTR keystream of key starting at counter block iv.
// len(iv) must be BlockSize (the caller checks).
func NewCTR(key, iv []byte) (*CTR, error) {
	if len(key) != KeySize {
		return nil, KeySizeError(len(key))
	}
	s := &CTR{off: BlockSize}
	var dec [32]uint32
	expandKeyGeneric(key, &s.enc, &dec)
	copy(s.ctr[:], iv)
	return s, nil
}

// XORKeyStream XORs src with the next len(src) keystream bytes into dst.
// It panics if dst is shorter than src or the two overlap inexactly.
func (s *CTR) XORKeyStream(dst, src []byte) {
	if len(dst) < len(src) {
		panic("sm4: output smaller than input")
	}
	dst = dst[:len(src)]
	if aead.InexactOverlap(dst, src) {
		panic("sm4: invalid buffer overlap")
	}
	// Use up the buffered keystream first.
	if s.off < BlockSize {
		n := min(len(src), BlockSize-s.off)
		for i := range n {
			dst[i] = src[i] ^ s.ks[s.off+i]
		}
		s.off += n
		dst, src = dst[n:], src[n:]
	}
	if full := len(src) &^ (BlockSize - 1); full > 0 {
		xorKeyStream(&s.enc, &s.ctr, dst[:full], src[:full])
		dst, src = dst[full:], src[full:]
	}
	if len(src) > 0 {
		// Buffer one keystream block for the tail and later calls.
		s.ks = [BlockSize]byte{}
		xorKeyStream(&s.enc, &s.ctr, s.ks[:], s.ks[:])
		for i := range src {
			dst[i] = src[i] ^ s.ks[i]
		}
		s.off = len(src)
	}
}
