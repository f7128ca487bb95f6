package zuc

import (
	"crypto/subtle"
	"math/bits"
)

// Batch primitives: one call seals or authenticates up to Lanes packets of
// one key, each with its own IV. They are the units the multi-lane kernels
// of kernels/zuc replace; lanes_amd64.go dispatches them (one switch
// per primitive) and lanes_noasm.go forwards to the *Generic loops below,
// which are also the oracles of the lane tests.
//
// In every primitive, entries i ≥ n of the arrays are ignored, a nil (or,
// for the keystream XOR, empty) entry below n is an idle lane, and all
// lanes share the key. Buffers must not overlap one another.

// Lanes is the number of packets one batch-primitive call takes: the width
// of the widest multi-lane kernel (16 32-bit lanes of AVX-512).
const Lanes = 16

// MAC256TagSize is the tag size of the batch ZUC-256 MAC primitives: the
// 128-bit ZUC-256 MAC ("The ZUC-256 Stream Cipher", 2018, §3.2).
const MAC256TagSize = 16

// XORKeyStreams128Generic sets bufs[i] = bufs[i] ⊕ Z_i in place for every
// lane i < n, Z_i being the keystream of ZUC-128 loaded with key and
// ivs[i], words big-endian: 128-EEA3 of whole bytes (3GPP 128-EEA3 &
// 128-EIA3 Document 1 v1.7 §3.4) when ivs[i] = IVEEA3(...). It is the
// portable, constant-time core (see the package comment): a lone lane on
// State, more lanes eight at a time on the lockstep core (multi.go).
func XORKeyStreams128Generic(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, bufs *[Lanes][]byte, n int) {
	active := nonEmpty(bufs, n)
	if bits.OnesCount32(active) == 1 {
		c := bits.TrailingZeros32(active)
		var st State
		st.Init128(key, &ivs[c])
		XORKeyStreamGeneric(&st, bufs[c], bufs[c])
		return
	}
	multiXOR(active, bufs, func(st *State, c int) { st.load128(key, &ivs[c]) })
}

// nonEmpty returns the mask of the lanes i < n with a non-empty buffer.
func nonEmpty(bufs *[Lanes][]byte, n int) (active uint32) {
	for i := range bufs[:n] {
		if len(bufs[i]) > 0 {
			active |= 1 << i
		}
	}
	return active
}

// multiMAC splits the lanes i < n with a non-nil message into those whose
// MAC needs at most multiMACWords keystream words (returned, words[i]
// set) and the others, which it passes to single(i). A lone short lane is
// passed to single too: the single-lane core is cheaper for it.
func multiMAC(msgs *[Lanes][]byte, n int, macWords func(bytes int) int, words *[Lanes]int, single func(i int)) (active uint32) {
	for i, m := range msgs[:n] {
		if m == nil {
			continue
		}
		if w := macWords(len(m)); w <= multiMACWords {
			words[i] = w
			active |= 1 << i
		} else {
			single(i)
		}
	}
	if bits.OnesCount32(active) == 1 {
		single(bits.TrailingZeros32(active))
		return 0
	}
	return active
}

// eia3Words is the keystream words 128-EIA3 of n bytes takes.
func eia3Words(n int) int { return (8*n+31)/32 + 2 }

// mac256Words is the keystream words the 128-bit ZUC-256 MAC of n bytes
// takes.
func mac256Words(n int) int { return 2*MAC256TagSize/4 + (8*n+31)/32 + 1 }

// EIA3TagsGeneric sets tags[i] to the 128-EIA3 MAC (Document 1 v1.7 §4.4)
// of all 8·len(msgs[i]) bits of msgs[i] for every lane i < n with a
// non-nil message, under ZUC-128 loaded with key and ivs[i]
// (ivs[i] = IVEIA3(...)). Tags of idle lanes are left unchanged.
func EIA3TagsGeneric(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, msgs *[Lanes][]byte, tags *[Lanes]uint32, n int) {
	var words [Lanes]int
	active := multiMAC(msgs, n, eia3Words, &words, func(i int) {
		var st State
		st.Init128(key, &ivs[i])
		tags[i] = EIA3Generic(&st, msgs[i], 8*len(msgs[i]))
	})
	multiKeyWords(active, &words, func(st *State, c int) { st.load128(key, &ivs[c]) }, func(c int, ks []uint32) {
		tags[c] = eia3(&wordSource{ks: ks}, msgs[c], 8*len(msgs[c]))
	})
}

// XORKeyStreams256Generic sets bufs[i] = bufs[i] ⊕ Z_i in place for every
// lane i < n, Z_i being the ZUC-256 keystream ("The ZUC-256 Stream
// Cipher", 2018, §3.1, keystream constants D256(0)) of key and ivs[i],
// words big-endian.
func XORKeyStreams256Generic(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bufs *[Lanes][]byte, n int) {
	d := &d256[0]
	active := nonEmpty(bufs, n)
	if bits.OnesCount32(active) == 1 {
		c := bits.TrailingZeros32(active)
		var st State
		st.Init256(key, &ivs[c], d)
		XORKeyStreamGeneric(&st, bufs[c], bufs[c])
		return
	}
	multiXOR(active, bufs, func(st *State, c int) { st.load256(key, &ivs[c], d) })
}

