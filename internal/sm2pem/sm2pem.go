// Package sm2pem converts gmtun's SM2 keys to and from the PEM files of
// OpenSSL, GmSSL and Tongsuo: private keys as PKCS#8 ("PRIVATE KEY", what
// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:SM2` writes) or
// SEC 1 ("EC PRIVATE KEY", and "SM2 PRIVATE KEY" as `openssl ec` labels it),
// public keys as SubjectPublicKeyInfo ("PUBLIC KEY"). The DER encoding is
// gmsm's smx509; this package only chooses the blocks and checks that the
// key is on the SM2 curve.
//
// Secrets: the decoded DER of a private key and the scalar copies this
// package makes are zeroed before it returns. smx509 and encoding/asn1
// make intermediate copies of their own that are left to the garbage
// collector (as the standard library's x509 does); the long-lived copy is
// the handshake.PrivateKey, as with the base64 key format.
package sm2pem

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"

	"github.com/emmansun/gmsm/ecdh"
	"github.com/emmansun/gmsm/sm2"
	"github.com/emmansun/gmsm/smx509"

	"github.com/gmtun/gmtun/handshake"
)

// PEM block types.
const (
	// TypePKCS8 is the block of an unencrypted PKCS#8 private key.
	TypePKCS8 = "PRIVATE KEY"
	// TypeSEC1 is the block of a SEC 1 EC private key; TypeSEC1SM2 is the
	// same structure as OpenSSL 3 labels it for the SM2 curve.
	TypeSEC1    = "EC PRIVATE KEY"
	TypeSEC1SM2 = "SM2 PRIVATE KEY"
	// TypePublic is the block of a SubjectPublicKeyInfo.
	TypePublic = "PUBLIC KEY"
)

// ErrNotSM2 reports a well-formed key of another algorithm or curve.
var ErrNotSM2 = errors.New("sm2pem: not an SM2 key")

// IsPEM reports whether data (a key file or a configuration value) is PEM
// text rather than gmtun's one-line base64: its first non-blank bytes are
// "-----BEGIN ".
func IsPEM(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("-----BEGIN "))
}

// parameterBlocks are blocks that may precede a key (`openssl ecparam
// -genkey` writes the curve first); they are skipped, since the key names
// its curve itself.
func isParameterBlock(t string) bool { return t == "EC PARAMETERS" || t == "SM2 PARAMETERS" }

// onlyBlock returns the one key block of data: parameter blocks are
// skipped, and anything else besides the key block — a second key, text
// that is not PEM — is an error, so that a file means one thing. The
// caller zeroes the returned block's Bytes.
func onlyBlock(data []byte, what string) (*pem.Block, error) {
	var key *pem.Block
	rest := data
	for {
		b, r := pem.Decode(rest)
		if b == nil {
			break
		}
		rest = r
		if isParameterBlock(b.Type) {
			continue
		}
		if key != nil {
			clear(key.Bytes)
			clear(b.Bytes)
			return nil, fmt.Errorf("sm2pem: more than one PEM block (%q, %q); the file must hold one %s", key.Type, b.Type, what)
		}
		key = b
	}
	if key == nil {
		return nil, fmt.Errorf("sm2pem: no valid PEM block; expected a %s", what)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		clear(key.Bytes)
		return nil, errors.New("sm2pem: text after the PEM block that is not PEM (a broken or truncated block?)")
	}
	if _, enc := key.Headers["Proc-Type"]; enc {
		clear(key.Bytes)
		return nil, errors.New("sm2pem: the key is encrypted (Proc-Type header); decrypt it first: openssl pkey -in KEY -out PLAIN.pem")
	}
	return key, nil
}

