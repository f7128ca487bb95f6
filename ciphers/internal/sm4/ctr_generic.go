package sm4

import (
	"encoding/binary"
	"math/bits"
)

// inc128 returns the 128-bit big-endian successor of hi‖lo (no branch).
func inc128(hi, lo uint64) (uint64, uint64) {
	lo, c := bits.Add64(lo, 1, 0)
	return hi + c, lo
}

// keystream fills the first n lanes of b (1 ≤ n ≤ bsLanes) with the
// encryptions of the counter blocks hi‖lo, hi‖lo + 1, … and returns the
// counter after the last one.
func keystream(rk *[32]uint32, b *bsBatch, n int, hi, lo uint64) (uint64, uint64) {
	for j := range n {
		b.a[j], b.b[j] = hi, lo
		hi, lo = inc128(hi, lo)
	}
	encryptLanes(rk, b, n)
	return hi, lo
}

// xorLanes XORs src with the keystream lanes from, from+1, … of b into dst
// (len(dst) ≥ len(src); a final partial block uses the start of its lane)
// and returns how many source bytes it consumed: all of src, or the lanes
// up to bsLanes.
func xorLanes(b *bsBatch, from int, dst, src []byte) int {
	done := 0
	for j := from; j < bsLanes && done < len(src); j++ {
		s, d := src[done:], dst[done:]
		if len(s) >= BlockSize {
			_, _ = s[15], d[15]
			binary.BigEndian.PutUint64(d[0:8], binary.BigEndian.Uint64(s[0:8])^b.a[j])
			binary.BigEndian.PutUint64(d[8:16], binary.BigEndian.Uint64(s[8:16])^b.b[j])
			done += BlockSize
			continue
		}
		var ks [BlockSize]byte
		binary.BigEndian.PutUint64(ks[0:8], b.a[j])
		binary.BigEndian.PutUint64(ks[8:16], b.b[j])
		for i := range s {
			d[i] = s[i] ^ ks[i]
		}
		done += len(s)
	}
	return done
}

// ctrGeneric XORs src with the SM4-CTR keystream (NIST SP 800-38A §6.5)
// into dst, starting at counter block ctr, and leaves ctr at the next
// unused counter block. The counter is the whole 16-byte block read as a
// 128-bit big-endian integer (SP 800-38A §B.1 with m = 128); a final
// partial block consumes a whole counter value. len(dst) ≥ len(src); dst
// and src may overlap exactly.
func ctrGeneric(rk *[32]uint32, ctr *[16]byte, dst, src []byte) {
	hi := binary.BigEndian.Uint64(ctr[0:8])
	lo := binary.BigEndian.Uint64(ctr[8:16])
	var b bsBatch
	for len(src) > 0 {
		n := min((len(src)+BlockSize-1)/BlockSize, bsLanes)
		hi, lo = keystream(rk, &b, n, hi, lo)
		k := xorLanes(&b, 0, dst, src)
		dst, src = dst[k:], src[k:]
	}
	binary.BigEndian.PutUint64(ctr[0:8], hi)
	binary.BigEndian.PutUint64(ctr[8:16], lo)
}
