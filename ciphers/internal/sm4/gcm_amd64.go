//go:build amd64 && gc && !purego

package sm4

import (
	"crypto/subtle"
	"encoding/binary"

	"github.com/gmtun/gmtun/ciphers/internal/gcmctr"
	"github.com/gmtun/gmtun/kernels/ghash"
	ksm4 "github.com/gmtun/gmtun/kernels/sm4"
)

// GCM on the SIMD kernels: GCTR through the kernels/sm4 kernels and GHASH
// through the ghash kernels, composed here.
//
// An SM4 kernel call is latency bound per register set (32 dependent
// rounds), so the cost of a message is governed by the number of kernel
// passes, not only by its blocks. A message therefore takes its blocks in
// two parts: the largest multiple of the tier's pass that fits goes
// straight through the CTR kernel, and the rest — the leftover whole
// blocks, the final partial block and the tag mask E_K(J0) — is gathered
// as pieces into one ksm4.XORPieces call (one partial pass instead of
// three). For a batch the gather spans packets, so leftovers fill whole
// passes, and on AVX-512 the direct passes of consecutive packets are run
// in pairs (directs).

// maxGather is the most blocks one ksm4.XORPieces call takes (two
// passes of ksm4.AVX512GFNI, run as one pass of two sets; four of the
// YMM tiers; one pass and a third of ksm4.AVX512AESNI). A single
// message's gather never holds more than one pass (directBlocks keeps its
// rest within one); a batch gathers gatherBlocks per call.
const maxGather = ksm4.MaxPieceBlocks

// maxPass is the largest pass of any tier in blocks (ksm4.AVX512AESNI:
// six sets of 16).
const maxPass = 96

// maxPieces is how many pieces a gather holds; a batch flushes early when
// they run out (only batches of very short messages have more than
// maxPieces pieces in maxGather blocks). Every call zeroes one gather, so
// it is kept no larger.
const maxPieces = 64

// gather collects pieces of one or more messages (each a run of counter
// blocks and where its keystream goes) for a single kernel call
// (ksm4.XORPieces), which builds the counter blocks and XORs the
// keystream into place itself.
type gather struct {
	ps     [maxPieces]ksm4.Piece
	pieces int
	blocks int
}

// xorTag sets tag ^= y, as words.
func xorTag(tag *[TagSize]byte, y *[16]byte) {
	binary.LittleEndian.PutUint64(tag[0:], binary.LittleEndian.Uint64(tag[0:])^binary.LittleEndian.Uint64(y[0:]))
	binary.LittleEndian.PutUint64(tag[8:], binary.LittleEndian.Uint64(tag[8:])^binary.LittleEndian.Uint64(y[8:]))
}

// tagValid reports in constant time whether tag = y ⊕ mask (mask: the
// 16 bytes E_K(J0)), comparing words instead of bytes.
func tagValid(tag *[TagSize]byte, y *[16]byte, mask []byte) bool {
	mask = mask[:BlockSize]
	d := binary.LittleEndian.Uint64(tag[0:]) ^ binary.LittleEndian.Uint64(y[0:]) ^ binary.LittleEndian.Uint64(mask[0:])
	d |= binary.LittleEndian.Uint64(tag[8:]) ^ binary.LittleEndian.Uint64(y[8:]) ^ binary.LittleEndian.Uint64(mask[8:])
	return subtle.ConstantTimeEq(int32(uint32(d)|uint32(d>>32)), 0) == 1
}

// add queues the counter blocks k, inc32(k), … for len(dst) > 0 bytes
// (rounded up to whole blocks) and advances k past them. src is XORed
// with the keystream into dst at flush; a nil src copies the keystream
// (the tag mask). The caller keeps blocks within the pass.
func (g *gather) add(k *gcmctr.Counter, dst, src []byte) {
	n := len(dst)
	p := &g.ps[g.pieces]
	k.Put(&p.Ctr)
	p.Dst, p.Src, p.N = &dst[0], nil, n
	if src != nil {
		p.Src = &src[:n][0]
	}
	blocks := (n + BlockSize - 1) / BlockSize
	k.Count += uint32(blocks)
	g.pieces++
	g.blocks += blocks
}

// full reports whether g holds limit blocks or all the pieces it can.
func (g *gather) full(limit int) bool {
	return g.blocks == limit || g.pieces == len(g.ps)
}

// flush applies the keystream of every queued piece in one kernel call,
// then empties g.
func (g *gather) flush(st ksm4.Tier, rk *[32]uint32) {
	if g.pieces == 0 {
		return
	}
	ksm4.XORPieces(st, rk, g.ps[:g.pieces])
	g.pieces, g.blocks = 0, 0
}

