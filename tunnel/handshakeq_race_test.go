//go:build race

package tunnel

// raceEnabled: under -race sync.Pool drops items at random, so allocation
// counts are meaningless there.
const raceEnabled = true
