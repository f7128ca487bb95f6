//go:build amd64 && gc && !purego

package sm4

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// The AVX512AESNI tier's bitsliced kernel only runs from BitslicedBlocks
// blocks on, beyond the lengths of the all-tier tests, so these tests
// drive it directly: every block count across its first passes and the
// tail threshold, the plane layout, gathered batches, and a fuzzer.

func requireBitsliced(t testing.TB) {
	t.Helper()
	if !AVX512AESNI.Supported() {
		kerneltest.Unsupported(t, "CPU lacks %s: the bitsliced SM4 kernel is not tested", AVX512AESNI)
	}
}

// TestBitslicedEveryBlockCount runs EncryptBlocks and XORKeyStream of
// AVX512AESNI at every block count from 1 to 1600 (three passes, every
// tail length on both sides of bitslicedTailBlocks) against gmsm, with
// random keys, counters (the inc32 word wrapping inside the call half the
// time), alignments, in place and out of place, and checks that nothing
// is written past the output.
func TestBitslicedEveryBlockCount(t *testing.T) {
	requireBitsliced(t)
	r := rand.NewChaCha8([32]byte{21})
	for nb := 1; nb <= 1600; nb++ {
		b, enc, dec := newKey(t, randomKey(r))
		n := nb * BlockSize
		inPlace := nb%2 == 0
		dst, src := buffers(r, n, nb%7, nb%5, inPlace)
		orig := bytes.Clone(src)
		want := make([]byte, n)
		for i := 0; i < n; i += BlockSize {
			b.Encrypt(want[i:], orig[i:])
		}
		guard := bytes.Clone(dst[:cap(dst)][n:])
		EncryptBlocks(AVX512AESNI, enc, dst, src)
		if !bytes.Equal(dst, want) {
			t.Fatalf("ECB %d blocks (in place %v): mismatch", nb, inPlace)
		}
		if !bytes.Equal(dst[:cap(dst)][n:], guard) {
			t.Fatalf("ECB %d blocks: wrote past the end of dst", nb)
		}
		back := make([]byte, n)
		EncryptBlocks(AVX512AESNI, dec, back, dst)
		if !bytes.Equal(back, orig) {
			t.Fatalf("ECB %d blocks: decryption mismatch", nb)
		}

		var ctr [16]byte
		r.Read(ctr[:])
		if nb%2 == 1 {
			binary.BigEndian.PutUint32(ctr[12:], -uint32(r.Uint64()%1700))
		}
		tail := int(r.Uint64() % 16) // a partial block the kernel must leave alone
		dst, src = buffers(r, n+tail, nb%9, nb%11, inPlace)
		orig = bytes.Clone(src)
		want = make([]byte, n)
		refXORKeyStream(b, ctr, want, orig[:n])
		guard = bytes.Clone(dst[n:cap(dst)])
		c := ctr
		XORKeyStream(AVX512AESNI, enc, &c, dst, src)
		if !bytes.Equal(dst[:n], want) {
			t.Fatalf("CTR %d blocks (in place %v, ctr %x): mismatch", nb, inPlace, ctr)
		}
		if !bytes.Equal(dst[n:cap(dst)], guard) {
			t.Fatalf("CTR %d blocks: wrote past the whole blocks", nb)
		}
		wantCtr := ctr
		inc32(&wantCtr, nb)
		if c != wantCtr {
			t.Fatalf("CTR %d blocks: counter %x, want %x", nb, c, wantCtr)
		}
	}
}

// TestBitslicedLayout checks the documented plane layout of the forward
// transpose (kernels/_gen/sm4bitsliced) against a bit-by-bit model: block
// 64g + 4j + L sits at plane bit 128L + 8j + g of row 16r+p (bit r of
// block byte p).
func TestBitslicedLayout(t *testing.T) {
	requireBitsliced(t)
	r := rand.NewChaCha8([32]byte{3})
	src := make([]byte, bitslicedPassBytes)
	r.Read(src)
	dst := make([]byte, bitslicedPassBytes)
	transposeBitsliced(&dst[0], &src[0])
	const pb = BitslicedBlocks / 8 // bytes per plane
	for p := 0; p < 16; p++ {
		for bit := 0; bit < 8; bit++ {
			row := dst[pb*(16*bit+p):][:pb]
			for q := 0; q < BitslicedBlocks; q++ {
				i := pb*(q&7) + 4*((q>>3)&15) + q>>7
				want := src[16*i+p] >> bit & 1
				if got := row[q/8] >> (q % 8) & 1; got != want {
					t.Fatalf("plane (byte %d, bit %d) position %d = %d, want bit of block %d = %d", p, bit, q, got, i, want)
				}
			}
		}
	}
}

