package sm4

import (
	"crypto/subtle"
	"encoding/binary"
)

// The reference GCM for one message and for a batch, in its own file so
// that the SIMD versions can be substituted (see dispatch_amd64.go).

// gcmFirst computes, in b, the keystream of the first counter blocks of a
// GCM message of textLen bytes with nonce: lane 0 is E_K(J0), the tag mask,
// with J0 = nonce ‖ 0^31 ‖ 1 (SP 800-38D §7.1 step 2), lanes 1.. the GCTR
// keystream from inc32(J0) (§7.1 step 3). It returns the next counter.
// Putting J0 into the first batch saves a separate block encryption; for
// the 96-bit nonce and lengths up to MaxPlaintextSize the 32-bit counter
// field never wraps, so the 128-bit increment of keystream is inc32.
func gcmFirst(g *GCM, b *bsBatch, nonce *[NonceSize]byte, textLen int) (hi, lo uint64) {
	hi = binary.BigEndian.Uint64(nonce[0:8])
	lo = uint64(binary.BigEndian.Uint32(nonce[8:12]))<<32 | 1
	n := min(1+(textLen+BlockSize-1)/BlockSize, bsLanes)
	return keystream(&g.enc, b, n, hi, lo)
}

// tagMaskOf returns lane 0 of b as bytes.
func tagMaskOf(b *bsBatch) (m [BlockSize]byte) {
	binary.BigEndian.PutUint64(m[0:8], b.a[0])
	binary.BigEndian.PutUint64(m[8:16], b.b[0])
	return m
}

// sealGeneric is GCM-AE (SP 800-38D §7.1) for a 96-bit nonce: see GCM.Seal.
func sealGeneric(g *GCM, out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte) {
	var b bsBatch
	hi, lo := gcmFirst(g, &b, nonce, len(plaintext))
	tagMask := tagMaskOf(&b)
	// C = GCTR_K(inc32(J0), P) (§7.1 step 3): the first batch, then the rest.
	k := xorLanes(&b, 1, out, plaintext)
	if k < len(plaintext) {
		var ctr [BlockSize]byte
		binary.BigEndian.PutUint64(ctr[0:8], hi)
		binary.BigEndian.PutUint64(ctr[8:16], lo)
		ctrGeneric(&g.enc, &ctr, out[k:], plaintext[k:])
	}
	tagGeneric(g, tag, &tagMask, aad, out[:len(plaintext)])
}

// openGeneric is GCM-AD (SP 800-38D §7.2) for a 96-bit nonce: see GCM.Open.
// It verifies before it decrypts (the first batch of keystream waits in b).
func openGeneric(g *GCM, out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	var b bsBatch
	var want [BlockSize]byte
	hi, lo := gcmFirst(g, &b, nonce, len(ciphertext))
	tagMask := tagMaskOf(&b)
	tagGeneric(g, &want, &tagMask, aad, ciphertext)
	if subtle.ConstantTimeCompare(want[:], tag[:]) != 1 {
		return false
	}
	k := xorLanes(&b, 1, out, ciphertext)
	if k < len(ciphertext) {
		var ctr [BlockSize]byte
		binary.BigEndian.PutUint64(ctr[0:8], hi)
		binary.BigEndian.PutUint64(ctr[8:16], lo)
		ctrGeneric(&g.enc, &ctr, out[k:], ciphertext[k:])
	}
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
