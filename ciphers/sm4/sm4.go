// Package sm4 implements the SM4 block cipher of GB/T 32907-2016 (also
// GM/T 0002-2012, ISO/IEC 18033-3:2010/Amd 1:2021) with the modes gmtun
// uses: CTR (NIST SP 800-38A) and GCM as AEAD_SM4_GCM of RFC 8998 (NIST
// SP 800-38D).
//
// The block cipher returned by NewCipher works with every mode of
// crypto/cipher. NewCTR and NewGCM are dedicated implementations that avoid
// the per-block interface calls of crypto/cipher's generic modes; all
// objects they return keep only immutable key schedules (plus, for the CTR
// stream, its position), so Blocks and AEADs may be shared by goroutines.
//
// Timing: every path is constant time, the portable one included: the
// S-box is a Boolean circuit (bitsliced over 64 blocks, or over the bytes of
// a word for the key schedule and single blocks), GHASH multiplies without
// tables, and tags are compared in constant time. A single Encrypt or
// Decrypt on the portable code is therefore slow (about 0.8 µs a block);
// EncryptBlocks, CTR and GCM amortize it over many blocks. See
// github.com/gmtun/gmtun/ciphers/internal/sm4 and docs/SECURITY.md.
package sm4

import (
	"crypto/cipher"
	"errors"
	"strconv"

	"github.com/gmtun/gmtun/ciphers/internal/aead"
	"github.com/gmtun/gmtun/ciphers/internal/sm4"
)

// BlockSize is the SM4 block size in bytes (GB/T 32907-2016 §5.1).
const BlockSize = 16

// KeySize is the SM4 key size in bytes (GB/T 32907-2016 §5.2).
const KeySize = 16

// nonceSize and tagSize are the nonce and tag lengths of the AEAD returned
// by NewGCM (RFC 8998 §3.3; the only sizes gmtun supports).
const (
	nonceSize = sm4.NonceSize
	tagSize   = sm4.TagSize
)

// KeySizeError is returned for a key whose length is not KeySize.
type KeySizeError int

// Error implements error.
func (k KeySizeError) Error() string {
	return "sm4: invalid key size " + strconv.Itoa(int(k)) + ", want 16"
}

// IVSizeError is returned by NewCTR for an IV whose length is not
// BlockSize.
type IVSizeError int

// Error implements error.
func (k IVSizeError) Error() string {
	return "sm4: invalid IV size " + strconv.Itoa(int(k)) + ", want 16"
}

// errOpen is returned by the AEAD's Open when authentication fails.
var errOpen = errors.New("sm4: message authentication failed")

// NewCipher returns the SM4 block cipher (GB/T 32907-2016 §7) with the
// given key, which must be KeySize bytes.
func NewCipher(key []byte) (cipher.Block, error) {
	if len(key) != KeySize {
		return nil, KeySizeError(len(key))
	}
	return sm4.NewCipher(key)
}

// NewCTR returns SM4 in counter mode (NIST SP 800-38A §6.5) starting at
// counter block iv. The counter is the whole 16-byte block incremented as a
// 128-bit big-endian integer (SP 800-38A Appendix B.1), as crypto/cipher's
// NewCTR does. key must be KeySize and iv BlockSize bytes.
func NewCTR(key, iv []byte) (cipher.Stream, error) {
	if len(key) != KeySize {
		return nil, KeySizeError(len(key))
	}
	if len(iv) != BlockSize {
		return nil, IVSizeError(len(iv))
	}
	return sm4.NewCTR(key, iv)
}

// NewGCM returns AEAD_SM4_GCM (RFC 8998 §3.3; NIST SP 800-38D) with the
// given key: 12-byte nonces and 16-byte tags only. key must be KeySize
// bytes. Open verifies the tag in constant time before decrypting
// anything and zeroes its output on failure.
func NewGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, KeySizeError(len(key))
	}
	return aead.New[sm4.GCM]("sm4", errOpen, func(g *sm4.GCM) error { return g.Init(key) })
}
