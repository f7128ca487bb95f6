package csum

import (
	"bytes"
	"testing"
)

// FuzzSum: every supported tier against the reference, whole and split
// at an even point (the first piece on one tier, the rest on another).
func FuzzSum(f *testing.F) {
	f.Add([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}, uint64(0), uint16(4))
	f.Add(bytes.Repeat([]byte{0xff}, 301), ^uint64(0), uint16(128))
	f.Add(make([]byte, 1500), uint64(1), uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, acc uint64, split uint16) {
		want := refFold(acc, b)
		h := min(int(split)&^1, len(b)&^1)
		for _, a := range AllTiers {
			if !a.Supported() {
				continue
			}
			if got := Fold(a.Sum(acc, b)); got != want {
				t.Fatalf("%v: %04x, want %04x", a, got, want)
			}
			for _, c := range AllTiers {
				if !c.Supported() {
					continue
				}
				if got := Fold(c.Sum(a.Sum(acc, b[:h]), b[h:])); got != want {
					t.Fatalf("%v then %v split at %d: %04x, want %04x", a, c, h, got, want)
				}
			}
		}
		if got := Fold(Sum(acc, b)); got != want {
			t.Fatalf("Sum: %04x, want %04x", got, want)
		}
	})
}

// FuzzCopySum: every supported tier copies exactly src to dst at any
// offset and returns the reference sum.
func FuzzCopySum(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdefXYZ"), uint64(5), uint8(3))
	f.Add(bytes.Repeat([]byte{0xff}, 1449), ^uint64(0), uint8(63))
	f.Fuzz(func(t *testing.T, src []byte, acc uint64, off uint8) {
		want := refFold(acc, src)
		o := int(off % 64)
		for _, tier := range AllTiers {
			if !tier.Supported() {
				continue
			}
			buf := bytes.Repeat([]byte{0x5a}, o+len(src)+8)
			if got := Fold(tier.CopySum(buf[o:], src, acc)); got != want {
				t.Fatalf("%v: %04x, want %04x", tier, got, want)
			}
			if !bytes.Equal(buf[o:o+len(src)], src) ||
				!bytes.Equal(buf[:o], bytes.Repeat([]byte{0x5a}, o)) ||
				!bytes.Equal(buf[o+len(src):], bytes.Repeat([]byte{0x5a}, 8)) {
				t.Fatalf("%v: dst is not src at offset %d with the rest untouched", tier, o)
			}
		}
		dst := make([]byte, len(src))
		if got := Fold(CopySum(dst, src, acc)); got != want || !bytes.Equal(dst, src) {
			t.Fatalf("CopySum: %04x, want %04x", got, want)
		}
	})
}
