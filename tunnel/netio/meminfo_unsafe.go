//go:build linux

package netio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// SO_MEMINFO's array (linux/sock_diag.h): SK_MEMINFO_DROPS is the socket's
// sk_drops, SK_MEMINFO_VARS the array's length.
const (
	skMeminfoDrops = 8
	skMeminfoVars  = 9
)

// socketDrops returns the datagrams the kernel dropped at s before they
// could be read: its receive buffer was full, or their UDP checksum was
// bad (sk_drops, read with SO_MEMINFO). It returns 0 for a nil or closed
// socket.
func socketDrops(s *udpSocket) uint64 {
	if s == nil {
		return 0
	}
	var n uint64
	_ = s.rc.Control(func(fd uintptr) {
		var mem [skMeminfoVars]uint32
		size := uint32(unsafe.Sizeof(mem))
		_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_SOCKET, unix.SO_MEMINFO,
			uintptr(unsafe.Pointer(&mem)), uintptr(unsafe.Pointer(&size)), 0)
		if errno == 0 && size > skMeminfoDrops*4 {
			n = uint64(mem[skMeminfoDrops])
		}
	})
	return n
}
