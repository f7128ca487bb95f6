// Package aead is what gmtun's GCM implementations share: the buffer-alias
// checks of crypto/cipher's contract, and the adapter that turns a GCM of
// ciphers/internal/sm4 or ciphers/internal/ublock (fixed-size nonce and
// tag arguments, no allocation) into a crypto/cipher.AEAD for the public
// packages ciphers/sm4 and ciphers/ublock:
//
//	AEAD.Seal(dst, nonce, pt, aad) ─ checks, append ─► GCM.Seal(out, tag, nonce, pt, aad)
//	AEAD.Open(dst, nonce, ct, aad) ─ checks, append ─► GCM.Open(out, nonce, ct, aad, tag)
package aead

// The sizes of every gmtun GCM (RFC 8998 for SM4; the same for uBlock).
const (
	// NonceSize is the nonce length in bytes.
	NonceSize = 12
	// TagSize is the tag length in bytes.
	TagSize = 16
	// MaxPlaintextSize is the largest plaintext GCM admits with 128-bit
	// blocks: 2^32 − 2 blocks (SP 800-38D §5.2.1.1).
	MaxPlaintextSize = (1<<32 - 2) * 16
)

// GCM is a GCM key of one of gmtun's implementations.
type GCM interface {
	// Seal encrypts plaintext into out and writes the tag.
	Seal(out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte)
	// Open verifies tag, then decrypts ciphertext into out; it reports
	// whether the tag was valid (out is not written otherwise).
	Open(out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool
}

// AEAD is a crypto/cipher.AEAD over a GCM G held by value. It keeps only
// the immutable key, so it is safe for concurrent use.
type AEAD[G any, P interface {
	*G
	GCM
}] struct {
	g       G
	name    string // the package name that prefixes panics ("sm4")
	errOpen error
}

// New returns an AEAD whose GCM init sets up; name prefixes its panics
// and errOpen is what Open returns for a message that does not verify.
func New[G any, P interface {
	*G
	GCM
}](name string, errOpen error, init func(*G) error) (*AEAD[G, P], error) {
	a := &AEAD[G, P]{name: name, errOpen: errOpen}
	if err := init(&a.g); err != nil {
		return nil, err
	}
	return a, nil
}

// NonceSize returns 12.
func (a *AEAD[G, P]) NonceSize() int { return NonceSize }

// Overhead returns 16, the tag length.
func (a *AEAD[G, P]) Overhead() int { return TagSize }

// Seal encrypts and authenticates plaintext, authenticates
// additionalData and appends the result to dst (cipher.AEAD). It panics,
// as crypto/cipher's GCM does, on a nonce that is not 12 bytes, a
// plaintext longer than 2^32 − 2 blocks, or an output that overlaps
// plaintext inexactly or additionalData at all.
func (a *AEAD[G, P]) Seal(dst, nonce, plaintext, additionalData []byte) []byte {
	if len(nonce) != NonceSize {
		panic(a.name + ": incorrect nonce length given to GCM")
	}
	if uint64(len(plaintext)) > MaxPlaintextSize {
		panic(a.name + ": message too large for GCM")
	}
	ret, out := sliceForAppend(dst, len(plaintext)+TagSize)
	if InexactOverlap(out, plaintext) {
		panic(a.name + ": invalid buffer overlap of output and input")
	}
	if AnyOverlap(out, additionalData) {
		panic(a.name + ": invalid buffer overlap of output and additional data")
	}
	P(&a.g).Seal(out, (*[TagSize]byte)(out[len(plaintext):]), (*[NonceSize]byte)(nonce), plaintext, additionalData)
	return ret
}

// Open authenticates and decrypts ciphertext (cipher.AEAD). The tag is
// checked before any plaintext is produced; on failure the output bytes
// are zeroed and an error is returned. It panics on a nonce that is not 12
// bytes or an output that overlaps ciphertext inexactly or additionalData
// at all.
func (a *AEAD[G, P]) Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error) {
	if len(nonce) != NonceSize {
		panic(a.name + ": incorrect nonce length given to GCM")
	}
	if len(ciphertext) < TagSize || uint64(len(ciphertext)) > MaxPlaintextSize+TagSize {
		return nil, a.errOpen
	}
	n := len(ciphertext) - TagSize
	ret, out := sliceForAppend(dst, n)
	if InexactOverlap(out, ciphertext) {
		panic(a.name + ": invalid buffer overlap of output and input")
	}
	if AnyOverlap(out, additionalData) {
		panic(a.name + ": invalid buffer overlap of output and additional data")
	}
	if !P(&a.g).Open(out, (*[NonceSize]byte)(nonce), ciphertext[:n], additionalData, (*[TagSize]byte)(ciphertext[n:])) {
		clear(out)
		return nil, a.errOpen
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
