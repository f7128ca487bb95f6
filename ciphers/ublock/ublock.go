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

// nonceSize and tagSize are the nonce and tag lengths of the AEAD returned
// by NewGCM.
const (
	nonceSize = ublock.NonceSize
	tagSize   = ublock.TagSize
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
	a := new(gcmAEAD)
	if err := a.g.Init(key); err != nil {
		return nil, err
	}
	return a, nil
}

// gcmAEAD adapts ublock.GCM to cipher.AEAD.
type gcmAEAD struct {
	g ublock.GCM
}

// NonceSize returns 12.
func (a *gcmAEAD) NonceSize() int { return nonceSize }

// Overhead returns 16, the tag length.
func (a *gcmAEAD) Overhead() int { return tagSize }

// Seal encrypts and authenticates plaintext, authenticates
// additionalData and appends the result to dst (cipher.AEAD). It panics,
// as crypto/cipher's GCM does, on a nonce that is not 12 bytes, a
// plaintext longer than 2^32 − 2 blocks, or an output that overlaps
// plaintext inexactly or additionalData at all.
func (a *gcmAEAD) Seal(dst, nonce, plaintext, additionalData []byte) []byte {
	if len(nonce) != nonceSize {
		panic("ublock: incorrect nonce length given to GCM")
	}
	if uint64(len(plaintext)) > ublock.MaxPlaintextSize {
		panic("ublock: message too large for GCM")
	}
	ret, out := sliceForAppend(dst, len(plaintext)+tagSize)
	if ublock.InexactOverlap(out, plaintext) {
		panic("ublock: invalid buffer overlap of output and input")
	}
	if ublock.AnyOverlap(out, additionalData) {
		panic("ublock: invalid buffer overlap of output and additional data")
	}
	a.g.Seal(out, (*[tagSize]byte)(out[len(plaintext):]), (*[nonceSize]byte)(nonce), plaintext, additionalData)
	return ret
}

// Open authenticates and decrypts ciphertext (cipher.AEAD). The tag is
// checked before any plaintext is produced; on failure the output bytes
// are zeroed and an error is returned. It panics on a nonce that is not 12
// bytes or an output that overlaps ciphertext inexactly or additionalData
// at all.
func (a *gcmAEAD) Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error) {
	if len(nonce) != nonceSize {
		panic("ublock: incorrect nonce length given to GCM")
	}
	if len(ciphertext) < tagSize || uint64(len(ciphertext)) > ublock.MaxPlaintextSize+tagSize {
		return nil, errOpen
	}
	n := len(ciphertext) - tagSize
	ret, out := sliceForAppend(dst, n)
	if ublock.InexactOverlap(out, ciphertext) {
		panic("ublock: invalid buffer overlap of output and input")
	}
	if ublock.AnyOverlap(out, additionalData) {
		panic("ublock: invalid buffer overlap of output and additional data")
	}
	if !a.g.Open(out, (*[nonceSize]byte)(nonce), ciphertext[:n], additionalData, (*[tagSize]byte)(ciphertext[n:])) {
		clear(out)
		return nil, errOpen
	}
	return ret, nil
}

// sliceForAppend extends in by n bytes, reusing its capacity when it can,
// and returns the whole slice and the n new bytes.
func sliceForAppend(in []byte, n int) (head, tail []byte) {
	if total := len(in) + n; cap(in) >= total {
		head = in[:total]
	} else {
		head = make([]byte, total)
		copy(head, in)
	}
	return head, head[len(in):]
}
