//go:build amd64 && gc && !purego

package zuc

import (
	"math/bits"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/kernels/zuclanes"
)

// Dispatch flags of the batch primitives, set once from the CPU features
// (kernels/cpu through kernels/zuclanes) and switched only by tests through
// ciphers/internal/impl. Both tiers compute tags with the carry-less
// multiply MAC kernels (PCLMULQDQ, or VPCLMULQDQ on ZMM where the CPU has
// it, chosen inside kernels/zuclanes), so both require them.
var (
	// useX16: 16-lane keystream kernels (AVX-512 F/BW/VL/DQ, VBMI2, GFNI).
	useX16 = zuclanes.X16Supported() && zuclanes.MACSupported()
	// useX8: 8-lane keystream kernels (AVX2, BMI2, VEX GFNI), two
	// kernel states per 16-packet call.
	useX8 = zuclanes.X8Supported() && zuclanes.MACSupported()
)

func init() {
	impl.Register("zuc", "AVX-512+GFNI", &useX16)
	impl.Register("zuc", "AVX2+GFNI", &useX8)
}

// XORKeyStreams128 is XORKeyStreams128Generic on the multi-lane kernels
// when the CPU has them: lanes of different lengths share the kernel
// calls up to the shorter length, and a lane left alone is finished
// single-lane by the generic code. Output is identical to the generic
// function.
func XORKeyStreams128(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, bufs *[Lanes][]byte, n int) {
	if useX16 || useX8 {
		lk := laneKeys{key128: key, ivs128: ivs}
		xorLanes(useX16, &lk, bufs, n)
		return
	}
	XORKeyStreams128Generic(key, ivs, bufs, n)
}

// EIA3Tags is EIA3TagsGeneric with the keystream of all lanes from one
// multi-lane kernel call and the tags from the carry-less multiply MAC
// kernel, when the CPU has them.
func EIA3Tags(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, msgs *[Lanes][]byte, tags *[Lanes]uint32, n int) {
	if useX16 || useX8 {
		lk := laneKeys{key128: key, ivs128: ivs}
		macLanes(useX16, &lk, msgs, n, tags, nil)
		return
	}
	EIA3TagsGeneric(key, ivs, msgs, tags, n)
}

// XORKeyStreams256 is XORKeyStreams256Generic on the multi-lane kernels
// when the CPU has them (see XORKeyStreams128).
func XORKeyStreams256(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bufs *[Lanes][]byte, n int) {
	if useX16 || useX8 {
		lk := laneKeys{key256: key, ivs256: ivs, d: zuclanes.ZUC256Keystream}
		xorLanes(useX16, &lk, bufs, n)
		return
	}
	XORKeyStreams256Generic(key, ivs, bufs, n)
}

// MAC256Tags is MAC256TagsGeneric on the multi-lane and MAC kernels when
// the CPU has them (see EIA3Tags).
func MAC256Tags(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, msgs *[Lanes][]byte, tags *[Lanes][MAC256TagSize]byte, n int) {
	if useX16 || useX8 {
		lk := laneKeys{key256: key, ivs256: ivs, d: zuclanes.ZUC256MAC128}
		macLanes(useX16, &lk, msgs, n, nil, tags)
		return
	}
	MAC256TagsGeneric(key, ivs, msgs, tags, n)
}

// maxLaneWords bounds the keystream words one lane of a MAC call may need
// (messages up to about 2 KiB: MTU-sized packets); longer messages are
// authenticated single-lane by the generic code.
const maxLaneWords = 512

// laneKeys are the key and IVs of one call: ZUC-128 if key128 is set,
// otherwise ZUC-256 with constant set d.
type laneKeys struct {
	key128 *[KeySize128]byte
	ivs128 *[Lanes][IVSize128]byte
	key256 *[KeySize256]byte
	ivs256 *[Lanes][IVSize256]byte
	d      zuclanes.ZUC256Constants
}