// directs runs the direct parts (whole passes) of a batch's messages. On
// AVX512GFNI it holds one 64-block pass back until a second one comes
// (from the same message or the next), and runs the two as one pass of
// two interleaved sets (ksm4.XORKeyStreamPair), which costs less than
// two; on the other tiers it calls the CTR kernel directly.
type directs struct {
	st      ksm4.Tier
	rk      *[32]uint32
	pending []byte // a held-back pass, in place; nil: none
	ctr     gcmctr.Counter
}

// add applies the keystream from k to text (whole passes, in place) and
// advances k past it; on AVX512GFNI a last pass may be held back until
// the next add or flush.
func (d *directs) add(k *gcmctr.Counter, text []byte) {
	if d.st != ksm4.AVX512GFNI {
		var c [16]byte
		k.Put(&c)
		ksm4.XORKeyStream(d.st, d.rk, &c, text, text)
		k.Count += uint32(len(text) / BlockSize)
		return
	}
	const pass = ksm4.PairBlocks * BlockSize
	for ; len(text) >= pass; text = text[pass:] {
		if d.pending == nil {
			d.pending, d.ctr = text[:pass], *k
			k.Count += ksm4.PairBlocks
			continue
		}
		var ca, cb [16]byte
		d.ctr.Put(&ca)
		k.Put(&cb)
		ksm4.XORKeyStreamPair(d.st, d.rk, &ca, d.pending, d.pending, &cb, text[:pass], text[:pass])
		k.Count += ksm4.PairBlocks
		d.pending = nil
	}
}

// flush runs a held-back pass.
func (d *directs) flush() {
	if d.pending != nil {
		var c [16]byte
		d.ctr.Put(&c)
		ksm4.XORKeyStream(d.st, d.rk, &c, d.pending, d.pending)
		d.pending = nil
	}
}

// gatherBlocks is the number of blocks a batch gathers per kernel call on
// tier st: the whole-pass part of maxGather, so that a call (which expands
// the round keys and builds its counter blocks once) spans as many full
// passes as fit.
func gatherBlocks(st ksm4.Tier) int {
	return maxGather - maxGather%st.PassBlocks()
}

