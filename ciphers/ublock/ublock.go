// Package ublock implements the uBlock block cipher (WU Wenling, ZHANG Lei,
// ZHENG Yafei, LI Lingchen, "The block cipher uBlock", Journal of
// Cryptologic Research 2019, 6(6): 690–703; winner of the 2019 CACR
// block-cipher competition) in its three variants, and GCM (NIST SP
// 800-38D) over the 128-bit-block variants:
//
//   - NewCipher: uBlock-128/128 (16-byte key) or uBlock-128/256 (32-byte
//     key), 16-byte blocks;
//   - NewCipher256: uBlock-256/256, 32-byte key and 32-byte blocks (its own
//     constructor, since a 32-byte key alone does not say which variant);
//   - NewGCM: GCM over uBlock-128/128 or uBlock-128/256, 12-byte nonces and
//     16-byte tags only (docs/PROTOCOL.md, "ublock-gcm").
//
// The block ciphers work with every mode of crypto/cipher; their
// EncryptBlocks and DecryptBlocks methods take many blocks per call (the
// fast path). All objects keep only immutable key schedules and may be
// shared by goroutines.
//
// Timing: every path is constant time, the portable one included: the
// 4-bit S-box is a Boolean circuit over nibble-sliced blocks (four per
// pass), the permutations are fixed shifts, GHASH multiplies without
// tables and tags are compared in constant time. A single Encrypt on the
// portable code costs a whole four-block pass. See
// github.com/gmtun/gmtun/ciphers/internal/ublock and docs/SECURITY.md.
package ublock

import (
	"crypto/cipher"
	"errors"
	"strconv"

	"github.com/gmtun/gmtun/ciphers/internal/aead"
	"github.com/gmtun/gmtun/ciphers/internal/ublock"
)

// Block and key sizes in bytes.
const (
	// BlockSize is the block size of uBlock-128/128 and uBlock-128/256.
	BlockSize = 16
	// BlockSize256 is the block size of uBlock-256/256.
	BlockSize256 = 32
	// KeySize128 is the key size of uBlock-128/128.
	KeySize128 = 16
	// KeySize256 is the key size of uBlock-128/256 and uBlock-256/256.
	KeySize256 = 32
)

// KeySizeError is returned for a key length the constructor does not take.
type KeySizeError int

// Error implements error.
func (k KeySizeError) Error() string {
	return "ublock: invalid key size " + strconv.Itoa(int(k))
}

// errOpen is returned by the AEAD's Open when authentication fails.
var errOpen = errors.New("ublock: message authentication failed")

// Block is a uBlock cipher.Block that also encrypts and decrypts many
// blocks per call.
type Block interface {
	cipher.Block
	// EncryptBlocks encrypts every block of src into dst (ECB over whole
	// blocks). It panics if len(src) is not a multiple of BlockSize(), dst
	// is shorter than src, or they overlap inexactly.
	EncryptBlocks(dst, src []byte)
	// DecryptBlocks decrypts every block of src into dst; it panics as
	// EncryptBlocks does.
	DecryptBlocks(dst, src []byte)
}

// NewCipher returns uBlock with 128-bit blocks: uBlock-128/128 for a
// 16-byte key, uBlock-128/256 for a 32-byte key.
func NewCipher(key []byte) (Block, error) {
	if len(key) != KeySize128 && len(key) != KeySize256 {
		return nil, KeySizeError(len(key))
	}
	return ublock.NewCipher(key)
}

// NewCipher256 returns uBlock-256/256 (256-bit blocks) for a 32-byte key.
func NewCipher256(key []byte) (Block, error) {
	if len(key) != KeySize256 {
		return nil, KeySizeError(len(key))
	}
	return ublock.NewCipher256(key)
}

// NewGCM returns GCM (NIST SP 800-38D) over uBlock-128/128 (16-byte key)
// or uBlock-128/256 (32-byte key) with 12-byte nonces and 16-byte tags.
// Open verifies the tag in constant time before decrypting anything and
// zeroes its output on failure.
func NewGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize128 && len(key) != KeySize256 {
		return nil, KeySizeError(len(key))
	}
	return aead.New[ublock.GCM]("ublock", errOpen, func(g *ublock.GCM) error { return g.Init(key) })
}
