//go:build amd64 && gc && !purego

package zuc

import (
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	"github.com/gmtun/gmtun/kernels/cpu"
	kzuc "github.com/gmtun/gmtun/kernels/zuc"
)

// TestTierKernels: each lane tier runs the kernel sets its name says, so
// that a forced tier measures and tests what its CPUs run: the 16-lane
// tiers the 16-lane kernels of their S1 (and, for calls that fit 8 lanes,
// the 8-lane kernels of the same S1: an AES-NI tier's CPUs lack GFNI), the
// 8-lane tiers the 8-lane kernels.
func TestTierKernels(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		tier := impl.Selected("zuc")
		if tier == impl.Generic {
			t.Skip("no lane kernels")
		}
		var k kstate
		k.use(wide())
		want := map[string]struct {
			wide bool
			k16  kzuc.Kernels16
			k8   kzuc.Kernels8
		}{
			cpu.TierAVX512GFNI:  {true, kzuc.GFNI16, kzuc.GFNI8},
			cpu.TierAVX512AESNI: {true, kzuc.AESNI16, kzuc.AESNI8},
			cpu.TierAVX2GFNI:    {false, 0, kzuc.GFNI8},
			cpu.TierAVX2AESNI:   {false, 0, kzuc.AESNI8},
		}[tier]
		if k.wide != want.wide || k.k8 != want.k8 || want.wide && (k.k16 != want.k16 || k.k16.String() != tier) {
			t.Fatalf("tier %s: wide %v, kernels %v and %v; want wide %v, %v and %v",
				tier, k.wide, k.k16, k.k8, want.wide, want.k16, want.k8)
		}
	})
}

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
		k.use(wide())
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