// TestXORPiecesBatch checks XORPiecesBatch on every tier against the
// per-piece reference for random gathered batches from one block to
// several bitsliced passes (tag masks, partial blocks, counter wraps,
// keystream only, in place, misaligned), with guards around every piece.
func TestXORPiecesBatch(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{22})
		totals := []int{1, 31, 128, 129, 319, 320, 511, 512, 513, 831, 832, 1024, 1600, 5760}
		for trial := 0; trial < 120; trial++ {
			total := totals[trial%len(totals)]
			if trial >= 2*len(totals) {
				total = 1 + int(r.Uint64()%3000)
			}
			b, enc, _ := newKey(t, randomKey(r))
			c := newPieceCase(r, b, total)
			XORPiecesBatch(tier, enc, c.ps)
			c.check(t, fmt.Sprintf("%s, %d blocks", tier, total))
		}
	})
}

// TestXORPiecesBatchNoAllocs checks that a batch of 64 packets' pieces
// allocates nothing on any tier.
func TestXORPiecesBatchNoAllocs(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		_, enc, _ := newKey(t, make([]byte, 16))
		bufs := make([]byte, 64*1420)
		tags := make([]byte, 64*16)
		ps := make([]Piece, 0, 128)
		for i := range 64 {
			ps = append(ps, Piece{Dst: &tags[16*i], N: 16})
			ps = append(ps, Piece{Dst: &bufs[1420*i], Src: &bufs[1420*i], N: 1420})
		}
		if a := testing.AllocsPerRun(10, func() { XORPiecesBatch(tier, enc, ps) }); a != 0 {
			t.Fatalf("%v allocations per call", a)
		}
	})
}

// FuzzBitsliced checks XORKeyStream (in place) and EncryptBlocks of
// AVX512AESNI, which run the bitsliced kernel from 8 KiB on, against the
// references on arbitrary keys, counters and data.
func FuzzBitsliced(f *testing.F) {
	f.Add(make([]byte, 16), make([]byte, 16), make([]byte, 100))
	f.Add(bytes.Repeat([]byte{0xff}, 16), bytes.Repeat([]byte{0xff}, 16), make([]byte, 8192+5120+7))
	f.Add(make([]byte, 16), bytes.Repeat([]byte{0xff}, 16), make([]byte, 8300))
	f.Fuzz(func(t *testing.T, key, ctrb, data []byte) {
		requireBitsliced(t)
		if len(key) != 16 || len(ctrb) != 16 {
			return
		}
		blk, enc, _ := newKey(t, key)
		var ctr [16]byte
		copy(ctr[:], ctrb)
		whole := len(data) &^ 15
		want := bytes.Clone(data)
		refXORKeyStream(blk, ctr, want[:whole], data[:whole])
		got := bytes.Clone(data)
		c := ctr
		XORKeyStream(AVX512AESNI, enc, &c, got, got)
		if !bytes.Equal(got, want) {
			t.Fatalf("XORKeyStream differs from the reference GCTR (%d bytes)", len(data))
		}
		ecb := make([]byte, whole)
		EncryptBlocks(AVX512AESNI, enc, ecb, data[:whole])
		for i := 0; i < whole; i += BlockSize {
			var w [16]byte
			blk.Encrypt(w[:], data[i:i+BlockSize])
			if !bytes.Equal(ecb[i:i+BlockSize], w[:]) {
				t.Fatalf("EncryptBlocks differs from gmsm at block %d", i/BlockSize)
			}
		}
	})
}
