//go:build amd64 && gc && !purego

package zuc

// Encrypt-then-MAC and verify-then-decrypt in one lane call: the body
// keystream and the MAC keystream of every packet side by side.

import (
	"math/bits"

	kzuc "github.com/gmtun/gmtun/kernels/zuc"
)

// etm8Fits reports whether etm8 takes n packets on this CPU.
func etm8Fits(n int) bool {
	return lanesOn() && n >= 1 && n <= etm8Max && x8Supported()
}

// etm8Max is the most packets etm8 seals in one call: an encryption lane
// and a MAC lane each in the 8 lanes of the AVX2 kernels.
const etm8Max = kzuc.Lanes8 / 2

// etm8Scratch is the memory of an etm8 call without a Scratch, for
// MTU-sized packets; etm8LongScratch for packets up to about 2 KiB.
type etm8Scratch struct {
	st kzuc.State8
	ks [kzuc.Lanes8 * mtuLaneWords]uint32
}

type etm8LongScratch struct {
	st kzuc.State8
	ks [kzuc.Lanes8 * maxLaneWords]uint32
}

// etm8Words returns the keystream words per lane an etm8 or open8 call
// of these packets needs (etm8Stream).
func etm8Words(c *etmCall) (words int) {
	for j := range c.n {
		words = max(words, (len(c.bodies[j])+3)/4)
		if c.msgs[j] != nil {
			words = max(words, c.lk.macWords(len(c.msgs[j])))
		}
	}
	return words
}

// etm8With runs etm8 on the memory of sc, or on fresh memory (an
// etm8Scratch, a third of a laneScratch, or for packets over the MTU an
// etm8LongScratch) if sc is nil.
func etm8With(sc *laneScratch, c *etmCall) bool {
	w := etm8Words(c)
	if w == 0 {
		return false
	}
	if sc != nil {
		if w <= len(sc.ks)/kzuc.Lanes8 {
			return etm8(c, &sc.k.s8[0], sc.ks[:])
		}
		etm8Chunks(c, &sc.k.s8[0], sc.ks[:kzuc.Lanes8*maxLaneWords])
		return true
	}
	if w <= mtuLaneWords {
		e := new(etm8Scratch)
		return etm8(c, &e.st, e.ks[:])
	}
	e := new(etm8LongScratch)
	if w <= maxLaneWords {
		return etm8(c, &e.st, e.ks[:])
	}
	etm8Chunks(c, &e.st, e.ks[:])
	return true
}

// open8With runs open8 on the memory of sc, or on fresh memory if sc is
// nil (as etm8With).
func open8With(sc *laneScratch, c *etmCall) (uint32, bool) {
	if sc != nil {
		return open8(c, &sc.k.s8[0], sc.ks[:])
	}
	switch w := etm8Words(c); {
	case w <= mtuLaneWords:
		e := new(etm8Scratch)
		return open8(c, &e.st, e.ks[:])
	case w <= maxLaneWords:
		e := new(etm8LongScratch)
		return open8(c, &e.st, e.ks[:])
	}
	return 0, false
}

// etm8 seals 1..etm8Max packets in one 8-lane call (keys and IVs as in
// etmLanes: c.lk lanes j and Lanes/2+j): state lane j generates the
// keystream of bodies[j], lane etm8Max+j the MAC keystream of msgs[j], as
// words (etm8Stream), then the bodies are encrypted in Go and only then
// the tags computed (encrypt-then-MAC). A lone packet so costs one 8-lane
// call instead of two single-lane keystreams, and up to etm8Max packets
// about 2/3 of a 16-lane call (the per-round dependency chain, not the
// width, bounds both; see narrow). It reports false, doing nothing, when
// a packet needs more keystream than the buffer holds or there is no
// keystream to generate. st is the lane state, ks the keystream buffer
// (Lanes8 lanes of len(ks)/Lanes8 words at most).
func etm8(c *etmCall, st *kzuc.State8, ks []uint32) bool {
	var need [kzuc.Lanes8]int
	words := etm8Stream(c, &need, st, ks)
	if words == 0 {
		return false
	}
	for j := range c.n {
		xorWords(c.bodies[j], ks[j*words:j*words+need[j]])
	}
	var m [Lanes][]byte // message j's keystream is lane etm8Max+j's
	copy(m[:c.n], c.msgs[:c.n])
	c.tags.lanes(&m, ks[etm8Max*words:], words)
	return true
}

