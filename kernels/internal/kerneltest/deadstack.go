package kerneltest

import "unsafe"

// DeadStackBytes is how much dead stack DeadStack returns.
const DeadStackBytes = 16 << 10

// DeadStack runs f and returns a copy of the DeadStackBytes of stack below
// DeadStack's own frame: the frames of f and of whatever f called, now
// dead. The tests of the kernels that must not leave key-derived data in
// their frames (they zero it before returning) search it. It grows the
// stack first, so that the bytes it reads are the stack's.
//
//go:noinline
func DeadStack(f func()) []byte {
	growStack(2 * DeadStackBytes / 512)
	f()
	var here [64]byte
	// Below this frame, within the goroutine's stack (growStack).
	below := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&here[0]), -DeadStackBytes)), DeadStackBytes)
	out := make([]byte, DeadStackBytes)
	copy(out, below)
	return out
}

// growStack makes the goroutine's stack at least depth·512 bytes deeper
// than the caller.
//
//go:noinline
func growStack(depth int) byte {
	var pad [512]byte
	if depth == 0 {
		return pad[0]
	}
	return growStack(depth-1) + pad[depth%512]
}
