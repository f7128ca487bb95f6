package ciphers

import "github.com/gmtun/gmtun/ciphers/internal/ublock"

// ublockgcmKey is the ublock-gcm Key of one direction (docs/PROTOCOL.md,
// "Data packets", ublock-gcm): GCM (SP 800-38D) over uBlock-128/128 with
// nonce = salt ⊕ (0^4 ‖ BE64(c)) and the 16-byte header as additional
// data, exactly as sm4-gcm with SM4 replaced by uBlock: the gcm family
// (gcmKey) over uBlock.
type ublockgcmKey = gcmKey[ublock.GCM]

// newUBlockGCMKey returns the ublock-gcm Key for k. It copies the key
// material.
func newUBlockGCMKey(k DirectionKeys) (Key, error) {
	return newGCMKey[ublock.GCM](k)
}
