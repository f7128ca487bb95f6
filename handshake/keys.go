package handshake

import (
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/emmansun/gmsm/ecdh"
)

// PrivateKeySize is the length of an encoded SM2 private scalar.
const PrivateKeySize = 32

// PublicKeySize is the length of an encoded SM2 public point on the wire and
// in configuration: the affine coordinates x ‖ y, 32 bytes each, big-endian
// (the SEC 1 uncompressed encoding without its leading 0x04 byte).
const PublicKeySize = 64

// PrivateKey is a static SM2 private key (GB/T 32918.1 §6.1: a scalar d in
// [1, n−2] on the recommended curve of GB/T 32918.5). It is immutable and
// safe for concurrent use.
type PrivateKey struct {
	k   *ecdh.PrivateKey
	pub *PublicKey
}

// PublicKey is a validated SM2 public key: a point of the recommended curve
// that is on the curve and not the point at infinity (GB/T 32918.1 §6.2). It
// is immutable and safe for concurrent use.
type PublicKey struct {
	k   *ecdh.PublicKey
	raw [PublicKeySize]byte
}

// Errors of the key helpers. They are wrapped with context by the parsers.
var (
	// ErrKeyEncoding reports text that is not canonical padded base64.
	ErrKeyEncoding = errors.New("handshake: key is not canonical base64")
	// ErrKeyLength reports a key of the wrong decoded length.
	ErrKeyLength = errors.New("handshake: key has the wrong length")
	// ErrKeyRange reports a private scalar outside [1, n−2].
	ErrKeyRange = errors.New("handshake: private key out of range")
	// ErrPointInvalid reports a public point with a coordinate ≥ p, off the
	// curve, or the point at infinity.
	ErrPointInvalid = errors.New("handshake: public key is not a valid SM2 curve point")
)

// GeneratePrivateKey returns a new static key. The scalar is drawn from rand
// by rejection sampling: 32 bytes are read per attempt and the first value in
// [1, n−2] is used, so a deterministic reader gives a deterministic key.
func GeneratePrivateKey(rand io.Reader) (*PrivateKey, error) {
	k, err := generateScalar(rand)
	if err != nil {
		return nil, err
	}
	return newPrivateKey(k), nil
}

// generateScalar draws an ecdh private key from rand by rejection sampling.
// Unlike ecdh.Curve.GenerateKey it consumes exactly 32 bytes per attempt, so
// test vectors can inject ephemerals through an io.Reader.
func generateScalar(rand io.Reader) (*ecdh.PrivateKey, error) {
	var buf [PrivateKeySize]byte
	defer clear(buf[:])
	for range 64 {
		if _, err := io.ReadFull(rand, buf[:]); err != nil {
			return nil, fmt.Errorf("handshake: reading randomness: %w", err)
		}
		if k, err := ecdh.P256().NewPrivateKey(buf[:]); err == nil {
			return k, nil
		}
	}
	// The probability of 64 rejections from a real RNG is < 2^-2000.
	return nil, errors.New("handshake: randomness source keeps returning out-of-range scalars")
}

func newPrivateKey(k *ecdh.PrivateKey) *PrivateKey {
	pub, err := newPublicKeyFromECDH(k.PublicKey())
	if err != nil {
		// Unreachable: a scalar in [1, n-2] never maps to infinity.
		panic("handshake: internal error: derived public key invalid")
	}
	return &PrivateKey{k: k, pub: pub}
}

// NewPrivateKey returns the private key with the given 32-byte big-endian
// scalar. It rejects scalars outside [1, n−2].
func NewPrivateKey(b []byte) (*PrivateKey, error) {
	if len(b) != PrivateKeySize {
		return nil, fmt.Errorf("%w: private key must be %d bytes, got %d", ErrKeyLength, PrivateKeySize, len(b))
	}
	k, err := ecdh.P256().NewPrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%w: the scalar must be in [1, n-2] of the SM2 curve", ErrKeyRange)
	}
	return newPrivateKey(k), nil
}

// ParsePrivateKey parses the text form of a private key: standard padded
// base64 (RFC 4648 §4) of the 32-byte big-endian scalar, 44 characters.
// Surrounding whitespace is ignored. Non-canonical base64, a wrong length and
// a scalar outside [1, n−2] are rejected with an error that says which.
func ParsePrivateKey(s string) (*PrivateKey, error) {
	b, err := decodeKey(s, PrivateKeySize, "private")
	if err != nil {
		return nil, err
	}
	defer clear(b)
	return NewPrivateKey(b)
}

// ParsePrivateKeyText is ParsePrivateKey for text in a byte slice (a key
// file's line), which the caller can wipe afterwards: it makes no string
// copy of the secret. Its intermediate buffers are zeroed before it
// returns.
func ParsePrivateKeyText(text []byte) (*PrivateKey, error) {
	const maxText = 256
	text = bytes.TrimSpace(text)
	want := base64.StdEncoding.EncodedLen(PrivateKeySize)
	if len(text) == 0 {
		return nil, fmt.Errorf("%w: empty private key", ErrKeyLength)
	}
	if len(text) > maxText {
		return nil, fmt.Errorf("%w: private key must be %d base64 characters, got %d", ErrKeyLength, want, len(text))
	}
	var buf [maxText * 3 / 4]byte
	defer clear(buf[:])
	n, err := base64.StdEncoding.Strict().Decode(buf[:], text)
	if err != nil {
		return nil, fmt.Errorf("%w: private key: %v", ErrKeyEncoding, err)
	}
	if n != PrivateKeySize {
		return nil, fmt.Errorf("%w: private key must decode to %d bytes (%d base64 characters), got %d bytes",
			ErrKeyLength, PrivateKeySize, want, n)
	}
	var enc [44]byte // EncodedLen(PrivateKeySize)
	defer clear(enc[:])
	base64.StdEncoding.Encode(enc[:], buf[:n])
	if subtle.ConstantTimeCompare(enc[:], text) != 1 {
		return nil, fmt.Errorf("%w: private key has non-canonical padding or trailing bits", ErrKeyEncoding)
	}
	return NewPrivateKey(buf[:n])
}

