package ctrpass

import (
	"encoding/binary"
	"testing"
)

// TestInc32 checks that Inc32 steps only the last 32-bit big-endian word,
// modulo 2^32 (NIST SP 800-38D §6.2), for counts past one wrap.
func TestInc32(t *testing.T) {
	for _, tc := range []struct {
		start uint32
		n     int
		want  uint32
	}{{0, 1, 1}, {0xfffffffe, 1, 0xffffffff}, {0xffffffff, 1, 0}, {0xfffffff0, 0x20, 0x10}, {7, 1 << 32, 7}} {
		var ctr [16]byte
		for i := 0; i < 12; i++ {
			ctr[i] = byte(0xa0 + i)
		}
		binary.BigEndian.PutUint32(ctr[12:], tc.start)
		Inc32(&ctr, tc.n)
		if got := binary.BigEndian.Uint32(ctr[12:]); got != tc.want {
			t.Errorf("Inc32(%#x, %d) = %#x, want %#x", tc.start, tc.n, got, tc.want)
		}
		for i := 0; i < 12; i++ {
			if ctr[i] != byte(0xa0+i) {
				t.Fatalf("Inc32 changed byte %d of the nonce part", i)
			}
		}
	}
}

// TestBlocks checks the block count of piece lengths around block edges.
func TestBlocks(t *testing.T) {
	for n, want := range map[int]int{0: 0, 1: 1, 15: 1, 16: 1, 17: 2, 1420: 89, 1424: 89, 1425: 90} {
		if got := Blocks(n); got != want {
			t.Errorf("Blocks(%d) = %d, want %d", n, got, want)
		}
	}
}
