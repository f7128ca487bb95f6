//go:build linux

package netio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// writev writes the concatenation of bufs with one writev(2) call, using
// iov (len(iov) >= len(bufs)) as scratch so that nothing is allocated.
// Every element of bufs must be non-empty.
func writev(fd int, bufs [][]byte, iov []unix.Iovec) (int, error) {
	iov = iov[:len(bufs)]
	for i, b := range bufs {
		iov[i].Base = unsafe.SliceData(b)
		iov[i].SetLen(len(b))
	}
	n, _, errno := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(iov))), uintptr(len(iov)))
	clear(iov) // do not keep the packet buffers reachable from here
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
