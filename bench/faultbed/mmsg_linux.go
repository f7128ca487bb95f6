package faultbed

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// sendBatch is a batch of raw IPv4 datagrams to one destination, sent
// with one sendmmsg(2): the flooder then spends its core on the kernel's
// send path, not on a system call per message, which is what lets one
// core reach the rates the fault bed reports.
type sendBatch struct {
	to   unix.RawSockaddrInet4
	pkts [][]byte
	iovs []unix.Iovec
	msgs []mmsghdr
}

// mmsghdr is struct mmsghdr of sendmmsg(2) on 64-bit Linux.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
	_   [4]byte
}

func newSendBatch(n, size int, dst [4]byte) *sendBatch {
	b := &sendBatch{pkts: make([][]byte, n), iovs: make([]unix.Iovec, n), msgs: make([]mmsghdr, n)}
	b.to.Family = unix.AF_INET
	b.to.Addr = dst
	for i := range b.pkts {
		b.pkts[i] = make([]byte, size)
	}
	return b
}

// send sends the first len(lens) packets, packet i being pkts[i][:lens[i]],
// and returns how many the kernel took.
func (b *sendBatch) send(fd int, lens []int) (int, error) {
	for i, n := range lens {
		b.iovs[i].Base = &b.pkts[i][0]
		b.iovs[i].SetLen(n)
		h := &b.msgs[i].hdr
		h.Name = (*byte)(unsafe.Pointer(&b.to))
		h.Namelen = unix.SizeofSockaddrInet4
		h.Iov = &b.iovs[i]
		h.SetIovlen(1)
	}
	r, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.msgs[0])), uintptr(len(lens)), 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
