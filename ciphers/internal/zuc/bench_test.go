package zuc

import (
	"fmt"
	"testing"

	"github.com/gmtun/gmtun/internal/cputime"
)

// BenchmarkInit measures one ZUC-128 and one ZUC-256 initialisation (33
// rounds each), the fixed cost per packet and key.
func BenchmarkInit(b *testing.B) {
	var k16, iv16 [16]byte
	var k32 [32]byte
	var iv23 [23]byte
	d, _ := D256(16)
	var st State
	b.Run("128", func(b *testing.B) { cputime.Loop(b, 0, func() { st.Init128(&k16, &iv16) }) })
	b.Run("256", func(b *testing.B) { cputime.Loop(b, 0, func() { st.Init256(&k32, &iv23, &d) }) })
}

// BenchmarkMAC measures the MAC combination alone over 1436 bytes (a
// 1420-byte body plus the header), including its keystream.
func BenchmarkMAC(b *testing.B) {
	msg := make([]byte, 1436)
	var k16, iv16 [16]byte
	var k32 [32]byte
	var iv23 [23]byte
	var st State
	b.Run("EIA3", func(b *testing.B) {
		cputime.Loop(b, len(msg), func() {
			st.Init128(&k16, &iv16)
			EIA3Generic(&st, msg, 8*len(msg))
		})
	})
	for _, n := range []int{4, 8, 16} {
		d, _ := D256(n)
		tag := make([]byte, n)
		b.Run(fmt.Sprintf("MAC256-%dbit", 8*n), func(b *testing.B) {
			cputime.Loop(b, len(msg), func() {
				st.Init256(&k32, &iv23, &d)
				MAC256Generic(&st, msg, 8*len(msg), tag)
			})
		})
	}
}