// state returns the generic state of lane c, initialised.
func (lk *laneKeys) state(c int) (st State) {
	if lk.key128 != nil {
		st.Init128(lk.key128, &lk.ivs128[c])
	} else {
		st.Init256(lk.key256, &lk.ivs256[c], &d256[lk.d]) // d256 is indexed like ZUC256Constants
	}
	return st
}

// macWords returns the keystream words the MAC of an n-byte message
// needs: 128-EIA3, or the 128-bit ZUC-256 MAC.
func (lk *laneKeys) macWords(n int) int {
	if lk.key128 != nil {
		return zuclanes.EIA3KeyStreamWords(8 * n)
	}
	return zuclanes.MAC256KeyStreamWords(8*n, MAC256TagSize)
}

// kstate is the lane state of one call: 16 lanes in one x16 kernel state
// (wide) or in two x8 states (lanes 0–7 and 8–15; a half without active
// lanes is not run). Every method takes the mask of active lanes; idle
// lanes compute on stale data harmlessly.
type kstate struct {
	wide bool
	s16  zuclanes.State16
	s8   [2]zuclanes.State8
}

// load loads lane c with its key and IV (GB/T 33133.1-2016 §6.1; ZUC-256
// 2018 §3.1).
func (k *kstate) load(c int, lk *laneKeys) {
	switch {
	case k.wide && lk.key128 != nil:
		k.s16.LoadZUC128(c, lk.key128, &lk.ivs128[c])
	case k.wide:
		k.s16.LoadZUC256(c, lk.key256, &lk.ivs256[c], lk.d)
	case lk.key128 != nil:
		k.s8[c/8].LoadZUC128(c%8, lk.key128, &lk.ivs128[c])
	default:
		k.s8[c/8].LoadZUC256(c%8, lk.key256, &lk.ivs256[c], lk.d)
	}
}

// init runs the initialisation rounds of the active lanes' kernel states.
func (k *kstate) init(active uint32) {
	if k.wide {
		k.s16.Init()
		return
	}
	if active&0xff != 0 {
		k.s8[0].Init()
	}
	if active>>8 != 0 {
		k.s8[1].Init()
	}
}

// lane returns the state of lane c as a generic State, to continue it
// single-lane.
func (k *kstate) lane(c int) State {
	var l zuclanes.Lane
	if k.wide {
		l = k.s16.Lane(c)
	} else {
		l = k.s8[c/8].Lane(c % 8)
	}
	return State{s: l.S, r1: l.R1, r2: l.R2}
}

// xor XORs m bytes of keystream (m a multiple of 4) into bufs[c][at:] of
// every active lane c; every lane of a run half advances by m/4 words.
func (k *kstate) xor(bufs *[Lanes][]byte, active uint32, at, m int) {
	if k.wide {
		var d [zuclanes.Lanes16][]byte
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			d[c] = bufs[c][at : at+m]
		}
		k.s16.XORKeyStream(&d, &d, m)
		return
	}
	for h := range k.s8 {
		half := active >> (8 * h) & 0xff
		if half == 0 {
			continue
		}
		var d [zuclanes.Lanes8][]byte
		for a := half; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			d[c] = bufs[8*h+c][at : at+m]
		}
		k.s8[h].XORKeyStream(&d, &d, m)
	}
}

// keyStream writes words[h] keystream words of every lane of half h
// (lanes 8h..8h+7) to ks[c·stride:]; the wide state runs the larger count
// on all 16 lanes.
func (k *kstate) keyStream(ks []uint32, stride int, words *[2]int) {
	if k.wide {
		k.s16.KeyStream(ks, stride, max(words[0], words[1]))
		return
	}
	for h := range k.s8 {
		if words[h] > 0 {
			k.s8[h].KeyStream(ks[8*h*stride:], stride, words[h])
		}
	}
}