// open8 is the open counterpart of etm8 (same lanes, keys, limits and
// report): one 8-lane call generates the keystream of every body and the
// MAC keystream of every message into ks, the tags are computed and
// compared in constant time with the expected ones in c.tags, and only
// then is the keystream XORed into the bodies of the lanes whose tag
// matched; ok is their mask. The bodies of the other lanes are not
// written: their keystream stays in ks.
func open8(c *etmCall, st *kzuc.State8, ks []uint32) (ok uint32, done bool) {
	var need [kzuc.Lanes8]int
	words := etm8Stream(c, &need, st, ks)
	if words == 0 {
		return 0, false
	}
	ok = c.verifyTags(ks[etm8Max*words:], words) // message j's keystream is lane etm8Max+j's
	for j := range c.n {
		if ok>>j&1 != 0 {
			xorWords(c.bodies[j], ks[j*words:j*words+need[j]])
		}
	}
	return ok, true
}

// verifyTags computes the tags of c's messages, message j from its MAC
// keystream at ks[j·stride:], and compares them in constant time with the
// expected ones in c.tags: ok is the mask of the packets that verified.
func (c *etmCall) verifyTags(ks []uint32, stride int) (ok uint32) {
	return verifyLanes(c.tags, c.msgs, c.n, ks, stride)
}

// verifyLanes is etmCall.verifyTags for the n messages of msgs with the
// expected tags want.
func verifyLanes(want tagOut, msgs *[Lanes][]byte, n int, ks []uint32, stride int) uint32 {
	var m [Lanes][]byte
	copy(m[:n], msgs[:n])
	if want.isEIA3() {
		var tags [Lanes]uint32
		tagOut{eia: &tags}.lanes(&m, ks, stride)
		return verify128(&m, &tags, want.eia, n)
	}
	var tags [Lanes][MAC256TagSize]byte
	tagOut{mac: &tags}.lanes(&m, ks, stride)
	return verify256(&m, &tags, want.mac, n)
}

// etm8Stream is the kernel part of etm8 and open8: it loads the 8-lane
// state (load8) and writes words keystream words of every state lane l to
// ks[l·words:], need[l] of which the lane uses. It returns words, or 0,
// doing nothing, when there is no keystream to generate or a lane needs
// more than len(ks)/Lanes8 words.
func etm8Stream(c *etmCall, need *[kzuc.Lanes8]int, st *kzuc.State8, ks []uint32) (words int) {
	for j := range c.n {
		need[j] = (len(c.bodies[j]) + 3) / 4
		if c.msgs[j] != nil {
			need[etm8Max+j] = c.lk.macWords(len(c.msgs[j]))
		}
		words = max(words, need[j], need[etm8Max+j])
	}
	if words == 0 || words > len(ks)/kzuc.Lanes8 {
		return 0
	}
	load8(st, &c.lk, c.n)
	k8 := kernels8()
	st.Init(k8)
	st.KeyStream(k8, ks[:kzuc.Lanes8*words], words, words)
	return words
}

// load8 loads, for j < n, state lane j with the key and IV of lk lane j
// (encryption) and lane etm8Max+j with those of lk lane Lanes/2+j (MAC).
func load8(st *kzuc.State8, lk *laneKeys, n int) {
	const half = Lanes / 2
	for j := range n {
		if lk.iv128 != nil {
			st.LoadZUC128(j, lk.k128[0], &lk.iv128[j])
			st.LoadZUC128(etm8Max+j, lk.k128[1], &lk.iv128[half+j])
		} else {
			st.LoadZUC256(j, lk.k256[0], &lk.iv256[j], lk.d[0])
			st.LoadZUC256(etm8Max+j, lk.k256[1], &lk.iv256[half+j], lk.d[1])
		}
	}
}

