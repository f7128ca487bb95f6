//go:build amd64 && gc && !purego

package sm4

import (
	"crypto/cipher"
	"encoding/binary"

	"github.com/gmtun/gmtun/kernels/internal/sm4ref"
)

// expandKey returns the test key schedule (kernels/internal/sm4ref).
func expandKey(key []byte) (enc, dec [32]uint32) { return sm4ref.ExpandKey(key) }

// refXORKeyStream is GCTR over whole blocks with inc32, built from a
// one-block cipher: the oracle for the CTR kernels.
func refXORKeyStream(b cipher.Block, ctr [16]byte, dst, src []byte) {
	var ks [16]byte
	for i := 0; i+16 <= len(src); i += 16 {
		b.Encrypt(ks[:], ctr[:])
		for j := 0; j < 16; j++ {
			dst[i+j] = src[i+j] ^ ks[j]
		}
		binary.BigEndian.PutUint32(ctr[12:], binary.BigEndian.Uint32(ctr[12:])+1)
	}
}
