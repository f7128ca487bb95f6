//go:build amd64 && gc && !purego

package sm4ctr

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestXORKeyStreamBatch(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		r := rand.NewChaCha8([32]byte{6})
		for trial := 0; trial < 200; trial++ {
			b, enc, _ := newKey(t, randomKey(r))
			nseg := 1 + int(r.Uint64()%130)
			segs := make([]Segment, nseg)
			wants := make([][]byte, nseg)
			wantCtrs := make([][16]byte, nseg)
			for i := range segs {
				var n int
				switch r.Uint64() % 4 {
				case 0:
					n = int(r.Uint64() % 48) // small packets
				case 1:
					n = 1420
				default:
					n = int(r.Uint64() % 3000)
				}
				ctr := new([16]byte)
				r.Read(ctr[:])
				if i%3 == 0 {
					binary.BigEndian.PutUint32(ctr[12:], 0xffffffff-uint32(r.Uint64()%100))
				}
				src := make([]byte, n+int(r.Uint64()%5))
				r.Read(src)
				src = src[len(src)-n:] // misaligned start
				dst := src
				if i%2 == 1 {
					dst = make([]byte, n)
				}
				whole := n &^ 15
				wants[i] = make([]byte, whole)
				refXORKeyStream(b, *ctr, wants[i], src)
				wantCtrs[i] = *ctr
				inc32(&wantCtrs[i], n/16)
				segs[i] = Segment{Counter: ctr, Dst: dst, Src: src}
			}
			XORKeyStreamBatch(tier, enc, segs)
			for i, s := range segs {
				if !bytes.Equal(s.Dst[:len(wants[i])], wants[i]) {
					t.Fatalf("trial %d segment %d (%d bytes of %d segments): mismatch", trial, i, len(s.Src), nseg)
				}
				if *s.Counter != wantCtrs[i] {
					t.Fatalf("trial %d segment %d: counter %x want %x", trial, i, *s.Counter, wantCtrs[i])
				}
			}
		}
	})
}

func TestXORKeyStreamBatchNoAllocs(t *testing.T) {
	forEachTier(t, func(t *testing.T, tier Tier) {
		_, enc, _ := newKey(t, make([]byte, 16))
		segs := make([]Segment, 128)
		for i := range segs {
			buf := make([]byte, 64+i*11)
			segs[i] = Segment{Counter: new([16]byte), Dst: buf, Src: buf}
		}
		if a := testing.AllocsPerRun(10, func() { XORKeyStreamBatch(tier, enc, segs) }); a != 0 {
			t.Fatalf("%v allocations per batch", a)
		}
	})
}

// BenchmarkBatch compares 128 packets of one size through
// XORKeyStreamBatch against a loop of XORKeyStream calls.
func BenchmarkBatch(b *testing.B) {
	_, enc, _ := newKey(b, make([]byte, 16))
	for _, tier := range AllTiers {
		for _, n := range []int{64, 576, 1420} {
			segs := make([]Segment, 128)
			for i := range segs {
				buf := make([]byte, n)
				segs[i] = Segment{Counter: new([16]byte), Dst: buf, Src: buf}
			}
			b.Run(fmt.Sprintf("%s/batch/%d", tier, n), func(b *testing.B) {
				if !tier.Supported() {
					b.Skipf("CPU lacks %s", tier)
				}
				b.SetBytes(int64(128 * n))
				b.ReportAllocs()
				for b.Loop() {
					XORKeyStreamBatch(tier, enc, segs)
				}
			})
			b.Run(fmt.Sprintf("%s/loop/%d", tier, n), func(b *testing.B) {
				if !tier.Supported() {
					b.Skipf("CPU lacks %s", tier)
				}
				b.SetBytes(int64(128 * n))
				b.ReportAllocs()
				for b.Loop() {
					for _, s := range segs {
						XORKeyStream(tier, enc, s.Counter, s.Dst, s.Src)
					}
				}
			})
		}
	}
}
