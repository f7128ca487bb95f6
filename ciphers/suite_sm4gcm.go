package ciphers

import "github.com/gmtun/gmtun/ciphers/internal/sm4"

// sm4gcmKey is the sm4-gcm Key of one direction (docs/PROTOCOL.md, "Data
// packets", sm4-gcm): AEAD_SM4_GCM of RFC 8998 with
// nonce = salt ⊕ (0^4 ‖ BE64(c)) and the 16-byte header as additional
// data, the gcm family (gcmKey) over SM4.
type sm4gcmKey = gcmKey[sm4.GCM]

// newSM4GCMKey returns the sm4-gcm Key for k. It copies the key material.
func newSM4GCMKey(k DirectionKeys) (Key, error) { return newGCMKey[sm4.GCM](k) }
