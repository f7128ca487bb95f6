//go:build amd64 && gc && !purego

package ublock

import (
	"crypto/subtle"

	"github.com/gmtun/gmtun/ciphers/internal/gcmctr"
	kublock "github.com/gmtun/gmtun/kernels/ublock"
)

// GCM on the kernel tiers: GCTR through kernels/ublock, GHASH through
// ciphers/internal/ghash (its own kernels).
//
// A uBlock kernel call runs its blocks in passes of four register pairs
// (Tier.PassBlocks: 16 blocks on AVX2, 32 on the ZMM tiers), and a pass of
// fewer pairs costs nearly as much as a full one (the round's dependency
// chain), so the cost of a message is its number of passes. A message
// therefore takes its blocks in two parts: the largest multiple of the
// pass that fits goes straight through the CTR kernel (counter blocks in
// registers, keystream XORed at the store), and the rest — the leftover
// whole blocks, the final partial block and the tag mask E_K(J0) — goes
// into a gathered kernel call (kublock.XORPieces), one partial pass
// instead of the CTR call's tail pass and a pass for the mask. For a batch
// the gather spans packets, so those rests fill whole passes too: 64 ×
// 1420-byte packets (90 blocks each with the mask) take 360 full AVX2
// passes instead of 64 × (5 full + 1 partial + 1 for the mask).

// maxPassBlocks is the largest pass of any tier in blocks (the ZMM tiers);
// the rest of a message after its direct part is below it plus one.
const maxPassBlocks = 32

// maxPieces is how many pieces a batch gathers per kernel call; it
// flushes early when they run out (only batches of very short packets
// have more than maxPieces pieces in kublock.MaxPieceBlocks blocks). Every
// batch call zeroes one gather, so it is kept no larger.
const maxPieces = 64

// counter is the GCM counter block (gcmctr.Counter) with the kernel
// calls that take their counter blocks from it.
type counter struct{ gcmctr.Counter }

// newCounter returns nonce ‖ BE32(c) (J0 for c = 1, SP 800-38D §7.1).
func newCounter(nonce *[NonceSize]byte, c uint32) counter {
	return counter{gcmctr.New(nonce, c)}
}

// piece sets the counter block and length of *p for the blocks k,
// inc32(k), … of n bytes and advances k past them (inc32 wraps modulo
// 2^32, as the kernel's does); the caller sets Dst and Src. It fills p in
// place: a Piece returned by value would be copied with 16-byte loads of
// the counter block just written with two 8-byte stores, a
// store-forwarding stall (measured: about 15 % of sealing a 64-byte
// packet). The pointers are stored by the callers, directly into their
// own arrays: stored through a pointer, escape analysis would move a
// local destination (a tag mask, scratch memory) to the heap.
func (k *counter) piece(p *kublock.Piece, n int) {
	k.Put(&p.Ctr)
	p.N = n
	k.Count += uint32(kublock.PieceBlocks(n))
}

// direct XORs text[:n] (whole passes) with the keystream from k in the
// CTR kernel, in place or from src into dst, and advances k.
func (k *counter) direct(t kublock.Tier, s *kublock.Schedule, dst, src []byte) {
	var c [16]byte
	k.Put(&c)
	kublock.XORKeyStream(t, s, &c, dst, src)
	k.Count += uint32(len(src) / BlockSize)
}

// directBytes returns how many bytes of an n-byte text go straight
// through the CTR kernel on tier t: its whole passes. The rest is below
// one pass plus a partial block (at most maxPassBlocks blocks).
func directBytes(t kublock.Tier, n int) int {
	pass := t.PassBlocks() * BlockSize
	return n - n%pass
}

// gather collects pieces of one or more messages for one
// kublock.XORPieces call.
type gather struct {
	ps     [maxPieces]kublock.Piece
	pieces int
	blocks int
}

