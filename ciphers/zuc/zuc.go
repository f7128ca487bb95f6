// Package zuc implements the ZUC stream cipher family of GB/T 33133:
//
//   - 128-EEA3 and 128-EIA3, the 3GPP confidentiality and integrity
//     algorithms built on ZUC-128 (ETSI/SAGE "Specification of the 3GPP
//     Confidentiality and Integrity Algorithms 128-EEA3 & 128-EIA3",
//     Document 1 v1.7 and Document 2; GB/T 33133.1-2016, GB/T
//     33133.2/.3-2021), bit-exact for message lengths that are not whole
//     bytes;
//   - ZUC-256 with the original 2018 initialisation (32-byte key, 184-bit
//     IV) and the ZUC-256 MAC with 32-, 64- and 128-bit tags (ZUC design
//     team, "The ZUC-256 Stream Cipher", Journal of Cryptologic Research
//     5(2), 2018). The 2021 addendum's 128-bit-IV initialisation is not
//     implemented.
//
// The implementation is ciphers/internal/zuc's portable core: plain Go
// whose S-box layer is a Boolean circuit on bit planes (no lookup table,
// no secret-dependent branch or address), so keystream generation and the
// MAC combination steps are constant-time. It is single-stream and several
// times slower than a table implementation; the data plane seals and opens
// through the batch primitives, which run on the SIMD lane kernels where
// the CPU has them.
//
// Functions that take lengths return an error, never panic, for a key, IV,
// tag size, bearer, direction or bit length out of range. The streams
// follow the crypto/cipher.Stream contract, which panics on misuse
// (short dst, inexact overlap).
package zuc

import (
	"crypto/cipher"
	"crypto/subtle"
	"errors"
	"fmt"

	"github.com/gmtun/gmtun/ciphers/internal/zuc"
)

// Key and IV sizes in bytes.
const (
	// KeySize128 is the 128-EEA3/128-EIA3 key size (CK or IK), Document 1
	// v1.7 §3.2 / §4.2.
	KeySize128 = zuc.KeySize128
	// KeySize256 is the ZUC-256 key size (2018 paper §3.1).
	KeySize256 = zuc.KeySize256
	// IVSize256 is the size of a ZUC-256 IV: the 25 IV symbols of the 2018
	// paper §3.1, IV0..IV16 as bytes followed by the 6-bit IV17..IV24
	// packed most-significant-bit first into 6 bytes (gmsm/GmSSL form).
	IVSize256 = zuc.IVSize256
)

var (
	errKey128    = fmt.Errorf("zuc: 128-EEA3/128-EIA3 key must be %d bytes", KeySize128)
	errKey256    = fmt.Errorf("zuc: ZUC-256 key must be %d bytes", KeySize256)
	errIV256     = fmt.Errorf("zuc: ZUC-256 IV must be %d bytes", IVSize256)
	errBearer    = errors.New("zuc: bearer must be below 32")
	errDirection = errors.New("zuc: direction must be 0 or 1")
	errBits      = errors.New("zuc: bit length negative or longer than the input")
	errDst       = errors.New("zuc: output shorter than the bits to process")
	errOverlap   = errors.New("zuc: invalid buffer overlap")
	errTagSize   = errors.New("zuc: ZUC-256 MAC tag size must be 4, 8 or 16 bytes")
)

func check128(key []byte, bearer, direction uint8) error {
	switch {
	case len(key) != KeySize128:
		return errKey128
	case bearer > 31:
		return errBearer
	case direction > 1:
		return errDirection
	}
	return nil
}

// NewEEA3 returns a 128-EEA3 keystream (Document 1 v1.7 §3: ZUC-128 keyed
// with CK and IV = COUNT ‖ BEARER ‖ DIRECTION ‖ 0^26, twice) as a
// cipher.Stream for byte-oriented use. key is the 16-byte CK, bearer the
// 5-bit bearer identity and direction the 1-bit direction.
func NewEEA3(key []byte, count uint32, bearer, direction uint8) (cipher.Stream, error) {
	if err := check128(key, bearer, direction); err != nil {
		return nil, err
	}
	iv := zuc.IVEEA3(count, bearer, direction)
	s := &stream{off: zuc.BlockSize}
	s.st.Init128((*[16]byte)(key), &iv)
	return s, nil
}

