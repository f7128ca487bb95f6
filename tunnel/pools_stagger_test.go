package tunnel

import (
	"testing"
	"unsafe"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/internal/cputime"
)

// TestBufferStagger checks the pool's buffer placement: whole buffers of
// BufferSize bytes, bufferStaggers consecutive allocations at distinct
// cache-line offsets modulo 4 KiB, and the stagger within the page
// rounding of the allocation (it costs no memory).
func TestBufferStagger(t *testing.T) {
	const page = 8192 // the Go runtime's page: large allocations round up to it
	if max := (BufferSize+page-1)/page*page - BufferSize; (bufferStaggers-1)*bufferStagger > max {
		t.Fatalf("stagger up to %d bytes exceeds the %d bytes of page rounding", (bufferStaggers-1)*bufferStagger, max)
	}
	if bufferStaggers*bufferStagger != 4096 {
		t.Fatalf("staggers cover %d bytes, want 4096", bufferStaggers*bufferStagger)
	}
	p := newBufferPool(2 * bufferStaggers)
	seen := make(map[uintptr]int)
	var bufs []*buffer
	for k := 0; k < 2*bufferStaggers; k++ {
		b := p.tryGet()
		if b == nil {
			t.Fatalf("buffer %d: pool empty", k)
		}
		if len(b) != BufferSize {
			t.Fatalf("buffer %d: %d bytes", k, len(b))
		}
		for i := range b { // each buffer fully usable, none overlapping
			b[i] = byte(k)
		}
		bufs = append(bufs, b)
		a := uintptr(unsafe.Pointer(b))
		if a%bufferStagger != 0 {
			t.Fatalf("buffer %d at %#x: not cache-line aligned", k, a)
		}
		if k < bufferStaggers {
			if j, ok := seen[a%4096]; ok {
				t.Fatalf("buffers %d and %d at the same offset %#x modulo 4 KiB", j, k, a%4096)
			}
			seen[a%4096] = k
		}
	}
	for k, b := range bufs {
		for i := range b {
			if b[i] != byte(k) {
				t.Fatalf("buffer %d byte %d overwritten", k, i)
			}
		}
	}
	p.put(bufs...)
	if s := p.stats(); s.allocated != 2*bufferStaggers || s.free != 2*bufferStaggers {
		t.Fatalf("stats %+v", s)
	}
}

// BenchmarkPoolSeal seals a batch of 64 packets of 1400 bytes (header ‖
// body) sitting at the start of buffers from the pool (staggered) and of
// buffers allocated one by one without the stagger (every packet at the
// same address modulo 4 KiB, as the pool placed them before): thread CPU
// time, the tunnel's buffer layout in isolation.
func BenchmarkPoolSeal(b *testing.B) {
	const n, size = 64, 1400
	for _, suite := range []ciphers.SuiteID{ciphers.ZUC128, ciphers.ZUC256, ciphers.SM4GCM} {
		p := suite.Params()
		key, err := ciphers.NewKey(suite, ciphers.DirectionKeys{
			Enc: make([]byte, p.EncKeySize), MAC: make([]byte, p.MACKeySize), Salt: make([]byte, p.SaltSize)})
		if err != nil {
			b.Fatal(err)
		}
		pool := newBufferPool(n)
		for _, layout := range []string{"staggered", "unstaggered"} {
			pkts := make([][]byte, n)
			for i := range pkts {
				buf := pool.tryGet()
				if layout == "unstaggered" {
					buf = new(buffer)
				}
				pkts[i] = buf[:size]
			}
			b.Run(suite.String()+"/"+layout, func(b *testing.B) {
				cputime.Loop(b, n*(size-ciphers.HeaderSize), func() {
					for i := range pkts {
						pkts[i] = pkts[i][:size]
					}
					if err := key.Seal(pkts); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}
