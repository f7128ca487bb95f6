//go:build amd64 && gc && !purego

package zuc

// Encrypt-then-MAC and verify-then-decrypt of 9–16 packets in one paired
// kernel call: the body keystream of every packet in one 16-lane state,
// the MAC keystream in another, the two states' rounds interleaved.

import (
	"crypto/subtle"

	kzuc "github.com/gmtun/gmtun/kernels/zuc"
)

// pairScratch is the memory of a paired call besides a laneScratch (whose
// state holds the body lanes and whose keystream buffer the MAC
// keystream): the MAC lanes' state and, when opening, the body keystream
// as bytes (kept until the tags have verified).
type pairScratch struct {
	mac kzuc.State16
	ks  [4 * Lanes * mtuLaneWords]byte
}

// pairCall is one paired call: packet j < n has its body bodies[j]
// encrypted under the key and IV of enc lane j and its message msgs[j]
// (header ‖ body) authenticated under those of mac lane j; tags receives
// the tags, or holds the expected ones when opening. The keys are held by
// value, as in etmCall.
type pairCall struct {
	enc, mac     laneKeys
	bodies, msgs *[Lanes][]byte
	n            int
	tags         tagOut
}

// pairFits reports whether etmPair and openPair take n packets: more than
// fit beside their MAC lanes in one 16-lane call (etmLanes), at most one
// call's lanes, on 16-lane kernels with the paired call.
func pairFits(n int) bool {
	return n > Lanes/2 && n <= Lanes && useX16 && kernels16().Paired()
}

// pairStride returns the keystream stride (words per lane, whole blocks)
// of a paired call and the MAC lanes' need, macWords; stride is 0 when a
// packet needs more keystream than the MTU-sized buffers hold or none is
// needed.
func pairStride(c *pairCall) (stride, macWords int) {
	words := 0
	for j := range c.n {
		words = max(words, (len(c.bodies[j])+3)/4)
		if c.msgs[j] != nil {
			macWords = max(macWords, c.mac.macWords(len(c.msgs[j])))
		}
	}
	words = max(words, macWords)
	stride = roundWords(words)
	if words == 0 || stride > mtuLaneWords {
		return 0, 0
	}
	return stride, macWords
}

// pairLoad loads the body lanes into sc's state and the MAC lanes into
// mac.
func pairLoad(c *pairCall, sc *laneScratch, mac *kzuc.State16) {
	k := &sc.k
	k.use(true)
	loadLanes16(&k.s16, &c.enc)
	loadLanes16(mac, &c.mac)
}

// etmPair seals the packets of c (9–16, pairFits) in one paired call
// (kernels/zuc InitXORKeyStreamPair): the bodies are encrypted in the
// kernel while the MAC keystream goes to sc.ks, then the tags are
// computed over header ‖ ciphertext. It reports false, doing nothing,
// when the packets need more keystream than the MTU-sized buffer holds.
func etmPair(c *pairCall, sc *laneScratch, p *pairScratch) bool {
	stride, macWords := pairStride(c)
	if stride == 0 {
		return false
	}
	if sc == nil {
		sc = new(laneScratch)
	}
	var mac *kzuc.State16
	if p != nil {
		mac = &p.mac
	} else {
		mac = new(kzuc.State16)
	}
	pairLoad(c, sc, mac)
	var d [Lanes][]byte
	copy(d[:c.n], c.bodies[:c.n])
	k := &sc.k
	k.s16.InitXORKeyStreamPair(k.k16, &d, &d, mac, sc.ks[:Lanes*stride], stride, macWords)
	var m [Lanes][]byte
	copy(m[:c.n], c.msgs[:c.n])
	c.tags.lanes(&m, sc.ks[:], stride)
	return true
}

// openPair is the open counterpart of etmPair, on one paired keystream call
// (kernels/zuc InitKeyStreamPair): the tags are computed and
// compared in constant time with the expected ones in c.tags, and only
// then is the body keystream XORed into the bodies whose tag matched; ok
// is their mask. The other bodies are not written: their keystream stays
// in the scratch memory.
func openPair(c *pairCall, sc *laneScratch, p *pairScratch) (ok uint32, done bool) {
	stride, _ := pairStride(c)
	if stride == 0 {
		return 0, false
	}
	if sc == nil {
		sc = new(laneScratch)
	}
	if p == nil {
		p = new(pairScratch)
	}
	pairLoad(c, sc, &p.mac)
	k := &sc.k
	var in [Lanes][]byte // the messages the tags will read, prefetched
	copy(in[:c.n], c.msgs[:c.n])
	k.s16.InitKeyStreamPair(k.k16, &p.mac, p.ks[:4*Lanes*stride], sc.ks[:Lanes*stride], stride, stride, &in)
	ok = verifyLanes(c.tags, c.msgs, c.n, sc.ks[:], stride)
	for j := range c.n {
		if ok>>j&1 != 0 {
			b := c.bodies[j]
			subtle.XORBytes(b, b, p.ks[4*j*stride:][:len(b)])
		}
	}
	return ok, true
}