// etm8Chunks is etm8 for packets whose keystream exceeds maxLaneWords
// words: the same lanes of one 8-lane state run chunk by chunk through ks
// (maxLaneWords words per lane, slid as in macChunks). In each chunk the
// bodies are encrypted first, then the MACs take the chunk's message
// words; a MAC finishes only in a chunk whose message rest fits
// chunkBytes, so every message byte it reads is already ciphertext (a
// body starts at or after its message's start).
func etm8Chunks(c *etmCall, st *kzuc.State8, ks []uint32) {
	const stride = maxLaneWords
	lk, bodies, msgs, k8 := &c.lk, c.bodies, c.msgs, kernels8()
	var encOn, macOn uint32
	for j := range c.n {
		if len(bodies[j]) > 0 {
			encOn |= 1 << j
		}
		if msgs[j] != nil {
			macOn |= 1 << j
		}
	}
	load8(st, lk, c.n)
	st.Init(k8)
	st.KeyStream(k8, ks, stride, stride)
	words, have := etm8Words(c), stride
	limit := chunkWords + lk.macWords(0) // a MAC ends only when its rest fits one chunk
	var acc [etm8Max][4]uint32
	for at := 0; ; at += chunkBytes {
		for a := encOn; a != 0; a &= a - 1 {
			j := bits.TrailingZeros32(a)
			b := bodies[j][at:]
			if len(b) <= chunkBytes {
				encOn &^= 1 << j
			} else {
				b = b[:chunkBytes]
			}
			xorWords(b, ks[j*stride:])
		}
		for a := macOn; a != 0; a &= a - 1 {
			j := bits.TrailingZeros32(a)
			lane := ks[(etm8Max+j)*stride : (etm8Max+j)*stride+limit]
			if macChunk(lk, msgs[j][at:], lane, at == 0, c.tags.isEIA3(), &acc[j]) {
				c.tags.put(&acc[j], j)
				macOn &^= 1 << j
			}
		}
		if encOn|macOn == 0 {
			return
		}
		for l := range kzuc.Lanes8 {
			lane := ks[l*stride : (l+1)*stride]
			copy(lane[:carryWords], lane[chunkWords:])
		}
		// Only the words some lane still needs (the words past them are
		// never read).
		more := max(0, min(chunkWords, words-have))
		st.KeyStream(k8, ks[carryWords:], stride, more)
		have += chunkWords
	}
}

// etmLanes seals 2..Lanes/2 packets in one 16-lane call, so half-full
// batches do not pay for two half-empty calls: lane j generates the
// keystream of bodies[j] and lane Lanes/2+j the MAC keystream of msgs[j],
// all as words (the KeyStream kernel), then the bodies are encrypted in Go
// and only then are the tags computed, as encrypt-then-MAC requires (the
// keys and IVs of c.lk: encryption in lanes 0–7, MAC in lanes 8–15).
// Packets longer than the keystream buffer make the call fall back to
// separate keystream and MAC calls.
func etmLanes(c *etmCall, sc *laneScratch) {
	const half = Lanes / 2
	lk, bodies, msgs, n := &c.lk, c.bodies, c.msgs, c.n
	var need [Lanes]int // keystream words per lane
	stride := 0
	for j := range n {
		need[j] = (len(bodies[j]) + 3) / 4
		if msgs[j] != nil {
			need[half+j] = lk.macWords(len(msgs[j]))
		}
		stride = max(stride, roundWords(max(need[j], need[half+j])))
	}
	if stride > maxLaneWords {
		// Separate calls, each lane half keyed as in lk.
		enc, mac := *lk, *lk
		enc.k128[1], enc.k256[1], enc.d[1] = enc.k128[0], enc.k256[0], enc.d[0]
		mac.k128[0], mac.k256[0], mac.d[0] = mac.k128[1], mac.k256[1], mac.d[1]
		if lk.iv128 != nil {
			var ivs [Lanes][IVSize128]byte
			copy(ivs[:n], lk.iv128[half:half+n])
			mac.iv128 = &ivs
		}
		var k *kstate
		if sc != nil {
			k = &sc.k
		}
		xorLanes(true, &enc, bodies, n, k)
		macLanes(true, &mac, msgs, n, c.tags, sc)
		return
	}
	// As in macLanes: the MTU-sized keystream buffer of the scratch, a
	// larger one on the stack.
	if sc == nil {
		sc = new(laneScratch)
	}
	if stride <= mtuLaneWords {
		etmRun(c, sc.ks[:], stride, &need, &sc.k)
		return
	}
	var ksBuf [Lanes * maxLaneWords]uint32
	etmRun(c, ksBuf[:], stride, &need, &sc.k)
}

// etmRun is the kernel call of etmLanes and the work in Go after it, with
// keystream buffer ks (stride words per lane, need[c] of them used by
// lane c) and lane state k.
func etmRun(c *etmCall, ks []uint32, stride int, need *[Lanes]int, k *kstate) {
	const half = Lanes / 2
	k.use(true)
	var active uint32
	for l, w := range need {
		if w > 0 {
			active |= 1 << l
		}
	}
	k.loadActive(active, &c.lk)
	var in [Lanes][]byte // lane j encrypts body j, lane half+j authenticates message j
	copy(in[:c.n], c.bodies[:c.n])
	copy(in[half:half+c.n], c.msgs[:c.n])
	k.initKeyStream(ks, stride, active, &[2]int{stride, stride}, &in)
	for j := range c.n {
		xorWords(c.bodies[j], ks[j*stride:j*stride+need[j]])
	}
	var m [Lanes][]byte // message j's keystream is lane half+j's
	copy(m[:c.n], c.msgs[:c.n])
	c.tags.lanes(&m, ks[half*stride:], stride)
}
