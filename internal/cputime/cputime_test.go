package cputime

import "testing"

func BenchmarkLoop(b *testing.B) {
	buf := make([]byte, 1024)
	Loop(b, len(buf), func() { clear(buf) })
}
