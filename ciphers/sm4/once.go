package sm4

import (
	"github.com/gmtun/gmtun/ciphers/internal/aead"
	"github.com/gmtun/gmtun/ciphers/internal/sm4"
)

// SealOnce encrypts plaintext under a single-use key with the given nonce
// and writes ciphertext ‖ tag into dst, which must be exactly
// len(plaintext)+16 bytes and must not overlap plaintext or aad. It is
// AEAD_SM4_GCM, as NewGCM(key[:]).Seal would compute, for the handshake's
// many one-message keys: it allocates nothing and wipes the key schedule
// before it returns.
func SealOnce(dst []byte, key *[KeySize]byte, nonce *[nonceSize]byte, plaintext, aad []byte) {
	if len(dst) != len(plaintext)+tagSize || aead.AnyOverlap(dst, plaintext) || aead.AnyOverlap(dst, aad) {
		panic("sm4: SealOnce: output of the wrong size or overlapping its inputs")
	}
	var g sm4.GCM
	if err := g.Init(key[:]); err != nil {
		panic("sm4: SealOnce: " + err.Error()) // unreachable: the key size is fixed
	}
	g.Seal(dst, (*[tagSize]byte)(dst[len(plaintext):]), nonce, plaintext, aad)
	g = sm4.GCM{}
}

// OpenOnce verifies ciphertext (ciphertext ‖ 16-byte tag) under a
// single-use key in constant time and only then decrypts it into dst,
// which must be exactly len(ciphertext)−16 bytes and must not overlap
// ciphertext or aad. It reports whether the tag was valid; on failure dst
// is left unwritten. Like SealOnce it allocates nothing and wipes the key
// schedule.
func OpenOnce(dst []byte, key *[KeySize]byte, nonce *[nonceSize]byte, ciphertext, aad []byte) bool {
	n := len(ciphertext) - tagSize
	if n < 0 || len(dst) != n || aead.AnyOverlap(dst, ciphertext) || aead.AnyOverlap(dst, aad) {
		panic("sm4: OpenOnce: input shorter than a tag, or output of the wrong size or overlapping its inputs")
	}
	var g sm4.GCM
	if err := g.Init(key[:]); err != nil {
		panic("sm4: OpenOnce: " + err.Error())
	}
	ok := g.Open(dst, nonce, ciphertext[:n], aad, (*[tagSize]byte)(ciphertext[n:]))
	g = sm4.GCM{}
	return ok
}