// EEA3 encrypts or decrypts the first bits bits of src into dst with
// 128-EEA3 (Document 1 v1.7 §3.4). It writes ⌈bits/8⌉ bytes; the bits of
// the last byte past bits are set to zero, as in the specification's
// output. dst and src must overlap entirely or not at all.
func EEA3(key []byte, count uint32, bearer, direction uint8, dst, src []byte, bits int) error {
	if err := check128(key, bearer, direction); err != nil {
		return err
	}
	if bits < 0 || bits > 8*len(src) {
		return errBits
	}
	n := (bits + 7) / 8
	if len(dst) < n {
		return errDst
	}
	dst, src = dst[:n], src[:n]
	if inexactOverlap(dst, src) {
		return errOverlap
	}
	iv := zuc.IVEEA3(count, bearer, direction)
	var st zuc.State
	st.Init128((*[16]byte)(key), &iv)
	zuc.XORKeyStreamGeneric(&st, dst, src)
	if r := bits % 8; r != 0 {
		dst[n-1] &= byte(0xff << (8 - r))
	}
	return nil
}

// EIA3 returns the 32-bit 128-EIA3 MAC-I (Document 1 v1.7 §4) of the first
// bits bits of msg under the 16-byte integrity key key. Bits of msg past
// bits are ignored.
func EIA3(key []byte, count uint32, bearer, direction uint8, msg []byte, bits int) (uint32, error) {
	if err := check128(key, bearer, direction); err != nil {
		return 0, err
	}
	if bits < 0 || bits > 8*len(msg) {
		return 0, errBits
	}
	iv := zuc.IVEIA3(count, bearer, direction)
	var st zuc.State
	st.Init128((*[16]byte)(key), &iv)
	return zuc.EIA3Generic(&st, msg, bits), nil
}

// NewZUC256 returns the ZUC-256 keystream (2018 paper §3.1, keystream
// constants d) for a 32-byte key and a 23-byte packed IV (see IVSize256)
// as a cipher.Stream; keystream words are used big-endian, first word
// first.
func NewZUC256(key, iv []byte) (cipher.Stream, error) {
	if len(key) != KeySize256 {
		return nil, errKey256
	}
	if len(iv) != IVSize256 {
		return nil, errIV256
	}
	d, _ := zuc.D256(0)
	s := &stream{off: zuc.BlockSize}
	s.st.Init256((*[32]byte)(key), (*[23]byte)(iv), &d)
	return s, nil
}

// MAC256 returns the ZUC-256 MAC (2018 paper §3.2) of the first bits bits
// of msg, with a tag of tagSize bytes (4, 8 or 16, i.e. 32-, 64- or
// 128-bit tags, each with its own initialisation constants). key is 32
// bytes and iv a 23-byte packed IV. Bits of msg past bits are ignored.
func MAC256(key, iv, msg []byte, bits, tagSize int) ([]byte, error) {
	if len(key) != KeySize256 {
		return nil, errKey256
	}
	if len(iv) != IVSize256 {
		return nil, errIV256
	}
	d, ok := zuc.D256(tagSize)
	if !ok || tagSize == 0 {
		return nil, errTagSize
	}
	if bits < 0 || bits > 8*len(msg) {
		return nil, errBits
	}
	var st zuc.State
	st.Init256((*[32]byte)(key), (*[23]byte)(iv), &d)
	tag := make([]byte, tagSize)
	zuc.MAC256Generic(&st, msg, bits, tag)
	return tag, nil
}

// stream is a ZUC keystream as a cipher.Stream: the state and the unused
// tail of the last generated block.
type stream struct {
	st  zuc.State
	buf [zuc.BlockSize]byte
	off int // first unused byte of buf; BlockSize when empty
}

// XORKeyStream implements cipher.Stream. It panics if len(dst) < len(src)
// or if dst and src overlap inexactly.
func (s *stream) XORKeyStream(dst, src []byte) {
	if len(dst) < len(src) {
		panic("zuc: output smaller than input")
	}
	dst = dst[:len(src)]
	if inexactOverlap(dst, src) {
		panic("zuc: invalid buffer overlap")
	}
	if s.off < len(s.buf) && len(src) > 0 {
		n := subtle.XORBytes(dst, src, s.buf[s.off:])
		s.off += n
		dst, src = dst[n:], src[n:]
	}
	n := len(src) &^ (zuc.BlockSize - 1)
	zuc.XORKeyStreamBlocksGeneric(&s.st, dst, src[:n])
	if n < len(src) {
		s.st.KeystreamBytes(&s.buf)
		s.off = subtle.XORBytes(dst[n:], src[n:], s.buf[:])
	}
}