// MAC256TagsGeneric sets tags[i] to the 128-bit ZUC-256 MAC (2018 paper
// §3.2, constants D256(16)) of all 8·len(msgs[i]) bits of msgs[i] under
// key and ivs[i], for every lane i < n with a non-nil message. Tags of
// idle lanes are left unchanged.
func MAC256TagsGeneric(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, msgs *[Lanes][]byte, tags *[Lanes][MAC256TagSize]byte, n int) {
	d := &d256[3]
	var words [Lanes]int
	active := multiMAC(msgs, n, mac256Words, &words, func(i int) {
		var st State
		st.Init256(key, &ivs[i], d)
		MAC256Generic(&st, msgs[i], 8*len(msgs[i]), tags[i][:])
	})
	multiKeyWords(active, &words, func(st *State, c int) { st.load256(key, &ivs[c], d) }, func(c int, ks []uint32) {
		mac256(&wordSource{ks: ks}, msgs[c], 8*len(msgs[c]), tags[c][:])
	})
}

// EncryptThenMAC128Generic is XORKeyStreams128Generic(encKey, eea, bodies,
// n) followed by EIA3TagsGeneric(macKey, eia, msgs, tags, n): the seal
// step of an encrypt-then-MAC packet, where msgs[i] (header ‖ body)
// contains bodies[i], so the tag covers the ciphertext.
func EncryptThenMAC128Generic(encKey, macKey *[KeySize128]byte, eea, eia *[Lanes][IVSize128]byte, bodies, msgs *[Lanes][]byte, tags *[Lanes]uint32, n int) {
	XORKeyStreams128Generic(encKey, eea, bodies, n)
	EIA3TagsGeneric(macKey, eia, msgs, tags, n)
}

// EncryptThenMAC256Generic is XORKeyStreams256Generic(encKey, ivs, bodies,
// n) followed by MAC256TagsGeneric(macKey, ivs, msgs, tags, n) (see
// EncryptThenMAC128Generic).
func EncryptThenMAC256Generic(encKey, macKey *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bodies, msgs *[Lanes][]byte, tags *[Lanes][MAC256TagSize]byte, n int) {
	XORKeyStreams256Generic(encKey, ivs, bodies, n)
	MAC256TagsGeneric(macKey, ivs, msgs, tags, n)
}

// VerifyThenDecrypt128Generic is the open step of an encrypt-then-MAC
// packet: it computes the 128-EIA3 tag of every lane i < n with a
// non-nil message (EIA3TagsGeneric(macKey, eia, msgs, ...)), compares it
// in constant time with want[i], and only for the lanes whose tag matches
// XORs the 128-EEA3 keystream into bodies[i] (XORKeyStreams128Generic
// with encKey and eea). It returns the mask of those lanes (bit i for lane
// i); the bodies of the other lanes are left untouched. msgs[i]
// (header ‖ body) contains bodies[i].
func VerifyThenDecrypt128Generic(encKey, macKey *[KeySize128]byte, eea, eia *[Lanes][IVSize128]byte, bodies, msgs *[Lanes][]byte, want *[Lanes]uint32, n int) (ok uint32) {
	var tags [Lanes]uint32
	EIA3TagsGeneric(macKey, eia, msgs, &tags, n)
	ok = verify128(msgs, &tags, want, n)
	verified := verifiedBodies(bodies, ok, n)
	XORKeyStreams128Generic(encKey, eea, &verified, n)
	return ok
}

// VerifyThenDecrypt256Generic is VerifyThenDecrypt128Generic for
// ZUC-256: the 128-bit MAC (MAC256TagsGeneric) checked against want[i],
// then the ZUC-256 keystream (XORKeyStreams256Generic) over the bodies of
// the lanes that verified, both under ivs.
func VerifyThenDecrypt256Generic(encKey, macKey *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bodies, msgs *[Lanes][]byte, want *[Lanes][MAC256TagSize]byte, n int) (ok uint32) {
	var tags [Lanes][MAC256TagSize]byte
	MAC256TagsGeneric(macKey, ivs, msgs, &tags, n)
	ok = verify256(msgs, &tags, want, n)
	verified := verifiedBodies(bodies, ok, n)
	XORKeyStreams256Generic(encKey, ivs, &verified, n)
	return ok
}

// verify128 returns the mask of the lanes i < n with a non-nil message
// whose tag equals want[i], compared in constant time.
func verify128(msgs *[Lanes][]byte, tags, want *[Lanes]uint32, n int) (ok uint32) {
	for i := range msgs[:n] {
		if msgs[i] != nil {
			ok |= uint32(subtle.ConstantTimeEq(int32(tags[i]), int32(want[i]))) << i
		}
	}
	return ok
}

// verify256 is verify128 for 128-bit tags.
func verify256(msgs *[Lanes][]byte, tags, want *[Lanes][MAC256TagSize]byte, n int) (ok uint32) {
	for i := range msgs[:n] {
		if msgs[i] != nil {
			ok |= uint32(subtle.ConstantTimeCompare(tags[i][:], want[i][:])) << i
		}
	}
	return ok
}

// verifiedBodies returns the bodies of the lanes in ok, nil for the others.
func verifiedBodies(bodies *[Lanes][]byte, ok uint32, n int) (v [Lanes][]byte) {
	for i := range bodies[:n] {
		if ok>>i&1 != 0 {
			v[i] = bodies[i]
		}
	}
	return v
}