// Encode returns the text form of the key (what `gmtun genkey` prints and
// ParsePrivateKey reads). It is the only way to get the secret as text: the
// String, GoString and Format methods redact it.
func (k *PrivateKey) Encode() string {
	b := k.k.Bytes()
	defer clear(b)
	return base64.StdEncoding.EncodeToString(b)
}

// redacted is what every formatting of a secret prints.
const redacted = "(redacted)"

// String returns "(redacted)": a private key never prints its value (use
// Encode for the text form).
func (k PrivateKey) String() string { return redacted }

// GoString returns "(redacted)", for %#v.
func (k PrivateKey) GoString() string { return redacted }

// Format writes "(redacted)" for every verb (%v, %+v, %#v, %s, %q, %x, %X,
// %d, ...), so no fmt directive can print the scalar.
func (k PrivateKey) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// Bytes returns a copy of the 32-byte big-endian scalar.
func (k *PrivateKey) Bytes() []byte { return k.k.Bytes() }

// Public returns the public key of k.
func (k *PrivateKey) Public() *PublicKey { return k.pub }

// Equal reports whether k and o are the same key, in constant time.
func (k *PrivateKey) Equal(o *PrivateKey) bool {
	return o != nil && k.k.Equal(o.k)
}

// NewPublicKey returns the public key with the given 64-byte x ‖ y encoding.
// It rejects coordinates ≥ p, points not on the curve and (0, 0), which is
// not on the curve and which some encodings use for infinity.
func NewPublicKey(b []byte) (*PublicKey, error) {
	if len(b) != PublicKeySize {
		return nil, fmt.Errorf("%w: public key must be %d bytes (x‖y), got %d", ErrKeyLength, PublicKeySize, len(b))
	}
	var sec1 [1 + PublicKeySize]byte
	sec1[0] = 4
	copy(sec1[1:], b)
	pk, err := ecdh.P256().NewPublicKey(sec1[:])
	if err != nil {
		return nil, ErrPointInvalid
	}
	p := &PublicKey{k: pk}
	copy(p.raw[:], b)
	return p, nil
}

// parsePoint validates a 64-byte wire point into dst without allocating a
// PublicKey wrapper; it returns the gmsm key.
func parsePoint(b *[PublicKeySize]byte) (*ecdh.PublicKey, error) {
	var sec1 [1 + PublicKeySize]byte
	sec1[0] = 4
	copy(sec1[1:], b[:])
	pk, err := ecdh.P256().NewPublicKey(sec1[:])
	if err != nil {
		return nil, ErrPointInvalid
	}
	return pk, nil
}

func newPublicKeyFromECDH(pk *ecdh.PublicKey) (*PublicKey, error) {
	b := pk.Bytes()
	if len(b) != 1+PublicKeySize || b[0] != 4 {
		return nil, ErrPointInvalid
	}
	p := &PublicKey{k: pk}
	copy(p.raw[:], b[1:])
	return p, nil
}

// ParsePublicKey parses the text form of a public key: standard padded
// base64 (RFC 4648 §4) of the 64-byte x ‖ y encoding, 88 characters.
// Surrounding whitespace is ignored. Non-canonical base64, a wrong length,
// coordinates ≥ p, off-curve points and the point at infinity are rejected
// with an error that says which.
func ParsePublicKey(s string) (*PublicKey, error) {
	b, err := decodeKey(s, PublicKeySize, "public")
	if err != nil {
		return nil, err
	}
	return NewPublicKey(b)
}

// String returns the text form of the key (what `gmtun pubkey` prints).
func (k *PublicKey) String() string { return base64.StdEncoding.EncodeToString(k.raw[:]) }

// Bytes returns the 64-byte x ‖ y encoding.
func (k *PublicKey) Bytes() [PublicKeySize]byte { return k.raw }

// Equal reports whether k and o are the same point. Comparison is constant
// time; a nil o is never equal.
func (k *PublicKey) Equal(o *PublicKey) bool {
	return o != nil && subtle.ConstantTimeCompare(k.raw[:], o.raw[:]) == 1
}

// decodeKey decodes canonical padded base64 of exactly n bytes.
func decodeKey(s string, n int, kind string) ([]byte, error) {
	s = strings.TrimSpace(s)
	want := base64.StdEncoding.EncodedLen(n)
	if s == "" {
		return nil, fmt.Errorf("%w: empty %s key", ErrKeyLength, kind)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %s key: %v", ErrKeyEncoding, kind, err)
	}
	if len(b) != n {
		return nil, fmt.Errorf("%w: %s key must decode to %d bytes (%d base64 characters), got %d bytes",
			ErrKeyLength, kind, n, want, len(b))
	}
	if base64.StdEncoding.EncodeToString(b) != s {
		return nil, fmt.Errorf("%w: %s key has non-canonical padding or trailing bits", ErrKeyEncoding, kind)
	}
	return b, nil
}
