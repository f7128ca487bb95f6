package config

import (
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/internal/sm2pem"
)

// parsePrivateKeyText parses the text of private_key_file: gmtun's
// one-line base64 (`gmtun genkey`) or a PEM private key — PKCS#8 as
// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:SM2` and
// `gmtun genkey --pem` write it, or SEC 1 ("EC PRIVATE KEY", "SM2 PRIVATE
// KEY"). The caller wipes text.
func parsePrivateKeyText(text []byte) (*handshake.PrivateKey, error) {
	if sm2pem.IsPEM(text) {
		return sm2pem.ParsePrivateKey(text)
	}
	return handshake.ParsePrivateKeyText(text)
}

// parsePublicKey parses a peer's public_key: gmtun's base64 of x ‖ y
// (`gmtun pubkey`) or a PEM "PUBLIC KEY" block (SubjectPublicKeyInfo, as
// `openssl pkey -pubout` and `gmtun pubkey --pem` write it), which fits
// in a TOML multi-line string.
func parsePublicKey(s string) (*handshake.PublicKey, error) {
	if sm2pem.IsPEM([]byte(s)) {
		return sm2pem.ParsePublicKey([]byte(s))
	}
	return handshake.ParsePublicKey(s)
}