// room returns how many more bytes (whole blocks) the gather takes, 0
// when it must be flushed first.
func (ga *gather) room() int {
	if ga.pieces == len(ga.ps) {
		return 0
	}
	return (kublock.MaxPieceBlocks - ga.blocks) * BlockSize
}

// add queues the counter blocks from k for dst (src nil: the keystream)
// and advances k; the caller keeps it within room().
func (ga *gather) add(k *counter, dst, src []byte) {
	k.piece(&ga.ps[ga.pieces], len(dst))
	ga.ps[ga.pieces].Dst, ga.ps[ga.pieces].Src = &dst[0], nil
	if src != nil {
		ga.ps[ga.pieces].Src = &src[:len(dst)][0]
	}
	ga.pieces++
	ga.blocks += kublock.PieceBlocks(len(dst))
}

// addAll queues dst (from src, in place for a batch) in as many pieces as
// the gather's room needs, flushing when it is full.
func (ga *gather) addAll(t kublock.Tier, s *kublock.Schedule, k *counter, dst, src []byte) {
	for len(dst) > 0 {
		room := ga.room()
		if room == 0 {
			ga.flush(t, s)
			room = ga.room()
		}
		n := min(len(dst), room)
		var sp []byte
		if src != nil {
			sp = src[:n]
			src = src[n:]
		}
		ga.add(k, dst[:n], sp)
		dst = dst[n:]
	}
}

// flush applies every queued piece in one kernel call and empties ga.
func (ga *gather) flush(t kublock.Tier, s *kublock.Schedule) {
	if ga.pieces == 0 {
		return
	}
	kublock.XORPieces(t, s, ga.ps[:ga.pieces])
	ga.pieces, ga.blocks = 0, 0
}

// sealGCM is Seal: on a kernel tier the text's whole passes through the
// CTR kernel and its rest with the tag mask in one gathered call.
func sealGCM(g *GCM, out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte) {
	t, ok := tier()
	if !ok {
		g.sealGeneric(out, tag, nonce, plaintext, aad)
		return
	}
	n := len(plaintext)
	out = out[:n]
	s := &g.s.kernel
	var mask [BlockSize]byte
	k := newCounter(nonce, 1)
	var ps [2]kublock.Piece
	k.piece(&ps[0], BlockSize) // E_K(J0); k is now inc32(J0)
	ps[0].Dst = &mask[0]
	direct := directBytes(t, n)
	if direct > 0 {
		k.direct(t, s, out[:direct], plaintext[:direct])
	}
	np := 1
	if direct < n {
		k.piece(&ps[1], n-direct)
		ps[1].Dst, ps[1].Src = &out[direct], &plaintext[direct]
		np = 2
	}
	kublock.XORPieces(t, s, ps[:np])
	var y [16]byte
	g.hkey.GCMHash(&y, aad, out)
	subtle.XORBytes(tag[:], y[:], mask[:])
	clear(mask[:])
}

// openGCM is Open: on a kernel tier the tag mask and the keystream of
// the text after its direct part come out of one gathered call into
// scratch memory (the plaintext of that part, from the ciphertext); the
// tag is checked, and only then is the direct part decrypted into out and
// the rest copied there.
func openGCM(g *GCM, out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	t, ok := tier()
	if !ok {
		return g.openGeneric(out, nonce, ciphertext, aad, tag)
	}
	n := len(ciphertext)
	s := &g.s.kernel
	direct := directBytes(t, n)
	rest := n - direct
	var buf [(1 + maxPassBlocks) * BlockSize]byte
	k := newCounter(nonce, 1)
	var ps [2]kublock.Piece
	k.piece(&ps[0], BlockSize)
	ps[0].Dst = &buf[0]
	kd := k // inc32(J0): the direct part's first counter block
	k.Count += uint32(direct / BlockSize)
	np := 1
	if rest > 0 {
		k.piece(&ps[1], rest)
		ps[1].Dst, ps[1].Src = &buf[BlockSize], &ciphertext[direct]
		np = 2
	}
	kublock.XORPieces(t, s, ps[:np])
	ok = g.verify((*[BlockSize]byte)(buf[:BlockSize]), ciphertext, aad, tag)
	if ok {
		if direct > 0 {
			kd.direct(t, s, out[:direct], ciphertext[:direct])
		}
		copy(out[direct:n], buf[BlockSize:BlockSize+rest])
	}
	clear(buf[:BlockSize+rest])
	return ok
}

