//go:build amd64 && gc && !purego

package zuc

// The MACs on the lane kernels: keystream of all lanes in one call, tags
// from the carry-less multiply kernels, long messages in chunks.

import (
	"encoding/binary"
	"math/bits"

	kzuc "github.com/gmtun/gmtun/kernels/zuc"
)

// macLanes is the lane path of the MACs: one kernel call generates the
// keystream of every active lane (up to the longest lane's need), then the
// carry-less multiply kernel computes each tag from its message and
// keystream words; tags says which MAC. A lone message runs the same way (one lane
// filled); messages too long for the keystream buffer run in chunks
// (macChunks), still on the lane kernels.
func macLanes(wide bool, lk *laneKeys, msgs *[Lanes][]byte, n int, tags tagOut, sc *laneScratch) {
	var active uint32
	var words [2]int // per half of the lanes
	stride := 0
	for c, msg := range msgs[:n] {
		if msg == nil {
			continue
		}
		w := lk.macWords(len(msg))
		active |= 1 << c
		words[c/8] = max(words[c/8], w)
		stride = max(stride, roundWords(w))
	}
	if active == 0 {
		return
	}
	// Lane state and keystream (up to 36 KiB) live on the stack: a Key is
	// shared by many workers, and zeroing them costs a few percent of a
	// call on MTU-sized packets, without the allocations a sync.Pool
	// makes after every GC. MTU-sized messages take a buffer a quarter
	// smaller (less to zero, less L1 to evict).
	if sc == nil {
		sc = new(laneScratch)
	}
	k := &sc.k
	k.use(narrow(wide, active))
	k.loadActive(active, lk)
	if stride <= mtuLaneWords {
		macTags(k, lk, sc.ks[:], stride, active, &words, msgs, tags)
		return
	}
	var ksBuf [Lanes * maxLaneWords]uint32
	if stride <= maxLaneWords {
		macTags(k, lk, ksBuf[:], stride, active, &words, msgs, tags)
		return
	}
	macChunks(k, lk, ksBuf[:], active, &words, msgs, tags)
}

// Long MACs run in chunks of the keystream buffer: each lane's maxLaneWords
// words hold the keystream words [j·chunkWords, j·chunkWords+maxLaneWords)
// while message chunk j (chunkWords words) is processed. Between chunks the
// last carryWords words of every lane move to the front and the lane
// kernels, whose KeyStream continues the lane state, fill the rest.
const (
	// carryWords is the overlap of consecutive chunks: at least the
	// keystream a MAC reads past its message (2 words for 128-EIA3, 8 for
	// the 128-bit ZUC-256 MAC), rounded to a kernel block so every later
	// fill starts block-aligned.
	carryWords = kzuc.BlockWords
	// chunkWords is the message words per chunk: a multiple of 4, so a
	// chunk is whole 128-bit blocks of the MAC kernels.
	chunkWords = maxLaneWords - carryWords
	// chunkBytes is chunkWords in bytes.
	chunkBytes = 4 * chunkWords
)

// macChunks is macTags for calls whose longest message needs more than
// maxLaneWords keystream words: the loaded active lanes are initialised,
// and each active half of the lanes generates only the keystream its
// longest message needs, chunk by chunk into ks (maxLaneWords words per
// lane); every lane's tag is accumulated chunk by chunk (macChunk) and
// stored once its message ends.
func macChunks(k *kstate, lk *laneKeys, ks []uint32, active uint32, words *[2]int, msgs *[Lanes][]byte, tags tagOut) {
	const stride = maxLaneWords
	k.init(active)
	gen := [2]int{min(words[0], stride), min(words[1], stride)}
	k.keyStream(ks, stride, &gen)
	have := stride // keystream words generated per lane still running
	var acc [Lanes][4]uint32
	for at := 0; ; at += chunkBytes {
		first := at == 0
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			lane := ks[c*stride : (c+1)*stride]
			if macChunk(lk, msgs[c][at:], lane, first, tags.isEIA3(), &acc[c]) {
				tags.put(&acc[c], c)
				active &^= 1 << c
			}
		}
		if active == 0 {
			return
		}
		// The lanes left need keystream past this chunk's buffer: slide
		// and refill the halves they are in (the invariant: a running
		// lane's buffer is always full, so have = at/4 + stride words).
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			lane := ks[c*stride : (c+1)*stride]
			copy(lane[:carryWords], lane[chunkWords:])
		}
		var more [2]int
		for h := range more {
			if active>>(8*h)&0xff != 0 {
				more[h] = min(chunkWords, words[h]-have)
			}
		}
		k.keyStream(ks[carryWords:], stride, &more)
		have += chunkWords
	}
}

// macChunk accumulates into acc the MAC terms of msg, the rest of a
// message from a chunk boundary, from the keystream words ks that start
// at the same message word: the whole rest when its MAC keystream fits ks
// (done), else its first chunkBytes bytes.
// first tells whether msg starts the message. It is constant-time: the
// branches depend only on lengths.
//
// Both MACs XOR one keystream window per set message bit (128-EIA3,
// Document 1 v1.7 §4.4; ZUC-256 MAC, 2018, §3.2), with windows at bit
// offsets relative to the message bit, so the tag of a message split at
// a word boundary is the XOR of the kernel tags of its pieces, each taken
// on the keystream from its own first word, once the terms that belong
// only to the whole message are cancelled: the final-window terms of
// every piece but the last (for 128-EIA3 the window at the piece end and
// z_L, both whole words there), and for the ZUC-256 MAC the initial term
// W_0 of every piece but the first.
func macChunk(lk *laneKeys, msg []byte, ks []uint32, first, eia bool, acc *[4]uint32) (done bool) {
	done = lk.macWords(len(msg)) <= len(ks)
	if !done {
		msg = msg[:chunkBytes]
	}
	w := lk.macWords(len(msg))
	if eia {
		t := kzuc.EIA3Tag(msg, 8*len(msg), ks[:w])
		if !done {
			t ^= ks[chunkWords] ^ ks[chunkWords+1]
		}
		acc[0] ^= t
		return done
	}
	var tag [MAC256TagSize]byte
	kzuc.MAC256Tag(msg, 8*len(msg), ks[:w], tag[:])
	const n = MAC256TagSize / 4 // tag words; the first message window starts at word n
	for q := range n {
		t := binary.BigEndian.Uint32(tag[4*q:])
		if !first {
			t ^= ks[q]
		}
		if !done {
			t ^= ks[n+chunkWords+q]
		}
		acc[q] ^= t
	}
	return done
}

// macTags generates the MAC keystream of the loaded active lanes into ks
// (stride words per lane) and computes their tags.
func macTags(k *kstate, lk *laneKeys, ks []uint32, stride int, active uint32, words *[2]int, msgs *[Lanes][]byte, tags tagOut) {
	var m [Lanes][]byte
	for a := active; a != 0; a &= a - 1 {
		c := bits.TrailingZeros32(a)
		m[c] = msgs[c]
	}
	k.initKeyStream(ks, stride, active, words, &m)
	tags.lanes(&m, ks, stride)
}
