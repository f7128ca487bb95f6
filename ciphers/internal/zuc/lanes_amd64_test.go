//go:build amd64 && gc && !purego

package zuc

import (
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
)

// TestKStateContinues checks what the tails rely on: after a kernel XOR
// of m bytes, the kernel keystream of every lane continues exactly as the
// reference state that produced those m bytes.
func TestKStateContinues(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		if !lanesOn() {
			t.Skip("no lane kernel selected")
		}
		r := rand.New(rand.NewPCG(5, 6))
		b := newLaneBatch(r, []int{256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256})
		lk := laneKeys{k128: [2]*[KeySize128]byte{&b.key128, &b.key128}, iv128: &b.iv128}
		var k kstate
		k.use(useX16)
		const all = 1<<Lanes - 1
		for c := range Lanes {
			k.load(c, &lk)
		}
		k.init(all)
		bufs := b.clone()
		k.xor(bufs, all, 0, 128)
		var ks [Lanes * 5]uint32
		k.keyStream(ks[:], 5, &[2]int{5, 5})
		for c := range Lanes {
			var ref State
			ref.Init128(&b.key128, &b.iv128[c])
			var skip [32]uint32
			ref.KeyWords(skip[:])
			var got, want [5]uint32
			copy(got[:], ks[5*c:])
			ref.KeyWords(want[:])
			if got != want {
				t.Fatalf("lane %d: continued keystream %08x, want %08x", c, got, want)
			}
		}
	})
}
