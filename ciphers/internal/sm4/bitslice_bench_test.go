package sm4

import (
	"strconv"
	"testing"
)

// BenchmarkBitslice measures the pieces of the portable core: one 64×64
// transpose, one 64-lane batch, one block one at a time, the key schedule.
func BenchmarkBitslice(b *testing.B) {
	var rk, dec [32]uint32
	expandKeyGeneric([]byte("0123456789abcdef"), &rk, &dec)
	b.Run("transpose64", func(b *testing.B) {
		var m [64]uint64
		for b.Loop() {
			transpose64(&m)
		}
	})
	b.Run("batch64", func(b *testing.B) {
		var bs bsBatch
		b.SetBytes(bsLanes * BlockSize)
		for b.Loop() {
			bs.encrypt(&rk)
		}
	})
	b.Run("block", func(b *testing.B) {
		var blk [BlockSize]byte
		b.SetBytes(BlockSize)
		for b.Loop() {
			cryptBlockGeneric(&rk, blk[:], blk[:])
		}
	})
	b.Run("keyschedule", func(b *testing.B) {
		key := make([]byte, KeySize)
		for b.Loop() {
			expandKeyGeneric(key, &rk, &dec)
		}
	})
}

// BenchmarkGenericGCM measures the portable SM4-GCM on any build (it calls
// the *Generic functions directly): one packet, and batches of 64 packets
// of the tunnel's shape (16-byte AAD, in place).
func BenchmarkGenericGCM(b *testing.B) {
	g, _ := NewGCM([]byte("0123456789abcdef"))
	var nonce [NonceSize]byte
	var tag [TagSize]byte
	for _, size := range []int{64, 576, 1420, 8192} {
		buf := make([]byte, 16+size+TagSize)
		b.Run("seal/1x"+itoa(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				sealGeneric(g, buf[16:16+size], &tag, &nonce, buf[16:16+size], buf[:16])
			}
		})
		ps := make([]Packet, 64)
		for i := range ps {
			pb := make([]byte, 16+size+TagSize)
			ps[i] = Packet{AAD: pb[:16], Text: pb[16 : 16+size], Tag: (*[TagSize]byte)(pb[16+size:])}
			ps[i].Nonce[0] = byte(i)
		}
		ok := make([]bool, len(ps))
		b.Run("sealbatch/64x"+itoa(size), func(b *testing.B) {
			b.SetBytes(int64(64 * size))
			for b.Loop() {
				sealBatchGeneric(g, ps)
			}
		})
		sealBatchGeneric(g, ps)
		b.Run("open+sealbatch/64x"+itoa(size), func(b *testing.B) {
			b.SetBytes(int64(64 * size))
			for b.Loop() {
				openBatchGeneric(g, ps, ok)
				sealBatchGeneric(g, ps) // re-encrypt so the next open verifies
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
