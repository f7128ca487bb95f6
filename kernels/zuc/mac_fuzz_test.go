//go:build amd64 && gc && !purego

package zuc

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// FuzzMAC compares EIA3Tag and MAC256Tag on both kernel paths with the
// bit-by-bit definitions (eia3, zuc256MAC of vectors_test.go) for a fuzzed
// message, bit length and keystream seed.
func FuzzMAC(f *testing.F) {
	f.Add([]byte{}, uint8(0), uint64(0))
	f.Add([]byte("a 33-byte message, for the tail.."), uint8(3), uint64(1))
	f.Add(bytes.Repeat([]byte{0xff}, 300), uint8(7), uint64(2))
	f.Fuzz(func(t *testing.T, msg []byte, trim uint8, seed uint64) {
		if len(msg) > 4096 {
			msg = msg[:4096]
		}
		L := max(0, 8*len(msg)-int(trim%8))
		r := rand.New(rand.NewPCG(seed, 71))
		ks := randomWords(r, MAC256KeyStreamWords(L, 16))
		wantEIA := eia3(ks, msg, L)
		want := make([][]byte, len(macTagBytes))
		for ti, tb := range macTagBytes {
			for _, w := range zuc256MAC(ks, msg, L, 8*tb) {
				want[ti] = binary.BigEndian.AppendUint32(want[ti], w)
			}
		}
		saved := useMACAVX512
		defer func() { useMACAVX512 = saved }()
		for _, wide := range []bool{false, true} {
			if !useMAC || (wide && !MACWide()) {
				continue
			}
			useMACAVX512 = wide
			if got := EIA3Tag(msg, L, ks[:EIA3KeyStreamWords(L)]); got != wantEIA {
				t.Fatalf("wide=%v EIA3 L=%d: %08x, want %08x", wide, L, got, wantEIA)
			}
			for ti, tb := range macTagBytes {
				tag := make([]byte, tb)
				MAC256Tag(msg, L, ks[:MAC256KeyStreamWords(L, tb)], tag)
				if !bytes.Equal(tag, want[ti]) {
					t.Fatalf("wide=%v MAC-%d L=%d: %x, want %x", wide, 8*tb, L, tag, want[ti])
				}
			}
		}
	})
}
