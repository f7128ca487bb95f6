package replay

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// model is the naive reference: a set of accepted counters plus the highest
// one. It states the acceptance rule directly, with no ring arithmetic.
type model struct {
	seen map[uint64]bool
	last uint64
}

func newModel() *model { return &model{seen: make(map[uint64]bool)} }

func (m *model) validate(counter, limit uint64) bool {
	if counter >= limit || m.seen[counter] {
		return false
	}
	if counter < m.last && m.last-counter > WindowSize {
		return false
	}
	m.seen[counter] = true
	if counter > m.last {
		m.last = counter
	}
	// Forget counters that can never be accepted again, to keep the map small.
	if len(m.seen) > 4*WindowSize {
		for c := range m.seen {
			if m.last-c > WindowSize {
				delete(m.seen, c)
			}
		}
	}
	return true
}

func TestWindowSize(t *testing.T) {
	if WindowSize < 8128 {
		t.Fatalf("WindowSize = %d, want >= 8128", WindowSize)
	}
	if ringBlocks&(ringBlocks-1) != 0 || 1<<blockShift != blockBits {
		t.Fatal("ring constants are inconsistent")
	}
}

// TestTable walks a hand-written sequence in the spirit of the Linux
// kernel's WireGuard self-test: in-order, duplicates, reordering inside the
// window, the exact window edges, far jumps and the limit.
func TestTable(t *testing.T) {
	const limit = math.MaxUint64 - 8192 // wireguard's RejectAfterMessages shape
	const w = WindowSize
	steps := []struct {
		counter uint64
		want    bool
	}{
		{0, true},
		{1, true},
		{1, false},
		{9, true},
		{8, true},
		{7, true},
		{7, false},
		{w + 9, true},     // head moves to w+9; 9 is exactly WindowSize behind
		{9, false},        // already seen (and on the edge)
		{10, true},        // inside the window, never seen
		{2, false},        // never seen, but w+7 behind: too old
		{w + 8, true},     // just below head
		{w + 8, false},    // duplicate
		{w + 10, true},    // new head
		{10, false},       // already seen
		{11, true},        // edge of window (exactly w behind)
		{12, true},        // inside
		{2*w + 20, true},  // jump more than a window ahead
		{w + 10, false},   // w+10 behind: too old
		{w + 20, true},    // exactly on the edge
		{2*w + 19, true},  // reordered
		{2*w + 19, false}, // duplicate
		{1 << 40, true},   // far jump clears the whole ring
		{1<<40 - 1, true}, // reordered after far jump
		{1<<40 - w, true}, // exactly on the edge
		{1<<40 - w - 1, false},
		{2*w + 20, false}, // ancient
		{limit - 1, true}, // last allowed counter
		{limit, false},    // at limit
		{limit + 1, false},
		{math.MaxUint64, false},
		{limit - 2, true}, // still inside the window below the top
	}
	var f Filter
	for i, s := range steps {
		if got := f.ValidateCounter(s.counter, limit); got != s.want {
			t.Fatalf("step %d: ValidateCounter(%d) = %v, want %v", i, s.counter, got, s.want)
		}
	}
}

func TestZeroValueAcceptsZeroOnce(t *testing.T) {
	var f Filter
	if !f.ValidateCounter(0, 1) {
		t.Fatal("zero filter rejected counter 0")
	}
	if f.ValidateCounter(0, 1) {
		t.Fatal("counter 0 accepted twice")
	}
	if f.ValidateCounter(1, 1) {
		t.Fatal("counter equal to limit accepted")
	}
	if f.ValidateCounter(0, 0) {
		t.Fatal("limit 0 must reject everything")
	}
}

func TestReset(t *testing.T) {
	var f Filter
	for c := uint64(0); c < 300; c++ {
		f.ValidateCounter(c, math.MaxUint64)
	}
	f.ValidateCounter(1<<20, math.MaxUint64)
	f.Reset()
	if f != (Filter{}) {
		t.Fatal("Reset did not restore the zero value")
	}
	for c := uint64(0); c < 300; c++ {
		if !f.ValidateCounter(c, math.MaxUint64) {
			t.Fatalf("counter %d rejected after Reset", c)
		}
	}
}

// TestRingWrap advances the head one counter at a time through many ring
// revolutions and checks that every counter inside the window is remembered
// and that stale bits from the previous revolution never leak in.
func TestRingWrap(t *testing.T) {
	var f Filter
	const total = 5 * ringBlocks * blockBits
	for c := uint64(0); c < total; c++ {
		if !f.ValidateCounter(c, math.MaxUint64) {
			t.Fatalf("fresh counter %d rejected", c)
		}
		if f.ValidateCounter(c, math.MaxUint64) {
			t.Fatalf("counter %d accepted twice", c)
		}
		if c >= WindowSize && f.ValidateCounter(c-WindowSize, math.MaxUint64) {
			t.Fatalf("edge counter %d accepted twice", c-WindowSize)
		}
	}
	// Now skip every other counter for a few revolutions: the gaps must
	// remain acceptable exactly while they are inside the window.
	base := uint64(total)
	for c := base; c < base+3*ringBlocks*blockBits; c += 2 {
		if !f.ValidateCounter(c, math.MaxUint64) {
			t.Fatalf("fresh counter %d rejected", c)
		}
	}
	head := base + 3*ringBlocks*blockBits - 2
	for c := head - WindowSize; c < head; c++ {
		want := (c-base)%2 == 1
		if got := f.ValidateCounter(c, math.MaxUint64); got != want {
			t.Fatalf("gap counter %d: got %v want %v", c, got, want)
		}
	}
}