// sealBatchGCM is SealBatch: on a kernel tier each packet's whole passes
// go through the CTR kernel and the tag masks, leftover blocks and
// partial blocks of all packets share gathered passes; the tags get the
// mask first and the GHASH last, once every gather has been flushed.
// (Hashing each packet as soon as its keystream is applied was measured
// no faster on the SM4 side, see ciphers/internal/sm4.)
func sealBatchGCM(g *GCM, ps []Packet) {
	t, ok := tier()
	if !ok {
		g.sealBatchGeneric(ps)
		return
	}
	if len(ps) == 1 {
		p := &ps[0]
		sealGCM(g, p.Text, p.Tag, &p.Nonce, p.Text, p.AAD)
		return
	}
	s := &g.s.kernel
	var ga gather
	for i := range ps {
		p := &ps[i]
		k := newCounter(&p.Nonce, 1)
		if ga.room() == 0 {
			ga.flush(t, s)
		}
		ga.add(&k, p.Tag[:], nil) // E_K(J0) into the tag
		text := p.Text
		direct := directBytes(t, len(text))
		if direct > 0 {
			k.direct(t, s, text[:direct], text[:direct])
		}
		ga.addAll(t, s, &k, text[direct:], text[direct:])
	}
	ga.flush(t, s)
	for i := range ps {
		p := &ps[i]
		var y [16]byte
		g.hkey.GCMHash(&y, p.AAD, p.Text)
		subtle.XORBytes(p.Tag[:], p.Tag[:], y[:])
	}
}

// openBatchGCM is OpenBatch: on a kernel tier the tag masks of up to
// maxPieces packets come out of one ECB call into scratch memory and
// every tag is checked; only then are the packets that verified
// decrypted, with the same direct parts and gathered passes as
// sealBatchGCM. A packet that failed is never written.
func openBatchGCM(g *GCM, ps []Packet, ok []bool) {
	t, tok := tier()
	if !tok {
		g.openBatchGeneric(ps, ok)
		return
	}
	if len(ps) == 1 {
		p := &ps[0]
		ok[0] = openGCM(g, p.Text, &p.Nonce, p.Text, p.AAD, p.Tag)
		return
	}
	s := &g.s.kernel
	var ga gather
	var masks [maxPieces * BlockSize]byte
	for base := 0; base < len(ps); base += maxPieces {
		chunk := ps[base:min(len(ps), base+maxPieces)]
		for i := range chunk {
			k := newCounter(&chunk[i].Nonce, 1)
			k.Put((*[BlockSize]byte)(masks[i*BlockSize:]))
		}
		m := masks[:len(chunk)*BlockSize]
		kublock.EncryptBlocks(t, s, m, m) // the J0 blocks (a pointer into masks in a piece would move it to the heap)
		for i := range chunk {
			p := &chunk[i]
			ok[base+i] = g.verify((*[BlockSize]byte)(masks[i*BlockSize:]), p.Text, p.AAD, p.Tag)
		}
	}
	clear(masks[:min(len(ps), maxPieces)*BlockSize])
	for i := range ps {
		if !ok[i] {
			continue
		}
		text := ps[i].Text
		k := newCounter(&ps[i].Nonce, 2)
		direct := directBytes(t, len(text))
		if direct > 0 {
			k.direct(t, s, text[:direct], text[:direct])
		}
		ga.addAll(t, s, &k, text[direct:], text[direct:])
	}
	ga.flush(t, s)
}
