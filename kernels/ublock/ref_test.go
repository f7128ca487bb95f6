//go:build amd64 && gc && !purego

package ublock

import (
	"encoding/binary"
	"math/bits"

	"github.com/gmtun/gmtun/internal/reftables"
)

// A table-based reference uBlock written from the specification summary
// (docs: ublock-notes.md §3–§5), the oracle of the kernel tests, on the
// tables of internal/reftables. Tables are fine here: this file is a test.

var (
	refS  = reftables.UBlockS
	refRC = reftables.UBlockRC
	refPK = map[int][]int{
		16: reftables.UBlockPK128128[:],
		32: reftables.UBlockPK128256[:],
		64: reftables.UBlockPK256256[:],
	}
	refPL = map[int][]int{16: reftables.UBlockPL128[:], 32: reftables.UBlockPL256[:]}
	refPR = map[int][]int{16: reftables.UBlockPR128[:], 32: reftables.UBlockPR256[:]}
)

func refT(x byte) byte {
	x <<= 1
	if x&0x10 != 0 {
		x ^= 0x13
	}
	return x
}

// refKeySchedule returns RK_0 ‖ … ‖ RK_r and r for a key of 16 or 32
// bytes and a block of 16 or 32 bytes.
func refKeySchedule(key []byte, blockSize int) ([]byte, int) {
	rounds, pk := 24, refPK[32]
	switch {
	case len(key) == 16:
		rounds, pk = 16, refPK[16]
	case blockSize == 32:
		pk = refPK[64]
	}
	nib := make([]byte, 2*len(key))
	for i, b := range key {
		nib[2*i], nib[2*i+1] = b>>4, b&15
	}
	wn := len(nib) / 4
	pack := func() []byte {
		out := make([]byte, blockSize)
		for i := range out {
			out[i] = nib[2*i]<<4 | nib[2*i+1]
		}
		return out
	}
	rk := pack()
	for i := 1; i <= rounds; i++ {
		y := make([]byte, 2*wn)
		for j := range y {
			y[j] = nib[pk[j]]
		}
		k0, k1 := y[:wn], y[wn:]
		t := append([]byte(nil), k0...)
		for j := 0; j < 8; j++ {
			t[j] ^= byte(refRC[i-1]>>(28-4*j)) & 15
		}
		k2, k3 := nib[2*wn:3*wn], nib[3*wn:]
		for j := 0; j < wn; j++ {
			k2[j] ^= refS[t[j]]
			k3[j] ^= refT(k1[j])
		}
		nib = append(append(append(append([]byte(nil), k2...), k3...), k1...), k0...)
		rk = append(rk, pack()...)
	}
	return rk, rounds
}

// refRotWords returns the half h with every big-endian 32-bit word rotated
// left by s.
func refRotWords(h []byte, s int) []byte {
	out := make([]byte, len(h))
	for i := 0; i < len(h); i += 4 {
		binary.BigEndian.PutUint32(out[i:], bits.RotateLeft32(binary.BigEndian.Uint32(h[i:]), s))
	}
	return out
}

func refXOR(a, b []byte) {
	for i := range a {
		a[i] ^= b[i]
	}
}

func refSub(h []byte, s *[16]byte) {
	for i, b := range h {
		h[i] = s[b>>4]<<4 | s[b&15]
	}
}

func refPerm(h []byte, p []int, inverse bool) {
	in := append([]byte(nil), h...)
	for i := range p {
		if inverse {
			h[p[i]] = in[i]
		} else {
			h[i] = in[p[i]]
		}
	}
}

// refEncrypt encrypts one block in place with round keys rk.
func refEncrypt(rk []byte, rounds int, blk []byte) {
	n := len(blk)
	x0, x1 := blk[:n/2], blk[n/2:]
	for i := 0; i < rounds; i++ {
		refXOR(blk, rk[i*n:(i+1)*n])
		refSub(x0, &refS)
		refSub(x1, &refS)
		refXOR(x1, x0)
		refXOR(x0, refRotWords(x1, 4))
		refXOR(x1, refRotWords(x0, 8))
		refXOR(x0, refRotWords(x1, 8))
		refXOR(x1, refRotWords(x0, 20))
		refXOR(x0, x1)
		refPerm(x0, refPL[n], false)
		refPerm(x1, refPR[n], false)
	}
	refXOR(blk, rk[rounds*n:(rounds+1)*n])
}

// refDecrypt decrypts one block in place with round keys rk.
func refDecrypt(rk []byte, rounds int, blk []byte) {
	n := len(blk)
	var inv [16]byte
	for x, y := range refS {
		inv[y] = byte(x)
	}
	y0, y1 := blk[:n/2], blk[n/2:]
	refXOR(blk, rk[rounds*n:(rounds+1)*n])
	for i := rounds - 1; i >= 0; i-- {
		refPerm(y0, refPL[n], true)
		refPerm(y1, refPR[n], true)
		refXOR(y0, y1)
		refXOR(y1, refRotWords(y0, 20))
		refXOR(y0, refRotWords(y1, 8))
		refXOR(y1, refRotWords(y0, 8))
		refXOR(y0, refRotWords(y1, 4))
		refXOR(y1, y0)
		refSub(y0, &inv)
		refSub(y1, &inv)
		refXOR(blk, rk[i*n:(i+1)*n])
	}
}

// refCTR is GCTR with inc32 over any length, advancing ctr by the blocks
// used.
func refCTR(rk []byte, rounds int, ctr *[16]byte, dst, src []byte) {
	for len(src) > 0 {
		ks := *ctr
		refEncrypt(rk, rounds, ks[:])
		n := min(16, len(src))
		for i := 0; i < n; i++ {
			dst[i] = src[i] ^ ks[i]
		}
		binary.BigEndian.PutUint32(ctr[12:], binary.BigEndian.Uint32(ctr[12:])+1)
		dst, src = dst[n:], src[n:]
	}
}
