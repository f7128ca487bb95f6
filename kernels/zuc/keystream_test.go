//go:build amd64 && gc && !purego

package zuc

import (
	"math/rand/v2"
	"testing"
)

// TestKeyStreamVsGmsm: every word count 0..1100 (4400 B per lane), lanes
// with distinct random keys, ZUC-128 and ZUC-256 lanes mixed in one call.
func TestKeyStreamVsGmsm(t *testing.T) {
	forEachTier(t, func(t *testing.T, tc tierCase) {
		r := rand.New(rand.NewPCG(1, uint64(tc.lanes)))
		const maxWords = 1100
		specs := make([]laneSpec, tc.lanes)
		want := make([][]uint32, tc.lanes)
		for c := range specs {
			specs[c] = randomSpec(r, c%3 == 1)
			want[c] = gmsmKeyStream(t, specs[c], maxWords)
		}
		st := tc.newState()
		ks := make([]uint32, tc.lanes*maxWords)
		step := 1
		if testing.Short() {
			step = 7
		}
		for n := 0; n <= maxWords; n += step {
			for c := range specs {
				load(st, c, specs[c])
			}
			st.Init()
			clear(ks)
			st.KeyStream(ks, maxWords, n)
			for c := range specs {
				got := ks[c*maxWords : c*maxWords+maxWords]
				for i := 0; i < maxWords; i++ {
					if i < n && got[i] != want[c][i] {
						t.Fatalf("n=%d lane %d (key %d B) word %d: got %08x, want %08x", n, c, len(specs[c].key), i, got[i], want[c][i])
					}
					if i >= n && got[i] != 0 {
						t.Fatalf("n=%d lane %d: word %d written past n", n, c, i)
					}
				}
			}
		}
	})
}
