//go:build amd64 && gc && !purego

package zuc

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestLoadZUC256LanesKernel compares the 16-lane ZUC-256 load kernel with
// the portable loop it replaces (useLoad16 off) on random keys, IVs and
// constant sets, one key or two, over stale states, with the IVs ending
// right before an unmapped page (the kernel reads exactly 23 bytes per IV).
func TestLoadZUC256LanesKernel(t *testing.T) {
	needKernels(t, useLoad16, "AVX-512")
	r := rand.New(rand.NewPCG(71, 72))
	fill := func(b []byte) {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	}
	page := guardedPages(t, 1)
	ivs := (*[Lanes16][23]byte)(unsafe.Pointer(&page[len(page)-Lanes16*23]))
	for it := range 1000 {
		var k0, k1 [32]byte
		fill(k0[:])
		fill(k1[:])
		for c := range ivs {
			fill(ivs[c][:])
		}
		if it%4 == 0 { // all-ones IVs: every field at its widest
			for c := range ivs {
				for i := range ivs[c] {
					ivs[c][i] = 0xff
				}
			}
		}
		hi := &k1
		if it%3 == 0 {
			hi = &k0
		}
		d0, d1 := ZUC256Constants(r.IntN(4)), ZUC256Constants(r.IntN(4))
		if it%3 == 0 && it%2 == 0 {
			d1 = d0
		}
		var got, want State16
		for i := range got.w {
			got.w[i], want.w[i] = r.Uint32(), r.Uint32()
		}
		got.LoadZUC256Lanes(&k0, hi, ivs, d0, d1)
		useLoad16 = false
		want.LoadZUC256Lanes(&k0, hi, ivs, d0, d1)
		useLoad16 = true
		if !equalRows(&got, &want) {
			for j := 0; j < rowScratch; j++ {
				for c := 0; c < Lanes16; c++ {
					if g, w := got.w[j*Lanes16+c], want.w[j*Lanes16+c]; g != w {
						t.Errorf("iteration %d: row %d lane %d: %#08x, want %#08x", it, j, c, g, w)
					}
				}
			}
			t.FailNow()
		}
	}
}
