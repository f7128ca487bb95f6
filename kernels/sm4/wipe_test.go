//go:build amd64 && gc && !purego

package sm4

import (
	"encoding/binary"
	"testing"

	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// broadcasts counts the 32-byte runs of b holding one 32-bit word of at
// least 2^16 eight times: the shape of a broadcast round-key table entry.
// (The kernels' other broadcasts are a zero counter's words, zero in any
// domain, and its block count, below 2^16; their states hold different
// blocks in every lane when the data differ.)
func broadcasts(b []byte) int {
	n := 0
	for off := 0; off+32 <= len(b); off += 4 {
		w := binary.LittleEndian.Uint32(b[off:])
		if w < 1<<16 {
			continue
		}
		same := true
		for i := 4; i < 32; i += 4 {
			if binary.LittleEndian.Uint32(b[off+i:]) != w {
				same = false
				break
			}
		}
		if same {
			n++
		}
	}
	return n
}

// TestKernelsWipeRoundKeys checks that no kernel leaves its broadcast
// round keys in the stack after it returns (docs/SECURITY.md): the
// kernels expand 32 round keys into a table of broadcast registers in
// their frame and zero it before they return. (AVX512GFNI keeps its
// round keys split into bytes, not broadcast, which this scan cannot
// recognise; its frame is zeroed by the same generator helper.)
func TestKernelsWipeRoundKeys(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		_, enc, _ := newKey(t, []byte("wipe-test-key-16"))
		buf := make([]byte, 64*BlockSize)
		for i := range buf {
			buf[i] = byte(i*131 + i>>8)
		}
		var ctr [16]byte
		ps := []Piece{{Dst: &buf[0], N: 100}, {Dst: &buf[200], Src: &buf[200], N: 300}}
		for name, f := range map[string]func(){
			"EncryptBlocks": func() { EncryptBlocks(tier, enc, buf, buf) },
			"XORKeyStream":  func() { XORKeyStream(tier, enc, &ctr, buf, buf) },
			"XORPieces":     func() { XORPieces(tier, enc, ps) },
		} {
			if n := broadcasts(kerneltest.DeadStack(f)); n != 0 {
				t.Errorf("%s: %d broadcast words left in the dead stack", name, n)
			}
		}
	})
}
