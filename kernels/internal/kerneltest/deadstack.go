package kerneltest

import "unsafe"

// DeadStackBytes is how much dead stack DeadStack returns.
const DeadStackBytes = 16 << 10

// DeadStack runs f and returns a copy of the DeadStackBytes of stack below
// DeadStack's own frame: the frames of f and of whatever f called, now
// dead. The tests of the kernels that must not leave key-derived data in
// their frames (they zero it before returning) search it. Call
// GrowStack first, so that the stack already reaches that deep.
//
//go:noinline
func DeadStack(f func()) []byte {
	f()
	var here [64]byte
	// Below this frame, within the goroutine's stack (GrowStack).
	below := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&here[0]), -DeadStackBytes)), DeadStackBytes)
	out := make([]byte, DeadStackBytes)
	copy(out, below)
	return out
}

// GrowStack makes the goroutine's stack at least depth·512 bytes deeper
// than the caller, so that DeadStack reads memory of the stack.
//
//go:noinline
func GrowStack(depth int) byte {
	var pad [512]byte
	if depth == 0 {
		return pad[0]
	}
	return GrowStack(depth-1) + pad[depth%512]
}
