package sm4

import "github.com/gmtun/gmtun/ciphers/internal/ghash"

// The generic GHASH is ciphers/internal/ghash's constant-time multiply,
// shared with the other GCMs; these names keep the generic GCM code as it
// was. (The kernel GCM of gcm_amd64.go calls kernels/ghash itself, on the
// GHASH tier paired with its SM4 tier.)

// ghashKey is the generic GHASH subkey.
type ghashKey = ghash.GenericKey

// initGHASHKey precomputes key from the hash subkey h (16 bytes).
func initGHASHKey(key *ghashKey, h *[16]byte) { key.Init(h) }

// ghashGeneric absorbs data into the GHASH state y; see
// ghash.UpdateGeneric.
func ghashGeneric(key *ghashKey, y *[2]uint64, data []byte) { ghash.UpdateGeneric(key, y, data) }

// gfMul returns y·H in GF(2^128); see ghash.MulGeneric.
func gfMul(key *ghashKey, yhi, ylo uint64) (rhi, rlo uint64) { return ghash.MulGeneric(key, yhi, ylo) }
