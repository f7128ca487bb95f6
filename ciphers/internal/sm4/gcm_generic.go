package sm4

import (
	"crypto/subtle"
	"encoding/binary"
)

// The reference GCM for one message and for a batch, in its own file so
// that the SIMD versions can be substituted (see dispatch_amd64.go).

// sealGeneric is GCM-AE (SP 800-38D §7.1) for a 96-bit nonce: see GCM.Seal.
func sealGeneric(g *GCM, out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte) {
	var ctr, tagMask [BlockSize]byte
	// J0 = nonce ‖ 0^31 ‖ 1 (§7.1 step 2); E_K(J0) masks the tag.
	copy(ctr[:], nonce[:])
	ctr[15] = 1
	cryptBlockGeneric(&g.enc, tagMask[:], ctr[:])
	// C = GCTR_K(inc32(J0), P) (§7.1 step 3).
	ctr[15] = 2
	ctrGeneric(&g.enc, &ctr, out, plaintext)
	tagGeneric(g, tag, &tagMask, aad, out[:len(plaintext)])
}

// openGeneric is GCM-AD (SP 800-38D §7.2) for a 96-bit nonce: see GCM.Open.
// It verifies before it decrypts.
func openGeneric(g *GCM, out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	var ctr, tagMask, want [BlockSize]byte
	copy(ctr[:], nonce[:])
	ctr[15] = 1
	cryptBlockGeneric(&g.enc, tagMask[:], ctr[:])
	tagGeneric(g, &want, &tagMask, aad, ciphertext)
	if subtle.ConstantTimeCompare(want[:], tag[:]) != 1 {
		return false
	}
	ctr[15] = 2
	ctrGeneric(&g.enc, &ctr, out, ciphertext)
	return true
}

// tagGeneric computes T = GHASH_H(A ‖ 0^v ‖ C ‖ 0^u ‖ [len(A)]64 ‖
// [len(C)]64) ⊕ E_K(J0) (§7.1 steps 5–6) into tag.
func tagGeneric(g *GCM, tag, tagMask *[BlockSize]byte, aad, ciphertext []byte) {
	var y [2]uint64
	ghashGeneric(&g.hkey, &y, aad)
	ghashGeneric(&g.hkey, &y, ciphertext)
	hi, lo := gfMul(&g.hkey, y[0]^uint64(len(aad))*8, y[1]^uint64(len(ciphertext))*8)
	binary.BigEndian.PutUint64(tag[0:8], hi^binary.BigEndian.Uint64(tagMask[0:8]))
	binary.BigEndian.PutUint64(tag[8:16], lo^binary.BigEndian.Uint64(tagMask[8:16]))
}

// sealBatchGeneric seals each packet with sealGeneric.
func sealBatchGeneric(g *GCM, ps []Packet) {
	for i := range ps {
		p := &ps[i]
		sealGeneric(g, p.Text, p.Tag, &p.Nonce, p.Text, p.AAD)
	}
}

// openBatchGeneric opens each packet with openGeneric.
func openBatchGeneric(g *GCM, ps []Packet, ok []bool) {
	for i := range ps {
		p := &ps[i]
		ok[i] = openGeneric(g, p.Text, &p.Nonce, p.Text, p.AAD, p.Tag)
	}
}
