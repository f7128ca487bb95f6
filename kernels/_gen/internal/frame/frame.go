// Package frame emits what the generators do with a kernel's own stack
// frame: areas aligned for whole-register access, and zeroing the
// key-derived ones before the kernel returns.
package frame

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// AlignedArea allocates size bytes of the frame aligned to 64 bytes and
// returns a register pointing at them: the Go stack is only 8-byte
// aligned, and a ZMM access that crosses a cache line costs two.
func AlignedArea(size int) GPVirtual {
	m := AllocLocal(size + 64)
	p := GP64()
	LEAQ(m, p)
	ADDQ(U8(63), p)
	ANDQ(I8(-64), p)
	return p
}

// Zero zeroes size bytes of the frame from m (a multiple of 32) with YMM
// stores, ZMM ones when zmm, so that no copy of key material outlives the
// call in the goroutine's stack (docs/SECURITY.md, "Kernel frames"). The
// zero register is loaded from zero (at least 64 zero bytes), not made
// by XORing it with itself: the register allocator would take that for a
// read of a value live since the call's entry.
func Zero(m Mem, size int, zmm bool, zero Mem) {
	Comment("Zero the round keys in the frame.")
	step, z := 32, VecVirtual(YMM())
	if zmm {
		step, z = 64, ZMM()
		VMOVDQU64(zero, z)
	} else {
		VMOVDQU(zero, z)
	}
	for off := 0; off < size; off += step {
		if zmm {
			VMOVDQU64(z, m.Offset(off))
		} else {
			VMOVDQU(z, m.Offset(off))
		}
	}
}
