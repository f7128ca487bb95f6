//go:build race

package handshake

// raceEnabled: under -race sync.Pool drops items at random, so allocation
// counts are meaningless there.
const raceEnabled = true
