//go:build amd64 && gc && !purego

package zuc

// The keystream XOR on the lane kernels.

import (
	"encoding/binary"
	"math/bits"

	kzuc "github.com/gmtun/gmtun/kernels/zuc"
)

// xorLanes is the lane path of the keystream XOR: bufs[c] ⊕= keystream
// of lane c, in place, for the lanes c < n with a non-empty buffer. Every
// packet, a lone one included, runs on the lane kernels (one lane filled
// is fine): the portable core is never used here, so the table-free,
// branch-free kernels carry every keystream word. On the 16-lane kernels
// one call initialises all lanes and XORs each up to its own length. On
// the 8-lane kernels all active lanes run together up to the shortest
// remaining whole-word length, the finished lanes drop out and the rest
// continue (the equal lengths of TSO segments take one step); a word in
// which a lane ends is one KeyStream word for every running lane, XORed in
// Go.
func xorLanes(wide bool, lk *laneKeys, bufs *[Lanes][]byte, n int, k *kstate) {
	var active uint32
	for i := range bufs[:n] {
		if len(bufs[i]) > 0 {
			active |= 1 << i
		}
	}
	if active == 0 {
		return
	}
	if k == nil {
		k = new(kstate)
	}
	k.use(narrow(wide, active))
	k.loadActive(active, lk)
	if k.wide {
		// One kernel call: initialisation, then every lane up to its own
		// length (masked stores for the last partial block).
		var d [kzuc.Lanes16][]byte
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			d[c] = bufs[c]
		}
		k.s16.InitXORKeyStream(k.k16, &d, &d)
		return
	}
	k.init(active)
	if words, mixed := mixedLengths(bufs, active); mixed && words <= maxLaneWords {
		// Many different lengths: one keystream call up to the longest
		// lane, then the XOR in Go (≈0.1 ns/B), instead of a kernel call
		// and a partial block per distinct length.
		var ksBuf [Lanes * maxLaneWords]uint32
		var halves [2]int // an 8-lane state without active lanes is not run
		if active&0xff != 0 {
			halves[0] = words
		}
		if active>>8 != 0 {
			halves[1] = words
		}
		k.keyStream(ksBuf[:], words, &halves)
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			xorWords(bufs[c], ksBuf[c*words:(c+1)*words])
		}
		return
	}
	for at := 0; ; {
		m := int(^uint(0) >> 1)
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			rem := len(bufs[c]) - at
			if rem <= 0 {
				active &^= 1 << c
				continue
			}
			m = min(m, rem)
		}
		if active == 0 {
			return
		}
		if m >= 4 {
			k.xor(bufs, active, at, m&^3)
			at += m &^ 3
			continue
		}
		// A lane ends within the next word: one keystream word for every
		// lane of the running halves, XORed in Go, keeps the lanes in step.
		var w [Lanes]uint32
		var halves [2]int
		if active&0xff != 0 {
			halves[0] = 1
		}
		if active>>8 != 0 {
			halves[1] = 1
		}
		k.keyStream(w[:], 1, &halves)
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			b := bufs[c][at:]
			xorWord(b[:min(4, len(b))], w[c])
		}
		at += 4
	}
}

// mixedLengths returns the keystream words the longest active lane needs
// and whether the active lanes have more than two distinct lengths (equal
// lengths, or a TSO burst and its shorter last segment, take the staged
// XOR kernel path).
func mixedLengths(bufs *[Lanes][]byte, active uint32) (words int, mixed bool) {
	l0, l1 := -1, -1
	for a := active; a != 0; a &= a - 1 {
		l := len(bufs[bits.TrailingZeros32(a)])
		words = max(words, (l+3)/4)
		switch {
		case l == l0 || l == l1:
		case l0 < 0:
			l0 = l
		case l1 < 0:
			l1 = l
		default:
			mixed = true
		}
	}
	return words, mixed
}

// xorWord XORs the first len(b) ≤ 4 bytes of the big-endian keystream
// word w into b.
func xorWord(b []byte, w uint32) {
	for i := range b {
		b[i] ^= byte(w >> (24 - 8*uint(i)))
	}
}

// xorWords XORs the keystream words ks, big-endian, into b; ks holds at
// least ⌈len(b)/4⌉ words.
func xorWords(b []byte, ks []uint32) {
	for len(b) >= 16 && len(ks) >= 4 {
		x := binary.BigEndian.Uint64(b) ^ (uint64(ks[0])<<32 | uint64(ks[1]))
		y := binary.BigEndian.Uint64(b[8:]) ^ (uint64(ks[2])<<32 | uint64(ks[3]))
		binary.BigEndian.PutUint64(b, x)
		binary.BigEndian.PutUint64(b[8:], y)
		b, ks = b[16:], ks[4:]
	}
	for len(b) > 0 {
		xorWord(b[:min(4, len(b))], ks[0])
		b, ks = b[min(4, len(b)):], ks[1:]
	}
}
