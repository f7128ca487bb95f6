//go:build linux

package netio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsghdr is struct mmsghdr (recvmmsg(2), sendmmsg(2)).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// setMsg points m at the datagram buffers iov (already filled), the
// socket address name (nil: none) and the control buffer oob (nil: none).
func (m *mmsghdr) setMsg(name []byte, iov []unix.Iovec, oob []byte) {
	m.hdr = unix.Msghdr{}
	if len(name) > 0 {
		m.hdr.Name = unsafe.SliceData(name)
		m.hdr.Namelen = uint32(len(name))
	}
	m.hdr.Iov = unsafe.SliceData(iov)
	m.hdr.SetIovlen(len(iov))
	if len(oob) > 0 {
		m.hdr.Control = unsafe.SliceData(oob)
		m.hdr.SetControllen(len(oob))
	}
	m.len = 0
}

// setIovec points v at b (non-empty).
func setIovec(v *unix.Iovec, b []byte) {
	v.Base = unsafe.SliceData(b)
	v.SetLen(len(b))
}

// recvmmsg receives up to len(msgs) datagrams without blocking.
func recvmmsg(fd int, msgs []mmsghdr) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(msgs))),
		uintptr(len(msgs)), unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// sendmmsg sends up to len(msgs) messages without blocking.
func sendmmsg(fd int, msgs []mmsghdr) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(msgs))),
		uintptr(len(msgs)), unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// putCmsg writes a control message with the given level, type and data
// at the start of b and returns the bytes used (CMSG_SPACE).
func putCmsg(b []byte, level, typ int32, data []byte) int {
	space := unix.CmsgSpace(len(data))
	if len(b) < space {
		return 0
	}
	h := (*unix.Cmsghdr)(unsafe.Pointer(unsafe.SliceData(b)))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(len(data)))
	copy(b[unix.CmsgLen(0):], data)
	clear(b[unix.CmsgLen(0)+len(data) : space])
	return space
}
