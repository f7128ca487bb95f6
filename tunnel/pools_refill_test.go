package tunnel

import (
	"testing"
	"time"
)

// TestBufferPoolRefill: refill fills exactly the nil slots, waits at the
// cap until a buffer is put back, and reports false once the pool closes.
func TestBufferPoolRefill(t *testing.T) {
	p := newBufferPool(3)
	keep := p.get()
	bufs := []*buffer{nil, keep, nil}
	if !p.refill(bufs) {
		t.Fatal("refill failed on an open pool")
	}
	if bufs[1] != keep || bufs[0] == nil || bufs[2] == nil || bufs[0] == bufs[2] || bufs[0] == keep || bufs[2] == keep {
		t.Fatalf("refill did not fill exactly the nil slots with distinct buffers: %p %p %p", bufs[0], bufs[1], bufs[2])
	}
	// At the cap: refill waits for a put.
	want := bufs[2]
	bufs[2] = nil
	p.put(want)
	got := p.get() // the pool is at its cap again
	done := make(chan bool)
	go func() { done <- p.refill(bufs) }()
	select {
	case <-done:
		t.Fatal("refill returned at the cap without a free buffer")
	case <-time.After(50 * time.Millisecond):
	}
	p.put(got)
	if ok := <-done; !ok || bufs[2] != got {
		t.Fatalf("refill after a put: ok %v, slot %p, want %p", ok, bufs[2], got)
	}
	// Closed: false, the slot left nil.
	bufs[0] = nil
	p.close()
	if p.refill(bufs) || bufs[0] != nil {
		t.Fatal("refill on a closed pool did not report false or filled a slot")
	}
}
