//go:build amd64 && gc && !purego

package zuc

// The lane state of one call on the 16- or the 8-lane kernels.

import (
	"math/bits"

	kzuc "github.com/gmtun/gmtun/kernels/zuc"
)

// kstate is the lane state of one call: 16 lanes in one x16 kernel state
// (wide) or in two x8 states (lanes 0–7 and 8–15; a half without active
// lanes is not run), chosen by use once per call. Every method takes the mask of active lanes; idle
// lanes compute on stale data harmlessly.
type kstate struct {
	wide bool
	k16  kzuc.Kernels16 // the 16-lane kernels, when wide
	k8   kzuc.Kernels8  // the 8-lane kernels, when !wide
	s16  kzuc.State16
	s8   [2]kzuc.State8
}

// use selects the kernels of the next call: the 16-lane state if wide,
// else the two 8-lane states, on the kernels of the enabled tiers.
func (k *kstate) use(wide bool) {
	k.wide = wide
	k.k16 = kernels16()
	k.k8 = kernels8()
}

// load loads lane c with its key and IV (GB/T 33133.1-2016 §6.1; ZUC-256
// 2018 §3.1).
func (k *kstate) load(c int, lk *laneKeys) {
	h := c / 8
	switch {
	case k.wide && lk.iv128 != nil:
		k.s16.LoadZUC128(c, lk.k128[h], &lk.iv128[c])
	case k.wide:
		k.s16.LoadZUC256(c, lk.k256[h], &lk.iv256[c], lk.d[h])
	case lk.iv128 != nil:
		k.s8[h].LoadZUC128(c%8, lk.k128[h], &lk.iv128[c])
	default:
		k.s8[h].LoadZUC256(c%8, lk.k256[h], &lk.iv256[c], lk.d[h])
	}
}

// loadActive loads the active lanes; the 16-lane state loads all lanes at
// once (idle lanes get their slot's IV, harmlessly).
func (k *kstate) loadActive(active uint32, lk *laneKeys) {
	if k.wide {
		loadLanes16(&k.s16, lk)
		return
	}
	for a := active; a != 0; a &= a - 1 {
		k.load(bits.TrailingZeros32(a), lk)
	}
}

// loadLanes16 loads all 16 lanes of st with the keys and IVs of lk.
func loadLanes16(st *kzuc.State16, lk *laneKeys) {
	if lk.iv128 != nil {
		st.LoadZUC128Lanes(lk.k128[0], lk.k128[1], lk.iv128)
	} else {
		st.LoadZUC256Lanes(lk.k256[0], lk.k256[1], lk.iv256, lk.d[0], lk.d[1])
	}
}

// init runs the initialisation rounds of the active lanes' kernel states.
func (k *kstate) init(active uint32) {
	if k.wide {
		k.s16.Init(k.k16)
		return
	}
	if active&0xff != 0 {
		k.s8[0].Init(k.k8)
	}
	if active>>8 != 0 {
		k.s8[1].Init(k.k8)
	}
}

// xor XORs m bytes of keystream (m a multiple of 4) into bufs[c][at:] of
// every active lane c; every lane of a run half advances by m/4 words.
func (k *kstate) xor(bufs *[Lanes][]byte, active uint32, at, m int) {
	if k.wide {
		var d [kzuc.Lanes16][]byte
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			d[c] = bufs[c][at : at+m]
		}
		k.s16.XORKeyStream(k.k16, &d, &d, m)
		return
	}
	for h := range k.s8 {
		half := active >> (8 * h) & 0xff
		if half == 0 {
			continue
		}
		var d [kzuc.Lanes8][]byte
		for a := half; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			d[c] = bufs[8*h+c][at : at+m]
		}
		k.s8[h].XORKeyStream(k.k8, &d, &d, m)
	}
}

// keyStream writes words[h] keystream words of every lane of half h
// (lanes 8h..8h+7) to ks[c·stride:]; the wide state runs the larger count
// on all 16 lanes.
func (k *kstate) keyStream(ks []uint32, stride int, words *[2]int) {
	if k.wide {
		k.s16.KeyStream(k.k16, ks, stride, max(words[0], words[1]))
		return
	}
	for h := range k.s8 {
		if words[h] > 0 {
			k.s8[h].KeyStream(k.k8, ks[8*h*stride:], stride, words[h])
		}
	}
}

// initKeyStream initialises the active lanes and writes words[h]
// keystream words of every lane of half h to ks[c·stride:], consuming the
// lane state. The wide state runs the larger count on all 16 lanes in one
// kernel call that writes whole 16-word blocks: stride must be a multiple
// of kzuc.BlockWords (see roundWords) when k.wide. The wide kernel also
// prefetches lane c's bytes in[c] (nil: none), which the caller is about
// to read with lane c's keystream, while its rounds run (in[c] may have
// been written on another core).
func (k *kstate) initKeyStream(ks []uint32, stride int, active uint32, words *[2]int, in *[Lanes][]byte) {
	if k.wide {
		k.s16.InitKeyStream(k.k16, ks, stride, max(words[0], words[1]), in)
		return
	}
	k.init(active)
	k.keyStream(ks, stride, words)
}

// roundWords rounds a keystream word count up to whole kernel blocks.
func roundWords(n int) int {
	return (n + kzuc.BlockWords - 1) / kzuc.BlockWords * kzuc.BlockWords
}

// narrow reports whether a call on the active lanes should use the 16-lane
// kernels, given that the caller's tier is wide: not when all active lanes
// fit one 8-lane state, whose call costs about 2/3 of a 16-lane call for
// the same length here (Zen 5; the per-round dependency chain, not the
// width, bounds both).
func narrow(wide bool, active uint32) bool {
	return wide && (active>>8 != 0 || !x8Supported())
}