// xorLanes is the lane path of the keystream XOR. All active lanes run
// together up to the shortest remaining whole-word length, the finished
// lanes drop out and the rest continue (the equal lengths of TSO segments
// take one step); a final partial word comes from the lane's extracted
// state, and the last lane standing, or a lone packet, is finished
// single-lane.
func xorLanes(wide bool, lk *laneKeys, bufs *[Lanes][]byte, n int) {
	var active uint32
	for i := range bufs[:n] {
		if len(bufs[i]) > 0 {
			active |= 1 << i
		}
	}
	if bits.OnesCount32(active) < 2 {
		for ; active != 0; active &= active - 1 {
			c := bits.TrailingZeros32(active)
			st := lk.state(c)
			XORKeyStreamGeneric(&st, bufs[c], bufs[c])
		}
		return
	}
	// The lane state lives on the stack (a Key is shared by many
	// workers); zeroing its 4 KiB costs less than a pool round trip.
	k := &kstate{wide: wide}
	for a := active; a != 0; a &= a - 1 {
		k.load(bits.TrailingZeros32(a), lk)
	}
	k.init(active)
	for at := 0; ; {
		m, live, last := int(^uint(0)>>1), 0, 0
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			rem := len(bufs[c]) - at
			if rem < 4 {
				if rem > 0 {
					st := k.lane(c)
					xorWord(bufs[c][at:], st.keyword())
				}
				active &^= 1 << c
				continue
			}
			m = min(m, rem&^3)
			live++
			last = c
		}
		switch live {
		case 0:
			return
		case 1:
			st := k.lane(last)
			b := bufs[last][at:]
			XORKeyStreamGeneric(&st, b, b)
			return
		}
		k.xor(bufs, active, at, m)
		at += m
	}
}

// xorWord XORs the first len(b) ≤ 4 bytes of the big-endian keystream
// word w into b.
func xorWord(b []byte, w uint32) {
	for i := range b {
		b[i] ^= byte(w >> (24 - 8*uint(i)))
	}
}

// macLanes is the lane path of the MACs: one kernel call generates the
// keystream of every active lane (up to the longest lane's need), then the
// carry-less multiply kernel computes each tag from its message and
// keystream words. Exactly one of t128 (128-EIA3) and t256 (ZUC-256
// MAC-128) is non-nil. Messages too long for the scratch, and a lone
// message, are authenticated single-lane.
func macLanes(wide bool, lk *laneKeys, msgs *[Lanes][]byte, n int, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte) {
	var active uint32
	var words [2]int // per half of the lanes
	stride := 0
	for c, msg := range msgs[:n] {
		if msg == nil {
			continue
		}
		w := lk.macWords(len(msg))
		if w > maxLaneWords {
			macGeneric(lk, c, msg, t128, t256)
			continue
		}
		active |= 1 << c
		words[c/8] = max(words[c/8], w)
		stride = max(stride, w)
	}
	if bits.OnesCount32(active) < 2 {
		for ; active != 0; active &= active - 1 {
			c := bits.TrailingZeros32(active)
			macGeneric(lk, c, msgs[c], t128, t256)
		}
		return
	}
	// Lane state and keystream (36 KiB) live on the stack: a Key is
	// shared by many workers, and zeroing them costs less than 2% of a
	// call on MTU-sized packets, without the allocations a sync.Pool
	// makes after every GC.
	k := &kstate{wide: wide}
	var ksBuf [Lanes * maxLaneWords]uint32
	for a := active; a != 0; a &= a - 1 {
		k.load(bits.TrailingZeros32(a), lk)
	}
	k.init(active)
	k.keyStream(ksBuf[:], stride, &words)
	for a := active; a != 0; a &= a - 1 {
		c := bits.TrailingZeros32(a)
		msg := msgs[c]
		ks := ksBuf[c*stride : c*stride+lk.macWords(len(msg))]
		if t128 != nil {
			t128[c] = zuclanes.EIA3Tag(msg, 8*len(msg), ks)
		} else {
			zuclanes.MAC256Tag(msg, 8*len(msg), ks, t256[c][:])
		}
	}
}

// macGeneric computes the tag of lane c single-lane.
func macGeneric(lk *laneKeys, c int, msg []byte, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte) {
	st := lk.state(c)
	if t128 != nil {
		t128[c] = EIA3Generic(&st, msg, 8*len(msg))
	} else {
		MAC256Generic(&st, msg, 8*len(msg), t256[c][:])
	}
}
