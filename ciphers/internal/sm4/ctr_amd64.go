//go:build amd64 && gc && !purego

package sm4

import (
	"crypto/subtle"
	"encoding/binary"

	ksm4 "github.com/gmtun/gmtun/kernels/sm4"
)

// ctrKernel is ctrGeneric (128-bit big-endian counter, SP 800-38A §B.1
// with m = 128) on SM4 kernel tier st. The kernels count GCM's way,
// incrementing only the low 32 bits (inc32, SP 800-38D §6.2), so the
// whole blocks are cut at every point where those bits wrap and the carry
// is added to the upper 96 bits between the pieces. A final partial block
// consumes a whole counter value, as in ctrGeneric.
func ctrKernel(st ksm4.Tier, rk *[32]uint32, ctr *[16]byte, dst, src []byte) {
	dst = dst[:len(src)]
	for len(src) >= BlockSize {
		low := binary.BigEndian.Uint32(ctr[12:])
		toWrap := uint64(1<<32) - uint64(low) // blocks until the low word wraps
		n := min(uint64(len(src)/BlockSize), toWrap)
		k := int(n) * BlockSize
		ksm4.XORKeyStream(st, rk, ctr, dst[:k], src[:k])
		if n == toWrap {
			carry96(ctr)
		}
		dst, src = dst[k:], src[k:]
	}
	if len(src) > 0 {
		var ks [BlockSize]byte
		ksm4.EncryptBlocks(st, rk, ks[:], ctr[:])
		subtle.XORBytes(dst, src, ks[:])
		if binary.BigEndian.Uint32(ctr[12:]) == 1<<32-1 {
			carry96(ctr)
		}
		binary.BigEndian.PutUint32(ctr[12:], binary.BigEndian.Uint32(ctr[12:])+1)
	}
}

// carry96 adds one to the upper 96 bits of the big-endian counter block
// ctr (the carry out of its low 32-bit word), modulo 2^96.
func carry96(ctr *[16]byte) {
	hi := binary.BigEndian.Uint64(ctr[0:8])
	mid := binary.BigEndian.Uint32(ctr[8:12]) + 1
	if mid == 0 {
		hi++
	}
	binary.BigEndian.PutUint64(ctr[0:8], hi)
	binary.BigEndian.PutUint32(ctr[8:12], mid)
}
