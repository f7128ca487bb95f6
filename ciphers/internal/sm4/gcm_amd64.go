//go:build amd64 && gc && !purego

package sm4

import (
	"crypto/subtle"
	"encoding/binary"

	"github.com/gmtun/gmtun/kernels/ghash"
	"github.com/gmtun/gmtun/kernels/sm4ctr"
)

// GCM on the SIMD kernels: GCTR through the sm4ctr kernels and GHASH
// through the ghash kernels, composed here.
//
// An SM4 kernel call is latency bound per register set (32 dependent
// rounds), so the cost of a message is governed by the number of kernel
// passes, not only by its blocks. A message therefore takes its blocks in
// two parts: the largest multiple of the tier's pass that fits goes
// straight through the CTR kernel, and the rest — the leftover whole
// blocks, the final partial block and the tag mask E_K(J0) — is gathered
// as counter blocks into one ECB call (one partial pass instead of three).
// For a batch the gather spans packets, so leftovers fill whole passes.

// maxGather is the largest pass of any tier in blocks (sm4ctr.AVX512GFNI:
// one byte-sliced set of 64). A gather never holds more than one pass
// (directBlocks keeps a message's rest within one), and every call zeroes
// one, so it is kept no larger.
const maxGather = 64

// gather collects counter blocks of pieces of one or more messages for a
// single ECB kernel call, then applies the keystream to the pieces.
type gather struct {
	ks     [maxGather * BlockSize]byte // counter blocks, then keystream
	dst    [maxGather][]byte           // where each piece's output goes
	src    [maxGather][]byte           // its input; nil: copy the keystream
	pieces int
	blocks int
}

// add queues the counter blocks *ctr, inc32(*ctr), … for len(dst) bytes
// (rounded up to whole blocks) and advances *ctr past them. src is XORed
// with the keystream into dst at flush; a nil src copies the keystream
// (the tag mask). The caller keeps blocks within the pass.
func (g *gather) add(ctr *[16]byte, dst, src []byte) {
	n := (len(dst) + BlockSize - 1) / BlockSize
	counterBlocks(g.ks[g.blocks*BlockSize:(g.blocks+n)*BlockSize], ctr)
	g.dst[g.pieces], g.src[g.pieces] = dst, src
	g.pieces++
	g.blocks += n
}

// counterBlocks fills buf (whole blocks) with *ctr, inc32(*ctr), … and
// advances *ctr past them.
func counterBlocks(buf []byte, ctr *[16]byte) {
	// The first 12 bytes are copied as two words (byte order is
	// irrelevant for a copy, little-endian is the native one).
	hi := binary.LittleEndian.Uint64(ctr[0:8])
	mid := binary.LittleEndian.Uint32(ctr[8:12])
	c := binary.BigEndian.Uint32(ctr[12:])
	for i := 0; i+BlockSize <= len(buf); i += BlockSize {
		b := (*[BlockSize]byte)(buf[i:])
		binary.LittleEndian.PutUint64(b[0:], hi)
		binary.LittleEndian.PutUint32(b[8:], mid)
		binary.BigEndian.PutUint32(b[12:], c)
		c++
	}
	binary.BigEndian.PutUint32(ctr[12:], c)
}

// flush encrypts the queued counter blocks and applies the keystream to
// every queued piece, then empties g.
func (g *gather) flush(st sm4ctr.Tier, rk *[32]uint32) {
	if g.blocks == 0 {
		return
	}
	ks := g.ks[:g.blocks*BlockSize]
	sm4ctr.EncryptBlocks(st, rk, ks, ks)
	off := 0
	for i := range g.pieces {
		d := g.dst[i]
		if g.src[i] == nil {
			copy(d, ks[off:])
		} else {
			subtle.XORBytes(d, g.src[i], ks[off:off+len(d)])
		}
		off += (len(d) + BlockSize - 1) / BlockSize * BlockSize
		g.dst[i], g.src[i] = nil, nil
	}
	g.pieces, g.blocks = 0, 0
}

// directBlocks returns how many whole blocks of an n-byte message go
// straight through the CTR kernel so that the rest plus extra counter
// blocks fit in one pass of tier st.
func directBlocks(st sm4ctr.Tier, n, extra int) int {
	pass := st.PassBlocks()
	full := n / BlockSize
	direct := full - full%pass
	if (n+BlockSize-1)/BlockSize-direct+extra > pass {
		direct = full
	}
	return direct
}