// TestFarJump checks jumps of every size around the ring length, including
// partial clears that must keep the surviving blocks intact.
func TestFarJump(t *testing.T) {
	for jump := uint64(1); jump <= 3*ringBlocks*blockBits; jump += 61 {
		var f Filter
		m := newModel()
		start := uint64(5000)
		for c := start - 200; c <= start; c++ {
			f.ValidateCounter(c, math.MaxUint64)
			m.validate(c, math.MaxUint64)
		}
		head := start + jump
		if f.ValidateCounter(head, math.MaxUint64) != m.validate(head, math.MaxUint64) {
			t.Fatalf("jump %d: head disagreement", jump)
		}
		lo := uint64(0)
		if head > WindowSize+100 {
			lo = head - WindowSize - 100
		}
		for c := lo; c <= head; c++ {
			if got, want := f.ValidateCounter(c, math.MaxUint64), m.validate(c, math.MaxUint64); got != want {
				t.Fatalf("jump %d, counter %d: got %v want %v", jump, c, got, want)
			}
		}
	}
}

// TestRandomVsModel drives the filter and the naive model with the same
// random streams: mostly increasing with reordering, duplicates, jumps and a
// small limit so the limit branch is hit too.
func TestRandomVsModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 20; round++ {
		var f Filter
		m := newModel()
		limit := uint64(math.MaxUint64)
		if round%4 == 3 {
			limit = 50_000 + rng.Uint64N(50_000)
		}
		var next uint64
		n := 60_000
		if testing.Short() {
			n = 10_000
		}
		for i := 0; i < n; i++ {
			var c uint64
			switch r := rng.IntN(100); {
			case r < 60:
				c = next
				next++
			case r < 85: // reordered, possibly beyond the window
				back := rng.Uint64N(WindowSize + 300)
				if back <= next {
					c = next - back
				}
			case r < 95: // duplicate of something recent
				if next > 0 {
					c = next - 1 - rng.Uint64N(min(next, 64))
				}
			case r < 99: // jump
				next += rng.Uint64N(4 * WindowSize)
				c = next
			default: // jump near the limit
				c = limit - rng.Uint64N(3)
			}
			if got, want := f.ValidateCounter(c, limit), m.validate(c, limit); got != want {
				t.Fatalf("round %d step %d counter %d (limit %d): got %v want %v", round, i, c, limit, got, want)
			}
		}
	}
}

// FuzzFilter interprets the input as a sequence of counters (16-bit deltas
// with a sign bit, plus occasional absolute jumps) and compares the filter
// with the model.
func FuzzFilter(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 1, 0x80, 1})
	f.Add([]byte{0x40, 0xff, 0xc0, 0x10, 0, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		var flt Filter
		m := newModel()
		const limit = 1 << 30
		var cur uint64
		for len(data) >= 2 {
			v := binary.BigEndian.Uint16(data)
			data = data[2:]
			d := uint64(v & 0x3fff)
			switch v >> 14 {
			case 0:
				cur += d
			case 1:
				cur += d << 4
			case 2:
				if d > cur {
					cur = 0
				} else {
					cur -= d
				}
			case 3:
				cur = d << 16
			}
			if got, want := flt.ValidateCounter(cur, limit), m.validate(cur, limit); got != want {
				t.Fatalf("counter %d: got %v want %v", cur, got, want)
			}
		}
	})
}

func TestNoAllocs(t *testing.T) {
	var f Filter
	var c uint64
	allocs := testing.AllocsPerRun(1000, func() {
		f.ValidateCounter(c, math.MaxUint64)
		c += 3
	})
	if allocs != 0 {
		t.Fatalf("ValidateCounter allocates %v times", allocs)
	}
}

func BenchmarkValidateCounter(b *testing.B) {
	b.Run("in-order", func(b *testing.B) {
		var f Filter
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			f.ValidateCounter(uint64(i), math.MaxUint64)
		}
	})
	b.Run("reordered", func(b *testing.B) {
		var f Filter
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			// swap neighbours in groups of 8: 7,6,...,0,15,14,...
			c := uint64(i) ^ 7
			f.ValidateCounter(c, math.MaxUint64)
		}
	})
	b.Run("far-jump", func(b *testing.B) {
		var f Filter
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			f.ValidateCounter(uint64(i)*(WindowSize*2), math.MaxUint64)
		}
	})
}
