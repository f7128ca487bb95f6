//go:build amd64 && gc && !purego

package zuc

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

// guardedPages maps n read-write pages followed by one inaccessible page
// and returns the read-write part: a slice ending there faults on any read
// past its end.
func guardedPages(t *testing.T, n int) []byte {
	t.Helper()
	ps := syscall.Getpagesize()
	b, err := syscall.Mmap(-1, 0, (n+1)*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(b) })
	if err := syscall.Mprotect(b[n*ps:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	return b[: n*ps : n*ps]
}

// TestMACGuardPages: message and keystream slices that end right before an
// unmapped page, cut to exactly ⌈bits/8⌉ bytes and the documented number of
// keystream words, for every byte length 0..4096: any kernel read past the
// end of either slice faults.
func TestMACGuardPages(t *testing.T) {
	forEachMACPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(61, 62))
		const maxBytes = 4096
		mpage := guardedPages(t, 2)
		kpage := guardedPages(t, 2)
		kall := unsafe.Slice((*uint32)(unsafe.Pointer(&kpage[0])), len(kpage)/4)
		msg := randomBytes(r, maxBytes)
		ks := randomWords(r, MAC256KeyStreamWords(8*maxBytes, 16))
		p := newPrefixModel(msg, 8*maxBytes, ks)
		tag := make([]byte, 16)
		for _, L := range macLengths(r, maxBytes) {
			nb := (L + 7) / 8
			m := mpage[len(mpage)-nb:]
			copy(m, msg)
			kw := func(words int) []uint32 {
				k := kall[len(kall)-words:]
				copy(k, ks)
				return k
			}
			if got, want := EIA3Tag(m, L, kw(EIA3KeyStreamWords(L))), p.eia3(L); got != want {
				t.Fatalf("EIA3 L=%d: %08x, want %08x", L, got, want)
			}
			for ti, tb := range macTagBytes {
				MAC256Tag(m, L, kw(MAC256KeyStreamWords(L, tb)), tag[:tb])
				if want := p.mac256(L, ti); string(tag[:tb]) != string(want) {
					t.Fatalf("MAC-%d L=%d: %x, want %x", 8*tb, L, tag[:tb], want)
				}
			}
		}
	})
}

// TestInitXORGuardPages: InitXORKeyStream on lanes that end right before
// an unmapped page (every lane its own length, 0..300 and a spread up to
// 4 KiB): the masked loads and stores of the last partial block must not
// touch the page, and the output must match gmsm.
func TestInitXORGuardPages(t *testing.T) {
	forEachKernels16(t, func(t *testing.T, k Kernels16) {
		r := rand.New(rand.NewPCG(63, 64))
		var pages [Lanes16][]byte
		for c := range pages {
			pages[c] = guardedPages(t, 2)
		}
		var st State16
		for _, n := range append(xorLengths()[:301], 1420, 1436, 4095, 4096) {
			var dst [Lanes16][]byte
			var want [Lanes16][]byte
			for c := range dst {
				spec := randomSpec(r, c%2 == 0)
				load(&st, c, spec)
				l := max(0, n-c) // lengths n, n-1, …: every lane ends at the page
				b := pages[c][len(pages[c])-l:]
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				want[c] = gmsmXOR(t, spec, b)
				dst[c] = b
			}
			st.InitXORKeyStream(k, &dst, &dst)
			for c := range dst {
				if string(dst[c]) != string(want[c]) {
					t.Fatalf("n=%d lane %d: output differs from gmsm", n, c)
				}
			}
		}
	})
}