// j0 returns J0 = nonce ‖ 0^31 ‖ 1 (SP 800-38D §7.1 step 2).
func j0(nonce *[NonceSize]byte) (ctr [BlockSize]byte) {
	copy(ctr[:], nonce[:])
	ctr[15] = 1
	return ctr
}

// ghashKernel absorbs aad and ct, each zero-padded to whole blocks, and
// the length block [len(A)]64 ‖ [len(C)]64 into y (SP 800-38D §7.1
// step 5), on GHASH tier gt. A packet of the sm4-gcm suite (whole-block
// additional data right in front of the ciphertext in one buffer) takes a
// single kernel call: A ‖ C's whole blocks as one run, then C's padded
// partial block and the length block.
func ghashKernel(gt ghash.Tier, k *ghash.Key, y *[16]byte, aad, ct []byte) {
	var last [2 * BlockSize]byte
	full := len(ct) &^ (BlockSize - 1)
	body := ct[:full]
	switch {
	case len(aad) == 0:
	case adjacentBlocks(aad, ct, full):
		body = aad[:len(aad)+full]
	case full == 0 && len(aad)%BlockSize == 0:
		body = aad
	default:
		afull := len(aad) &^ (BlockSize - 1)
		ghash.Update(gt, k, y, aad[:afull])
		if afull < len(aad) {
			copy(last[:], aad[afull:])
			ghash.Update(gt, k, y, last[:BlockSize])
			last = [2 * BlockSize]byte{}
		}
	}
	// The partial block of C and the length block.
	rest := last[:BlockSize]
	if full < len(ct) {
		copy(last[:], ct[full:])
		rest = last[:]
	}
	binary.BigEndian.PutUint64(rest[len(rest)-16:], uint64(len(aad))*8)
	binary.BigEndian.PutUint64(rest[len(rest)-8:], uint64(len(ct))*8)
	ghash.Update2(gt, k, y, body, rest)
}

// adjacentBlocks reports whether aad is whole blocks immediately followed
// in memory by the first n bytes of ct (n ≤ len(ct)), so that
// aad[:len(aad)+n] is A ‖ C[:n] without copying.
func adjacentBlocks(aad, ct []byte, n int) bool {
	if len(aad)%BlockSize != 0 || cap(aad)-len(aad) < n || n == 0 {
		return false
	}
	return &aad[:len(aad)+1][len(aad)] == &ct[0]
}

// sealKernel is sealGeneric on kernel tiers st and gt.
func sealKernel(st sm4ctr.Tier, gt ghash.Tier, g *GCM, out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte) {
	n := len(plaintext)
	out = out[:n]
	ctr := j0(nonce)
	var ga gather
	ga.add(&ctr, tag[:], nil) // E_K(J0); ctr is now inc32(J0)
	direct := directBlocks(st, n, 1) * BlockSize
	if direct > 0 {
		sm4ctr.XORKeyStream(st, &g.enc, &ctr, out[:direct], plaintext[:direct])
	}
	if direct < n {
		ga.add(&ctr, out[direct:], plaintext[direct:])
	}
	ga.flush(st, &g.enc)
	var y [16]byte
	ghashKernel(gt, &g.hkeyAsm, &y, aad, out)
	subtle.XORBytes(tag[:], tag[:], y[:])
}

// openKernel is openGeneric on kernel tiers st and gt. The keystream of
// the tag mask and of the blocks after the direct part is computed in one
// ECB call before the tag is checked, but no output is written until it
// has verified.
func openKernel(st sm4ctr.Tier, gt ghash.Tier, g *GCM, out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	n := len(ciphertext)
	out = out[:n]
	direct := directBlocks(st, n, 1) * BlockSize
	var ks [maxGather * BlockSize]byte
	ctr := j0(nonce)
	nks := 1 + (n-direct+BlockSize-1)/BlockSize
	counterBlocks(ks[:BlockSize], &ctr) // J0
	directCtr := ctr                    // inc32(J0)
	binary.BigEndian.PutUint32(ctr[12:], binary.BigEndian.Uint32(ctr[12:])+uint32(direct/BlockSize))
	counterBlocks(ks[BlockSize:nks*BlockSize], &ctr)
	sm4ctr.EncryptBlocks(st, &g.enc, ks[:nks*BlockSize], ks[:nks*BlockSize])

	var y [16]byte
	ghashKernel(gt, &g.hkeyAsm, &y, aad, ciphertext)
	subtle.XORBytes(y[:], y[:], ks[:BlockSize])
	if subtle.ConstantTimeCompare(y[:], tag[:]) != 1 {
		return false
	}
	if direct > 0 {
		sm4ctr.XORKeyStream(st, &g.enc, &directCtr, out[:direct], ciphertext[:direct])
	}
	subtle.XORBytes(out[direct:], ciphertext[direct:], ks[BlockSize:])
	return true
}

