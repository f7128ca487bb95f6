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

// The batch functions share keystream batches across packets: the counter
// blocks of all packets of a batch fill the 64 lanes of the bitsliced core
// in turn, so a batch of short packets costs a few full batches instead of
// one mostly empty batch per packet. Only lengths, the batch size and tag
// validity (which the caller learns anyway) decide what runs.

// tagMasks sets m[i] = E_K(J0) of ps[i] (len(ps) ≤ bsLanes).
func tagMasks(g *GCM, ps []Packet, m *[bsLanes][BlockSize]byte) {
	var b bsBatch
	for i := range ps {
		b.a[i] = binary.BigEndian.Uint64(ps[i].Nonce[0:8])
		b.b[i] = uint64(binary.BigEndian.Uint32(ps[i].Nonce[8:12]))<<32 | 1
	}
	encryptLanes(&g.enc, &b, len(ps))
	for i := range ps {
		binary.BigEndian.PutUint64(m[i][0:8], b.a[i])
		binary.BigEndian.PutUint64(m[i][8:16], b.b[i])
	}
}

// laneRef names the block of one packet's text that a lane encrypts.
type laneRef struct {
	packet, block int
}

// xorTexts XORs the GCTR keystream (from inc32(J0)) into the text of every
// packet ps[i] with use[i] set, in place.
func xorTexts(g *GCM, ps []Packet, use []bool) {
	var b bsBatch
	var refs [bsLanes]laneRef
	n := 0
	flush := func() {
		encryptLanes(&g.enc, &b, n)
		for l := range n {
			r := refs[l]
			text := ps[r.packet].Text[BlockSize*r.block:]
			xorLanes(&b, l, text, text[:min(len(text), BlockSize)])
		}
		n = 0
	}
	for i := range ps {
		if !use[i] {
			continue
		}
		hi := binary.BigEndian.Uint64(ps[i].Nonce[0:8])
		lo := uint64(binary.BigEndian.Uint32(ps[i].Nonce[8:12])) << 32
		for k := range (len(ps[i].Text) + BlockSize - 1) / BlockSize {
			b.a[n], b.b[n] = hi, lo|uint64(2+k)
			refs[n] = laneRef{i, k}
			if n++; n == bsLanes {
				flush()
			}
		}
	}
	if n > 0 {
		flush()
	}
}

// sealBatchGeneric seals every packet of ps (see GCM.SealBatch), up to 64
// packets at a time with shared keystream batches.
func sealBatchGeneric(g *GCM, ps []Packet) {
	if len(ps) == 1 {
		p := &ps[0]
		sealGeneric(g, p.Text, p.Tag, &p.Nonce, p.Text, p.AAD)
		return
	}
	var masks [bsLanes][BlockSize]byte
	for len(ps) > 0 {
		chunk := ps[:min(len(ps), bsLanes)]
		tagMasks(g, chunk, &masks)
		var use [bsLanes]bool
		for i := range chunk {
			use[i] = true
		}
		xorTexts(g, chunk, use[:len(chunk)])
		for i := range chunk {
			tagGeneric(g, chunk[i].Tag, &masks[i], chunk[i].AAD, chunk[i].Text)
		}
		ps = ps[len(chunk):]
	}
}

// openBatchGeneric verifies every packet of ps and decrypts those whose tag
// is valid (see GCM.OpenBatch): all tags of up to 64 packets first, then
// the keystream of the valid ones in shared batches.
func openBatchGeneric(g *GCM, ps []Packet, ok []bool) {
	if len(ps) == 1 {
		p := &ps[0]
		ok[0] = openGeneric(g, p.Text, &p.Nonce, p.Text, p.AAD, p.Tag)
		return
	}
	var masks [bsLanes][BlockSize]byte
	for len(ps) > 0 {
		chunk := ps[:min(len(ps), bsLanes)]
		tagMasks(g, chunk, &masks)
		for i := range chunk {
			var want [TagSize]byte
			tagGeneric(g, &want, &masks[i], chunk[i].AAD, chunk[i].Text)
			ok[i] = subtle.ConstantTimeCompare(want[:], chunk[i].Tag[:]) == 1
		}
		xorTexts(g, chunk, ok[:len(chunk)])
		ps, ok = ps[len(chunk):], ok[len(chunk):]
	}
}
