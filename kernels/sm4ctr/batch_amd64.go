//go:build amd64 && gc && !purego

package sm4ctr

import (
	"crypto/subtle"
	"encoding/binary"
)

// Segment is one packet's part of a batched keystream XOR: the whole-block
// prefix of Src is XORed with the keystream that starts at *Counter and
// written to Dst, and *Counter is advanced past the blocks used, exactly
// as XORKeyStream does for one buffer.
type Segment struct {
	Counter  *[16]byte
	Dst, Src []byte
}

// maxPassBlocks is the largest full pass of any tier (AVX512GFNI: one
// byte-sliced set of 64 blocks).
const maxPassBlocks = 64

// PassBlocks is the number of blocks tier t handles in one full pass
// (Width blocks per register set, all sets interleaved): calls whose
// block count is a multiple of it keep the kernel's pipeline full.
func (t Tier) PassBlocks() int {
	if t == AVX512GFNI {
		return 64
	}
	return 24 // three sets of 8
}

// XORKeyStreamBatch applies XORKeyStream to every segment under one key
// while keeping the kernel's pipeline full across segment boundaries: the
// full passes of each segment run straight through the CTR kernel, and the
// leftover blocks of all segments (fewer than a pass each) are gathered as
// counter blocks, encrypted together in full passes and XORed into place.
// Segments must not overlap each other; within a segment Dst and Src must
// be equal or not overlap.
func XORKeyStreamBatch(t Tier, rk *[32]uint32, segs []Segment) {
	t.check()
	pass := t.PassBlocks()
	var g gather
	for i := range segs {
		s := &segs[i]
		n := len(s.Src) / BlockSize
		if len(s.Dst) < n*BlockSize {
			panic("sm4ctr: output smaller than input")
		}
		direct := n - n%pass
		if direct > 0 {
			xorKeyStream(t, rk, s.Counter, &s.Dst[0], &s.Src[0], direct)
			inc32(s.Counter, direct)
		}
		for done := direct; done < n; {
			k := min(n-done, pass-g.blocks)
			g.add(s.Counter, s.Dst[done*BlockSize:(done+k)*BlockSize], s.Src[done*BlockSize:(done+k)*BlockSize])
			done += k
			if g.blocks == pass {
				g.flush(t, rk)
			}
		}
	}
	g.flush(t, rk)
}

// gather collects counter blocks of several segments for one ECB pass.
type gather struct {
	ks       [maxPassBlocks * BlockSize]byte // counter blocks, then keystream
	dst, src [maxPassBlocks][]byte           // pieces to XOR, in ks order
	pieces   int
	blocks   int
}

// add queues len(src)/16 counter blocks starting at *ctr and advances ctr.
func (g *gather) add(ctr *[16]byte, dst, src []byte) {
	n := len(src) / BlockSize
	c := binary.BigEndian.Uint32(ctr[12:])
	ks := g.ks[g.blocks*BlockSize : (g.blocks+n)*BlockSize]
	for i := 0; i < len(ks); i += BlockSize {
		b := (*[BlockSize]byte)(ks[i:])
		copy(b[:12], ctr[:12])
		binary.BigEndian.PutUint32(b[12:], c)
		c++
	}
	binary.BigEndian.PutUint32(ctr[12:], c)
	g.blocks += n
	g.dst[g.pieces], g.src[g.pieces] = dst, src
	g.pieces++
}

// flush encrypts the queued counter blocks and XORs the keystream into the
// queued pieces.
func (g *gather) flush(t Tier, rk *[32]uint32) {
	if g.blocks == 0 {
		return
	}
	ks := g.ks[:g.blocks*BlockSize]
	EncryptBlocks(t, rk, ks, ks)
	off := 0
	for i := 0; i < g.pieces; i++ {
		off += subtle.XORBytes(g.dst[i], g.src[i], ks[off:])
		g.dst[i], g.src[i] = nil, nil
	}
	g.pieces, g.blocks = 0, 0
}