// ParsePrivateKey reads a PEM private key: one block of type "PRIVATE KEY"
// (unencrypted PKCS#8), "EC PRIVATE KEY" or "SM2 PRIVATE KEY" (SEC 1),
// optionally after an "EC PARAMETERS"/"SM2 PARAMETERS" block. The key must
// be on the SM2 curve (GB/T 32918.5) with a scalar in [1, n−2]; PKCS#8
// accepts both the id-ecPublicKey and the SM2 algorithm identifiers.
// Encrypted keys are refused with the command that decrypts them.
func ParsePrivateKey(data []byte) (*handshake.PrivateKey, error) {
	b, err := onlyBlock(data, "private key")
	if err != nil {
		return nil, err
	}
	defer clear(b.Bytes)
	var key any
	switch b.Type {
	case TypePKCS8:
		key, err = smx509.ParsePKCS8PrivateKey(b.Bytes)
	case TypeSEC1, TypeSEC1SM2:
		key, err = smx509.ParseTypedECPrivateKey(b.Bytes)
	case "ENCRYPTED PRIVATE KEY":
		return nil, errors.New("sm2pem: the key is encrypted (ENCRYPTED PRIVATE KEY); gmtun reads unencrypted keys only: " +
			"openssl pkey -in KEY -out PLAIN.pem (or gmssl sm2keygen without -pass), written under umask 077")
	case TypePublic:
		return nil, errors.New("sm2pem: this is a public key (PUBLIC KEY); a private key is needed here")
	default:
		return nil, fmt.Errorf("sm2pem: PEM block %q is not a private key (want %q, %q or %q)", b.Type, TypePKCS8, TypeSEC1, TypeSEC1SM2)
	}
	if err != nil {
		return nil, fmt.Errorf("sm2pem: %s block: %v", b.Type, err)
	}
	var d *big.Int
	switch k := key.(type) {
	case *sm2.PrivateKey:
		d = k.D
	case *ecdsa.PrivateKey:
		//lint:ignore SA1019 the scalar is only wiped, never used
		wipeInt(k.D)
		return nil, fmt.Errorf("%w: the key is on curve %s", ErrNotSM2, k.Curve.Params().Name)
	default:
		return nil, fmt.Errorf("%w: the key is a %T", ErrNotSM2, key)
	}
	defer wipeInt(d)
	if d.Sign() <= 0 || d.BitLen() > 8*handshake.PrivateKeySize {
		return nil, fmt.Errorf("%w: the scalar is out of range", handshake.ErrKeyRange)
	}
	var buf [handshake.PrivateKeySize]byte
	defer clear(buf[:])
	d.FillBytes(buf[:])
	return handshake.NewPrivateKey(buf[:])
}

// wipeInt zeroes the words of n (a secret scalar).
func wipeInt(n *big.Int) {
	if n != nil {
		clear(n.Bits())
		n.SetInt64(0)
	}
}

// EncodePrivateKey returns k as a PEM "PRIVATE KEY" block (PKCS#8 with
// id-ecPublicKey and the SM2 curve OID 1.2.156.10197.1.301, as OpenSSL 3
// writes it). The result is secret; the caller zeroes it after writing.
func EncodePrivateKey(k *handshake.PrivateKey) ([]byte, error) {
	scalar := k.Bytes()
	defer clear(scalar)
	ek, err := ecdh.P256().NewPrivateKey(scalar)
	if err != nil {
		return nil, fmt.Errorf("sm2pem: %v", err)
	}
	der, err := smx509.MarshalPKCS8PrivateKey(ek)
	if err != nil {
		return nil, fmt.Errorf("sm2pem: encoding PKCS#8: %v", err)
	}
	defer clear(der)
	return pem.EncodeToMemory(&pem.Block{Type: TypePKCS8, Bytes: der}), nil
}

// ParsePublicKey reads a PEM "PUBLIC KEY" block (SubjectPublicKeyInfo) of
// an SM2 point, as `openssl pkey -pubout` writes it.
func ParsePublicKey(data []byte) (*handshake.PublicKey, error) {
	b, err := onlyBlock(data, "public key")
	if err != nil {
		return nil, err
	}
	if b.Type != TypePublic {
		clear(b.Bytes)
		if b.Type == TypePKCS8 || b.Type == TypeSEC1 || b.Type == TypeSEC1SM2 {
			return nil, fmt.Errorf("sm2pem: this is a private key (%s); give its public half (openssl pkey -pubout, gmtun pubkey)", b.Type)
		}
		return nil, fmt.Errorf("sm2pem: PEM block %q is not a public key (want %q)", b.Type, TypePublic)
	}
	key, err := smx509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("sm2pem: PUBLIC KEY block: %v", err)
	}
	pub, ok := key.(*ecdsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: the key is a %T", ErrNotSM2, key)
	}
	if pub.Curve != sm2.P256() {
		return nil, fmt.Errorf("%w: the key is on curve %s", ErrNotSM2, pub.Curve.Params().Name)
	}
	ek, err := sm2.PublicKeyToECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", handshake.ErrPointInvalid, err)
	}
	raw := ek.Bytes() // 0x04 ‖ x ‖ y
	if len(raw) != 1+handshake.PublicKeySize || raw[0] != 4 {
		return nil, handshake.ErrPointInvalid
	}
	return handshake.NewPublicKey(raw[1:])
}

// EncodePublicKey returns k as a PEM "PUBLIC KEY" block
// (SubjectPublicKeyInfo with id-ecPublicKey and the SM2 curve OID).
func EncodePublicKey(k *handshake.PublicKey) ([]byte, error) {
	raw := k.Bytes()
	sec1 := append([]byte{4}, raw[:]...)
	pk, err := ecdh.P256().NewPublicKey(sec1)
	if err != nil {
		return nil, fmt.Errorf("sm2pem: %v", err)
	}
	der, err := smx509.MarshalPKIXPublicKey(pk)
	if err != nil {
		return nil, fmt.Errorf("sm2pem: encoding SubjectPublicKeyInfo: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: TypePublic, Bytes: der}), nil
}
