//go:build amd64 && gc && !purego

package ublock

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/internal/cputime"
)

// The tunnel's batch: 64 packets of 1420 bytes.
const (
	batchPackets = 64
	packetBytes  = 1420
)

func benchTiers(b *testing.B, f func(b *testing.B, tier Tier)) {
	for _, tier := range AllTiers {
		b.Run(tier.String(), func(b *testing.B) {
			if !tier.Supported() {
				b.Skipf("CPU lacks %s", tier)
			}
			f(b, tier)
		})
	}
}

// BenchmarkCTR is the single-key keystream XOR: 64 × 1420-byte packets
// (one call per packet, as GCM seals them) and a lone 64-byte packet.
func BenchmarkCTR(b *testing.B) {
	r := rand.NewChaCha8([32]byte{9})
	benchTiers(b, func(b *testing.B, tier Tier) {
		for _, v := range variants[:2] {
			s, _, _ := newSchedule(r, v.keyLen, 16)
			b.Run(v.name[len("uBlock-"):]+"/64x1420", func(b *testing.B) {
				bufs := make([][]byte, batchPackets)
				for i := range bufs {
					bufs[i] = make([]byte, packetBytes)
				}
				var ctr [16]byte
				cputime.Loop(b, batchPackets*packetBytes, func() {
					for _, p := range bufs {
						XORKeyStream(tier, s, &ctr, p, p)
					}
				})
			})
			b.Run(v.name[len("uBlock-"):]+"/64", func(b *testing.B) {
				buf := make([]byte, 64)
				var ctr [16]byte
				cputime.Loop(b, len(buf), func() { XORKeyStream(tier, s, &ctr, buf, buf) })
			})
		}
	})
}

// BenchmarkECB is ECB encryption and decryption over 64 × 1420 bytes
// (whole blocks: 1408 bytes of each 1420) and a lone 64-byte message.
func BenchmarkECB(b *testing.B) {
	r := rand.NewChaCha8([32]byte{10})
	benchTiers(b, func(b *testing.B, tier Tier) {
		for _, v := range variants {
			s, _, _ := newSchedule(r, v.keyLen, v.blkLen)
			for _, dec := range []bool{false, true} {
				op, f := "enc", EncryptBlocks
				if dec {
					op, f = "dec", DecryptBlocks
				}
				name := v.name[len("uBlock-"):]
				b.Run(fmt.Sprintf("%s/%s/64x1420", name, op), func(b *testing.B) {
					n := packetBytes / 32 * 32
					bufs := make([][]byte, batchPackets)
					for i := range bufs {
						bufs[i] = make([]byte, n)
					}
					cputime.Loop(b, batchPackets*n, func() {
						for _, p := range bufs {
							f(tier, s, p, p)
						}
					})
				})
				b.Run(fmt.Sprintf("%s/%s/64", name, op), func(b *testing.B) {
					buf := make([]byte, 64)
					cputime.Loop(b, len(buf), func() { f(tier, s, buf, buf) })
				})
			}
		}
	})
}

// BenchmarkPieces is GCM's keystream of 64 × 1420-byte packets under one
// key, the tag mask E_K(J0) included (90 blocks a packet), three ways:
// every block gathered (XORPieces calls of MaxPieceBlocks blocks), each
// packet's whole passes through XORKeyStream and the rest (tail and tag
// mask) gathered, and one XORKeyStream call per packet plus one
// EncryptBlocks call for its tag mask (GCM before the gathered passes).
func BenchmarkPieces(b *testing.B) {
	r := rand.NewChaCha8([32]byte{12})
	benchTiers(b, func(b *testing.B, tier Tier) {
		s, _, _ := newSchedule(r, 16, 16)
		bufs := make([][]byte, batchPackets)
		tags := make([][16]byte, batchPackets)
		for i := range bufs {
			bufs[i] = make([]byte, packetBytes)
		}
		var ps [MaxPieceBlocks]Piece
		np, nb := 0, 0
		add := func(ctr *[16]byte, dst, src []byte) {
			if nb+PieceBlocks(len(dst)) > MaxPieceBlocks || np == len(ps) {
				XORPieces(tier, s, ps[:np])
				np, nb = 0, 0
			}
			p := Piece{Ctr: *ctr, Dst: &dst[0], N: len(dst)}
			if src != nil {
				p.Src = &src[0]
			}
			ps[np] = p
			np++
			nb += PieceBlocks(len(dst))
			inc32(ctr, PieceBlocks(len(dst)))
		}
		b.Run("128/128/all-gathered/64x1420", func(b *testing.B) {
			cputime.Loop(b, batchPackets*packetBytes, func() {
				for i, p := range bufs {
					var ctr [16]byte
					ctr[0] = byte(i)
					add(&ctr, tags[i][:], nil)
					for len(p) > 0 {
						k := min(len(p), (MaxPieceBlocks-nb)*16)
						if k == 0 {
							k = min(len(p), MaxPieceBlocks*16)
						}
						add(&ctr, p[:k], p[:k])
						p = p[k:]
					}
				}
				XORPieces(tier, s, ps[:np])
				np, nb = 0, 0
			})
		})
		b.Run("128/128/direct+gathered/64x1420", func(b *testing.B) {
			pass := 16 * tier.PassBlocks()
			cputime.Loop(b, batchPackets*packetBytes, func() {
				for i, p := range bufs {
					var ctr [16]byte
					ctr[0] = byte(i)
					add(&ctr, tags[i][:], nil)
					direct := len(p) - len(p)%pass
					XORKeyStream(tier, s, &ctr, p[:direct], p[:direct])
					add(&ctr, p[direct:], p[direct:])
				}
				XORPieces(tier, s, ps[:np])
				np, nb = 0, 0
			})
		})
		b.Run("128/128/per-packet/64x1420", func(b *testing.B) {
			cputime.Loop(b, batchPackets*packetBytes, func() {
				for i, p := range bufs {
					var ctr [16]byte
					ctr[0] = byte(i)
					EncryptBlocks(tier, s, tags[i][:], ctr[:])
					XORKeyStream(tier, s, &ctr, p, p)
				}
			})
		})
	})
}
