package handshake

import (
	"crypto/hmac"
	"crypto/subtle"
	"hash"

	"github.com/emmansun/gmsm/sm3"

	"github.com/gmtun/gmtun/ciphers/sm4"
)

// protocolName is hashed into C0, the initial chaining value. Changing any
// algorithm or layout changes it.
const protocolName = "gmtun v1 SM2-KE SM3 SM4-GCM"

// Labels of the key schedule. Each KDF input starts with u8(len) ‖ label.
const (
	labelES      = "es"
	labelSS      = "ss"
	labelKex     = "kex"
	labelConfirm = "confirm"
	labelI2REnc  = "i2r enc"
	labelI2RMAC  = "i2r mac"
	labelI2RSalt = "i2r salt"
	labelR2IEnc  = "r2i enc"
	labelR2IMAC  = "r2i mac"
	labelR2ISalt = "r2i salt"
	labelMAC1    = "mac1----"
	labelCookie  = "cookie--"
)

// hashParts returns SM3(parts[0] ‖ parts[1] ‖ …) (GB/T 32905).
func hashParts(parts ...[]byte) (out [32]byte) {
	h := sm3.New()
	for _, p := range parts {
		h.Write(p)
	}
	h.Sum(out[:0])
	return out
}

// kdf fills out with the SM3 KDF of GB/T 32918.4 §5.4.3 (counter from 1,
// 32-bit big-endian) applied to Z = u8(len(label)) ‖ label ‖ parts….
func kdf(out []byte, label string, parts ...[]byte) {
	n := 1 + len(label)
	for _, p := range parts {
		n += len(p)
	}
	z := make([]byte, 0, n)
	z = append(z, byte(len(label)))
	z = append(z, label...)
	for _, p := range parts {
		z = append(z, p...)
	}
	k := sm3.Kdf(z, len(out))
	copy(out, k)
	clear(k)
	clear(z)
}

// kdf2 splits a 48-byte KDF output into a 32-byte chaining key and a
// 16-byte SM4 key.
func kdf2(ck *[32]byte, k *[16]byte, label string, parts ...[]byte) {
	var out [48]byte
	kdf(out[:], label, parts...)
	copy(ck[:], out[:32])
	copy(k[:], out[32:])
	clear(out[:])
}

// confirmValue computes the GB/T 32918.3 optional confirmation hash
// S = SM3(prefix ‖ y ‖ SM3(x ‖ Z_A ‖ Z_B ‖ x1 ‖ y1 ‖ x2 ‖ y2)) where (x, y)
// is U (initiator, steps A9/A10) or V (responder, steps B8/B10), A is the
// initiator and R_A = (x1, y1), R_B = (x2, y2). prefix is 0x02 for S_B/S_1
// and 0x03 for S_A/S_2.
func confirmValue(prefix byte, uv *[64]byte, za, zb *[32]byte, ra, rb *Point) (s [32]byte) {
	inner := hashParts(uv[:32], za[:], zb[:], ra[:], rb[:])
	s = hashParts([]byte{prefix}, uv[32:], inner[:])
	clear(inner[:])
	return s
}

// zeroNonce is the nonce of every handshake AEAD: each key seals one
// message only.
var zeroNonce [12]byte

// seal encrypts pt with a single-use key and the all-zero nonce into
// dst[:len(pt)+16] (SM4-GCM through gmtun's constant-time ciphers/sm4;
// nothing is allocated).
func seal(dst []byte, key *[16]byte, pt, aad []byte) {
	sm4.SealOnce(dst[:len(pt)+16], key, &zeroNonce, pt, aad)
}

// open verifies ct (ciphertext ‖ tag) and only then decrypts it into
// dst[:len(ct)-16]; it reports failure for a bad tag or a ct shorter than
// a tag.
func open(dst []byte, key *[16]byte, ct, aad []byte) bool {
	if len(ct) < 16 {
		return false
	}
	return sm4.OpenOnce(dst[:len(ct)-16], key, &zeroNonce, ct, aad)
}

// hmacSM3 returns HMAC-SM3 (RFC 2104 with SM3; GM/T 0042) of msg.
func hmacSM3(key, msg []byte) (out [32]byte) {
	h := hmac.New(sm3.New, key)
	h.Write(msg)
	h.Sum(out[:0])
	return out
}

// macState is a pooled keyed HMAC-SM3 with its output buffer, so checking
// a MAC does not allocate.
type macState struct {
	h   hash.Hash
	sum [32]byte
}

// verify reports whether mac equals the 16-byte truncated HMAC-SM3 of msg,
// in constant time.
func (m *macState) verify(msg, mac []byte) bool {
	m.h.Reset()
	m.h.Write(msg)
	m.h.Sum(m.sum[:0])
	return subtle.ConstantTimeCompare(m.sum[:macSize], mac) == 1
}

func equal16(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }
