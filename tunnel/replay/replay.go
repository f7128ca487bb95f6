// Package replay implements the anti-replay sliding window of RFC 6479
// ("IPsec Anti-Replay Algorithm without Bit Shifting").
//
// The window is a ring of 64-bit blocks. Advancing the window clears whole
// blocks instead of shifting a bitmap, so the cost of a far jump is bounded by
// the ring size and the cost of an in-window check is one load and one store.
// One block of the ring is always being reused, so the usable window is
// (ringBlocks-1)*64 = 8128 counters, which satisfies gmtun's requirement of at
// least 8128 packets of reordering tolerance (RFC 6479 §2, "redundant bits").
package replay

const (
	blockBits  = 64             // bits per ring block (RFC 6479 §2: one machine word)
	ringBlocks = 128            // number of blocks in the ring; a power of two
	blockMask  = ringBlocks - 1 // ring index mask
	bitMask    = blockBits - 1  // bit index mask within a block
	blockShift = 6              // log2(blockBits)
	// WindowSize is the number of counters below the highest accepted
	// counter that are still tracked. A counter c is acceptable (if unseen)
	// while highest-c <= WindowSize.
	WindowSize = (ringBlocks - 1) * blockBits
)

// Filter rejects counters that were already accepted or that fell out of the
// window. The zero value is an empty filter that accepts any counter below
// the limit, including 0.
//
// A Filter is not safe for concurrent use: the data plane calls it from the
// one sequential receiver of a keypair, after the packet has been
// authenticated.
type Filter struct {
	last uint64             // highest counter accepted so far
	ring [ringBlocks]uint64 // bitmap of accepted counters, one bit per counter
}

// Reset returns the filter to its zero state, as used when a new keypair is
// installed.
func (f *Filter) Reset() {
	f.last = 0
	clear(f.ring[:])
}

// ValidateCounter reports whether counter is acceptable and, if so, records
// it. A counter is acceptable when counter < limit, it has not been accepted
// before, and it is not more than WindowSize below the highest accepted
// counter.
//
// ValidateCounter mutates the window, so the caller must call it only for
// packets whose authentication tag has already been verified; otherwise an
// attacker could advance the window with forged counters (RFC 6479 §2, the
// check-then-update order of RFC 4303 §3.4.3).
func (f *Filter) ValidateCounter(counter, limit uint64) bool {
	if counter >= limit {
		return false
	}
	block := counter >> blockShift
	if counter > f.last {
		// Advance: clear every block between the old head block and the
		// new one. They hold counters older than the new window (or none).
		current := f.last >> blockShift
		diff := block - current
		if diff > ringBlocks {
			diff = ringBlocks // a far jump clears the whole ring once
		}
		for i := current + 1; i <= current+diff; i++ {
			f.ring[i&blockMask] = 0
		}
		f.last = counter
	} else if f.last-counter > WindowSize {
		return false // too old
	}
	idx := block & blockMask
	bit := uint64(1) << (counter & bitMask)
	old := f.ring[idx]
	f.ring[idx] = old | bit
	return old&bit == 0
}
