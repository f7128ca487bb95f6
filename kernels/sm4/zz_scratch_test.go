//go:build amd64 && gc && !purego

package sm4

import (
	"testing"

	"github.com/gmtun/gmtun/internal/cputime"
)

func BenchmarkScratch(b *testing.B) {
	_, enc, _ := newKey(b, make([]byte, 16))
	buf := make([]byte, 96*16*8)
	b.Run("ECB-zmm", func(b *testing.B) {
		cputime.Loop(b, len(buf), func() { encryptBlocksAVX512AESNI(enc, &buf[0], &buf[0], len(buf)/16) })
	})
}
