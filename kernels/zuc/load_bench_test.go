//go:build amd64 && gc && !purego

package zuc

import "testing"

// BenchmarkLoadZUC128Lanes compares the 16-lane ZUC-128 key/IV load of
// the vector kernel with the portable loop it replaces (useLoad16 off).
func BenchmarkLoadZUC128Lanes(b *testing.B) {
	var st State16
	var k0, k1 [16]byte
	var ivs [Lanes16][16]byte
	for c := range ivs {
		ivs[c][0], ivs[c][15] = byte(c), byte(3*c)
	}
	run := func(b *testing.B, vector bool) {
		if vector && !useLoad16 {
			b.Skip("CPU lacks the 16-lane kernels")
		}
		saved := useLoad16
		useLoad16 = vector
		defer func() { useLoad16 = saved }()
		for b.Loop() {
			st.LoadZUC128Lanes(&k0, &k1, &ivs)
		}
	}
	b.Run("kernel", func(b *testing.B) { run(b, true) })
	b.Run("go", func(b *testing.B) { run(b, false) })
}

// BenchmarkLoadZUC256Lanes is BenchmarkLoadZUC128Lanes for ZUC-256 (one
// key for all lanes, as a suite's seal uses it: the key part once).
func BenchmarkLoadZUC256Lanes(b *testing.B) {
	var st State16
	var k [32]byte
	var ivs [Lanes16][23]byte
	for c := range ivs {
		ivs[c][0], ivs[c][22] = byte(c), byte(3*c)
	}
	run := func(b *testing.B, vector bool) {
		if vector && !useLoad16 {
			b.Skip("CPU lacks the 16-lane kernels")
		}
		saved := useLoad16
		useLoad16 = vector
		defer func() { useLoad16 = saved }()
		for b.Loop() {
			st.LoadZUC256Lanes(&k, &k, &ivs, 0, 0)
		}
	}
	b.Run("kernel", func(b *testing.B) { run(b, true) })
	b.Run("go", func(b *testing.B) { run(b, false) })
}
