//go:build amd64 && gc && !purego

package zuc

import (
	"encoding/binary"
	"testing"

	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// TestKernelsWipeFrame checks that the 16-lane kernels leave no lane state
// in the stack after they return (docs/SECURITY.md): their frame holds the
// LFSR rings and the last keystream block of every lane, which they zero
// before returning. The scan looks for any 32-bit word of the call's last
// block, in any lane; a stray match of one of these 256 words among the
// 4096 positions of the scan is a 2^-22 event.
func TestKernelsWipeFrame(t *testing.T) {
	forEachKernels16(t, func(t *testing.T, k Kernels16) {
		const words = 2 * BlockWords
		ks := make([]uint32, Lanes16*words)
		load := func(s *State16, seed byte) {
			for lane := range Lanes16 {
				var key, iv [16]byte
				key[0], iv[1] = byte(lane)+seed, byte(3*lane+1)
				s.LoadZUC128(lane, &key, &iv)
			}
		}
		for name, f := range map[string]func(){
			"InitKeyStream": func() {
				var s State16
				load(&s, 0)
				s.InitKeyStream(k, ks, words, words, nil)
			},
			"Init+KeyStream": func() {
				var s State16
				load(&s, 0x80)
				s.Init(k)
				s.KeyStream(k, ks, words, words)
			},
		} {
			dead := kerneltest.DeadStack(f)
			last := map[uint32]bool{}
			for lane := range Lanes16 {
				for w := words - BlockWords; w < words; w++ {
					last[ks[lane*words+w]] = true
				}
			}
			left := 0
			for off := 0; off+4 <= len(dead); off += 4 {
				if last[binary.LittleEndian.Uint32(dead[off:])] {
					left++
				}
			}
			if left != 0 {
				t.Errorf("%s: %d keystream words of the last block left in the dead stack", name, left)
			}
		}
	})
}
