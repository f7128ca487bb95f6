//go:build amd64 && gc && !purego

package zuc

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// checkTagLanes runs EIA3TagLanes and MAC256TagLanes on msgs (keystream
// lane c at ks[c*stride:]) and compares every tag with EIA3Tag and
// MAC256Tag on the same words; tags of nil lanes must stay untouched.
func checkTagLanes(t *testing.T, msgs *[Lanes16][]byte, ks []uint32, stride int, what string) {
	t.Helper()
	var t128 [Lanes16]uint32
	var t256 [Lanes16][16]byte
	for c := range t128 {
		t128[c], t256[c][0] = 0xa5a5a5a5, 0xa5
	}
	EIA3TagLanes(msgs, ks, stride, &t128)
	MAC256TagLanes(msgs, ks, stride, &t256)
	for c, m := range msgs {
		want128 := uint32(0xa5a5a5a5)
		var want256 [16]byte
		want256[0] = 0xa5
		if m != nil {
			want128 = EIA3Tag(m, 8*len(m), ks[c*stride:])
			MAC256Tag(m, 8*len(m), ks[c*stride:], want256[:])
		}
		if t128[c] != want128 {
			t.Fatalf("%s: lane %d (len %d): EIA3 %08x, want %08x", what, c, len(m), t128[c], want128)
		}
		if t256[c] != want256 {
			t.Fatalf("%s: lane %d (len %d): MAC-128 %x, want %x", what, c, len(m), t256[c], want256)
		}
	}
}

// TestTagLanes: every message length 0..4096 (sixteen lanes of one length
// per call, then mixed lengths with idle lanes), 8192 and 65535, with
// random unaligned messages and keystream words at unaligned strides.
func TestTagLanes(t *testing.T) {
	forEachMACPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(71, 72))
		lens := []int{8192, 65535}
		step := 1
		if testing.Short() {
			step = 11
		}
		for n := 0; n <= 4096; n += step {
			lens = append(lens, n)
		}
		run := func(ls []int, what string) {
			var msgs [Lanes16][]byte
			longest := 0
			for c, l := range ls {
				if l >= 0 {
					off := r.IntN(64)
					msgs[c] = randomBytes(r, off+l)[off:]
					longest = max(longest, l)
				}
			}
			words := max(EIA3KeyStreamWords(8*longest), MAC256KeyStreamWords(8*longest, 16))
			stride := words + r.IntN(5)
			off := r.IntN(3)
			ks := randomWords(r, off+Lanes16*stride)[off:]
			checkTagLanes(t, &msgs, ks, stride, what)
		}
		for _, l := range lens {
			ls := make([]int, Lanes16)
			for c := range ls {
				ls[c] = l
			}
			run(ls, fmt.Sprintf("equal %d", l))
		}
		for i := 0; i < 400; i++ {
			ls := make([]int, Lanes16)
			base := r.IntN(4097)
			for c := range ls {
				ls[c] = base + r.IntN(200) - 100
				if ls[c] < 0 || r.IntN(6) == 0 {
					ls[c] = -1
				}
			}
			run(ls, fmt.Sprintf("mixed %v", ls))
		}
		var none [Lanes16][]byte
		checkTagLanes(t, &none, nil, 0, "no lanes")
	})
}

// TestTagLanesGuardPages: a message and its keystream that end right
// before an unmapped page, cut to exactly the bytes and words the MAC
// needs, for every length 0..4096: any read past either faults.
func TestTagLanesGuardPages(t *testing.T) {
	forEachMACPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(73, 74))
		mpage := guardedPages(t, 2)
		kpage := guardedPages(t, 2)
		kall := unsafe.Slice((*uint32)(unsafe.Pointer(&kpage[0])), len(kpage)/4)
		src := randomBytes(r, 4096)
		words := randomWords(r, MAC256KeyStreamWords(8*4096, 16))
		for l := 0; l <= 4096; l++ {
			var msgs [Lanes16][]byte
			c := l % Lanes16 // the lane that ends at the guard pages
			msgs[c] = mpage[len(mpage)-l:]
			copy(msgs[c], src)
			for _, need := range []int{EIA3KeyStreamWords(8 * l), MAC256KeyStreamWords(8*l, 16)} {
				// Lane c's keystream (stride 0: every lane at ks[0:]) ends at
				// the guard page with exactly need words.
				stride := 0
				ks := kall[len(kall)-need:]
				copy(ks, words)
				var t128 [Lanes16]uint32
				var t256 [Lanes16][16]byte
				var want256 [16]byte
				if need == EIA3KeyStreamWords(8*l) {
					EIA3TagLanes(&msgs, ks, stride, &t128)
					if want := EIA3Tag(msgs[c], 8*l, ks[c*stride:]); t128[c] != want {
						t.Fatalf("len %d: EIA3 %08x, want %08x", l, t128[c], want)
					}
				} else {
					MAC256TagLanes(&msgs, ks, stride, &t256)
					MAC256Tag(msgs[c], 8*l, ks[c*stride:], want256[:])
					if t256[c] != want256 {
						t.Fatalf("len %d: MAC-128 %x, want %x", l, t256[c], want256)
					}
				}
			}
		}
	})
}

// TestTagLanesAllocs: the lane MAC calls do not allocate.
func TestTagLanesAllocs(t *testing.T) {
	needKernels(t, useMAC, "the MAC kernels (PCLMULQDQ)")
	var msgs [Lanes16][]byte
	for c := range msgs {
		msgs[c] = make([]byte, 1436)
	}
	stride := MAC256KeyStreamWords(8*1436, 16)
	ks := make([]uint32, Lanes16*stride)
	var t128 [Lanes16]uint32
	var t256 [Lanes16][16]byte
	if a := testing.AllocsPerRun(20, func() {
		EIA3TagLanes(&msgs, ks, stride, &t128)
		MAC256TagLanes(&msgs, ks, stride, &t256)
	}); a != 0 {
		t.Errorf("%.1f allocations per call", a)
	}
}