// directBlocks returns how many whole blocks of an n-byte message go
// straight through the CTR kernel so that the rest plus extra counter
// blocks fit in one pass of tier st.
func directBlocks(st ksm4.Tier, n, extra int) int {
	pass := st.PassBlocks()
	full := n / BlockSize
	direct := full - full%pass
	if (n+BlockSize-1)/BlockSize-direct+extra > pass {
		direct = full
	}
	return direct
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
func sealKernel(st ksm4.Tier, gt ghash.Tier, g *GCM, out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte) {
	n := len(plaintext)
	out = out[:n]
	k := gcmctr.New(nonce, 1)
	var ga gather
	ga.add(&k, tag[:], nil) // E_K(J0); k is now inc32(J0)
	direct := directBlocks(st, n, 1) * BlockSize
	if direct > 0 {
		var c [16]byte
		k.Put(&c)
		ksm4.XORKeyStream(st, &g.enc, &c, out[:direct], plaintext[:direct])
		k.Count += uint32(direct / BlockSize)
	}
	if direct < n {
		ga.add(&k, out[direct:], plaintext[direct:])
	}
	ga.flush(st, &g.enc)
	var y [16]byte
	ghashKernel(gt, &g.hkeyAsm, &y, aad, out)
	xorTag(tag, &y)
}

// openKernel is openGeneric on kernel tiers st and gt. The keystream of
// the tag mask and of the blocks after the direct part is computed in one
// ECB call before the tag is checked, but no output is written until it
// has verified.
func openKernel(st ksm4.Tier, gt ghash.Tier, g *GCM, out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	n := len(ciphertext)
	out = out[:n]
	direct := directBlocks(st, n, 1) * BlockSize
	var ks [maxPass * BlockSize]byte
	k := gcmctr.New(nonce, 1)
	nks := 1 + (n-direct+BlockSize-1)/BlockSize
	k.Fill(ks[:BlockSize]) // J0
	var directCtr [16]byte
	k.Put(&directCtr) // inc32(J0)
	k.Count += uint32(direct / BlockSize)
	k.Fill(ks[BlockSize : nks*BlockSize])
	ksm4.EncryptBlocks(st, &g.enc, ks[:nks*BlockSize], ks[:nks*BlockSize])

	var y [16]byte
	ghashKernel(gt, &g.hkeyAsm, &y, aad, ciphertext)
	if !tagValid(tag, &y, ks[:BlockSize]) {
		return false
	}
	if direct > 0 {
		ksm4.XORKeyStream(st, &g.enc, &directCtr, out[:direct], ciphertext[:direct])
	}
	subtle.XORBytes(out[direct:], ciphertext[direct:], ks[BlockSize:])
	return true
}

// sealBatchKernel is sealBatchGeneric on kernel tiers st and gt: the
// direct parts of each packet go through the CTR kernel, and the tag
// masks, leftover blocks and partial blocks of all packets share gathered
// passes. Tags get the mask first and the GHASH last. (Hashing each
// packet as soon as a flush completes it, while it is in L1, instead of in
// a second sweep over the batch, was measured no faster.)
func sealBatchKernel(st ksm4.Tier, gt ghash.Tier, g *GCM, ps []Packet) {
	if len(ps) == 1 {
		p := &ps[0]
		sealKernel(st, gt, g, p.Text, p.Tag, &p.Nonce, p.Text, p.AAD)
		return
	}
	pass, gpass := st.PassBlocks(), gatherBlocks(st)
	var ga gather
	dp := directs{st: st, rk: &g.enc}
	for i := range ps {
		p := &ps[i]
		ctr := gcmctr.New(&p.Nonce, 1)
		if ga.full(gpass) {
			ga.flush(st, &g.enc)
		}
		ga.add(&ctr, p.Tag[:], nil)
		text := p.Text
		direct := len(text) / BlockSize
		direct = (direct - direct%pass) * BlockSize
		if direct > 0 {
			dp.add(&ctr, text[:direct])
		}
		for rest := text[direct:]; len(rest) > 0; {
			if ga.full(gpass) {
				ga.flush(st, &g.enc)
			}
			k := min(len(rest), (gpass-ga.blocks)*BlockSize)
			ga.add(&ctr, rest[:k], rest[:k])
			rest = rest[k:]
		}
	}
	dp.flush()
	ga.flush(st, &g.enc)
	for i := range ps {
		p := &ps[i]
		var y [16]byte
		ghashKernel(gt, &g.hkeyAsm, &y, p.AAD, p.Text)
		xorTag(p.Tag, &y)
	}
}

// openBatchKernel is openBatchGeneric on kernel tiers st and gt. The tag
// masks of up to maxPass packets are computed in one ECB call and every
// tag is checked; only then are the packets that verified decrypted, with
// the same gathering as sealBatchKernel.
func openBatchKernel(st ksm4.Tier, gt ghash.Tier, g *GCM, ps []Packet, ok []bool) {
	if len(ps) == 1 {
		p := &ps[0]
		ok[0] = openKernel(st, gt, g, p.Text, &p.Nonce, p.Text, p.AAD, p.Tag)
		return
	}
	var masks [maxPass * BlockSize]byte
	for base := 0; base < len(ps); base += maxPass {
		chunk := ps[base:min(len(ps), base+maxPass)]
		for i := range chunk {
			k := gcmctr.New(&chunk[i].Nonce, 1) // J0
			k.Put((*[16]byte)(masks[i*BlockSize:]))
		}
		ksm4.EncryptBlocks(st, &g.enc, masks[:len(chunk)*BlockSize], masks[:len(chunk)*BlockSize])
		for i := range chunk {
			p := &chunk[i]
			var y [16]byte
			ghashKernel(gt, &g.hkeyAsm, &y, p.AAD, p.Text)
			ok[base+i] = tagValid(p.Tag, &y, masks[i*BlockSize:])
		}
	}
	pass, gpass := st.PassBlocks(), gatherBlocks(st)
	var ga gather
	dp := directs{st: st, rk: &g.enc}
	for i := range ps {
		if !ok[i] {
			continue
		}
		text := ps[i].Text
		ctr := gcmctr.New(&ps[i].Nonce, 2)
		direct := len(text) / BlockSize
		direct = (direct - direct%pass) * BlockSize
		if direct > 0 {
			dp.add(&ctr, text[:direct])
		}
		for rest := text[direct:]; len(rest) > 0; {
			if ga.full(gpass) {
				ga.flush(st, &g.enc)
			}
			k := min(len(rest), (gpass-ga.blocks)*BlockSize)
			ga.add(&ctr, rest[:k], rest[:k])
			rest = rest[k:]
		}
	}
	dp.flush()
	ga.flush(st, &g.enc)
}