// sealBatchKernel is sealBatchGeneric on kernel tiers st and gt: the
// direct parts of each packet go through the CTR kernel, and the tag
// masks, leftover blocks and partial blocks of all packets share gathered
// ECB passes. Tags get the mask first and the GHASH last.
func sealBatchKernel(st sm4ctr.Tier, gt ghash.Tier, g *GCM, ps []Packet) {
	if len(ps) == 1 {
		p := &ps[0]
		sealKernel(st, gt, g, p.Text, p.Tag, &p.Nonce, p.Text, p.AAD)
		return
	}
	pass := st.PassBlocks()
	var ga gather
	for i := range ps {
		p := &ps[i]
		ctr := j0(&p.Nonce)
		if ga.blocks == pass {
			ga.flush(st, &g.enc)
		}
		ga.add(&ctr, p.Tag[:], nil)
		text := p.Text
		direct := len(text) / BlockSize
		direct = (direct - direct%pass) * BlockSize
		if direct > 0 {
			sm4ctr.XORKeyStream(st, &g.enc, &ctr, text[:direct], text[:direct])
		}
		for rest := text[direct:]; len(rest) > 0; {
			if ga.blocks == pass {
				ga.flush(st, &g.enc)
			}
			k := min(len(rest), (pass-ga.blocks)*BlockSize)
			ga.add(&ctr, rest[:k], rest[:k])
			rest = rest[k:]
		}
	}
	ga.flush(st, &g.enc)
	for i := range ps {
		p := &ps[i]
		var y [16]byte
		ghashKernel(gt, &g.hkeyAsm, &y, p.AAD, p.Text)
		subtle.XORBytes(p.Tag[:], p.Tag[:], y[:])
	}
}

// openBatchKernel is openBatchGeneric on kernel tiers st and gt. The tag
// masks of up to maxGather packets are computed in one ECB call and every
// tag is checked; only then are the packets that verified decrypted, with
// the same gathering as sealBatchKernel.
func openBatchKernel(st sm4ctr.Tier, gt ghash.Tier, g *GCM, ps []Packet, ok []bool) {
	if len(ps) == 1 {
		p := &ps[0]
		ok[0] = openKernel(st, gt, g, p.Text, &p.Nonce, p.Text, p.AAD, p.Tag)
		return
	}
	var masks [maxGather * BlockSize]byte
	for base := 0; base < len(ps); base += maxGather {
		chunk := ps[base:min(len(ps), base+maxGather)]
		for i := range chunk {
			ctr := j0(&chunk[i].Nonce)
			counterBlocks(masks[i*BlockSize:(i+1)*BlockSize], &ctr)
		}
		sm4ctr.EncryptBlocks(st, &g.enc, masks[:len(chunk)*BlockSize], masks[:len(chunk)*BlockSize])
		for i := range chunk {
			p := &chunk[i]
			var y [16]byte
			ghashKernel(gt, &g.hkeyAsm, &y, p.AAD, p.Text)
			subtle.XORBytes(y[:], y[:], masks[i*BlockSize:])
			ok[base+i] = subtle.ConstantTimeCompare(y[:], p.Tag[:]) == 1
		}
	}
	pass := st.PassBlocks()
	var ga gather
	for i := range ps {
		if !ok[i] {
			continue
		}
		text := ps[i].Text
		ctr := j0(&ps[i].Nonce)
		ctr[15] = 2
		direct := len(text) / BlockSize
		direct = (direct - direct%pass) * BlockSize
		if direct > 0 {
			sm4ctr.XORKeyStream(st, &g.enc, &ctr, text[:direct], text[:direct])
		}
		for rest := text[direct:]; len(rest) > 0; {
			if ga.blocks == pass {
				ga.flush(st, &g.enc)
			}
			k := min(len(rest), (pass-ga.blocks)*BlockSize)
			ga.add(&ctr, rest[:k], rest[:k])
			rest = rest[k:]
		}
	}
	ga.flush(st, &g.enc)
}
