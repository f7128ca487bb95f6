//go:build amd64 && gc && !purego

package zuc

import "testing"

// FuzzLane compares one fuzzed lane (key, IV, position, length) with gmsm,
// the other lanes carrying a fixed unrelated key.
func FuzzLane(f *testing.F) {
	f.Add(make([]byte, 32), make([]byte, 23), uint8(0), uint16(1), false)
	f.Add([]byte("0123456789abcdef0123456789abcdef"), []byte("fuzz-iv-fuzz-iv-fuzz-iv"), uint8(13), uint16(300), true)
	f.Fuzz(func(t *testing.T, key, iv []byte, lane uint8, n uint16, zuc256 bool) {
		s := laneSpec{key: make([]byte, 16), iv: make([]byte, 16)}
		if zuc256 {
			s = laneSpec{key: make([]byte, 32), iv: make([]byte, 23)}
		}
		copy(s.key, key)
		copy(s.iv, iv)
		words := int(n % 1200)
		want := gmsmKeyStream(t, s, words)
		for _, tc := range tiers {
			if !tc.supported {
				continue
			}
			st := tc.newState()
			other := laneSpec{key: make([]byte, 16), iv: make([]byte, 16)}
			for c := 0; c < tc.lanes; c++ {
				load(st, c, other)
			}
			c := int(lane) % tc.lanes
			load(st, c, s)
			st.Init()
			ks := make([]uint32, tc.lanes*max(words, 1))
			st.KeyStream(ks, max(words, 1), words)
			for i, w := range want {
				if got := ks[c*max(words, 1)+i]; got != w {
					t.Fatalf("%s lane %d word %d: %08x, want %08x", tc.name, c, i, got, w)
				}
			}
		}
	})
}
