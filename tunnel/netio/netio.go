// Package netio defines the two I/O seams of the gmtun data plane, the TUN
// device and the UDP bind, with Linux implementations built on wireguard-go's
// tun and conn packages and in-memory fakes in netio/netiotest.
//
// Both seams are batch-first and use caller-owned buffers, as in wireguard-go:
//
//   - TUN.Read fills up to len(bufs) packets, each starting at offset, so the
//     caller can keep headroom for its transport header in front of the
//     plaintext. With offloads on, one read() of a 64 KiB TSO/USO super-packet
//     from the kernel is split into MTU-sized segments here.
//   - TUN.Write takes a batch of packets at offset; with offloads on, packets
//     of one TCP or UDP flow are coalesced (GRO) into one write().
//   - Bind (conn.Bind) reads with recvmmsg and UDP GRO, and sends a batch to
//     one endpoint with sendmmsg and UDP GSO (UDP_SEGMENT), falling back to
//     one datagram per message when the kernel or NIC refuses.
//
// Buffer contract (from wireguard-go, which the Linux implementations use):
// pass len(bufs) == BatchSize() buffers to reads; give each buffer a
// capacity of MaxSegmentSize bytes plus headroom; TUN writes need
// offset >= TUNWriteHeadroom. Coalescing works in place: a TUN write or a
// bind send appends later packets of a flow into the spare capacity
// (cap - len) of the first packet's buffer, so buffers without spare
// capacity are sent one by one, and bytes past len of the buffers passed
// to Write or Send may be overwritten.
package netio

import (
	"fmt"

	"golang.zx2c4.com/wireguard/conn"
)

const (
	// MaxSegmentSize is the largest packet or coalesced super-packet that
	// crosses either seam: the IPv4/IPv6 payload-length limit. Buffers of
	// this size (plus the caller's headroom) never truncate.
	MaxSegmentSize = 65535

	// TUNWriteHeadroom is the minimum offset TUN.Write accepts on Linux
	// with IFF_VNET_HDR: the virtio_net_hdr (struct virtio_net_hdr, 10
	// bytes, include/uapi/linux/virtio_net.h) is written in front of each
	// packet.
	TUNWriteHeadroom = 10

	// IdealBatchSize is the batch size of the Linux implementations with
	// offloads: packets per TUN read vector and per recvmmsg/sendmmsg.
	IdealBatchSize = conn.IdealBatchSize
)

// TUN is one queue of a TUN device. Its method set is a subset of
// wireguard-go's tun.Device, so any tun.Device is a TUN.
//
// Read and Write may be called concurrently with each other, but Read is
// not safe for concurrent use with itself (the Linux implementation holds
// one 64 KiB staging buffer per queue), and neither is Write; use one
// reader and one writer per queue.
type TUN interface {
	// Read reads one or more packets into bufs, each starting at
	// bufs[i][offset:], stores their lengths in sizes and returns how
	// many it read. len(sizes) must be >= len(bufs). An error of
	// wireguard-go's tun.ErrTooManySegments means a super-packet needed
	// more than len(bufs) segments; the packets read are still valid.
	Read(bufs [][]byte, sizes []int, offset int) (n int, err error)

	// Write writes the packets bufs[i][offset:]. Callers should rely on
	// the error only: the count is bytes for wireguard-go's Linux TUN and
	// packets for the fakes. On Linux offset
	// must be at least TUNWriteHeadroom and the bytes before offset
	// are overwritten; coalescing happens only into buffers with spare
	// capacity.
	Write(bufs [][]byte, offset int) (int, error)

	// BatchSize returns the largest useful len(bufs) for Read and Write.
	// It does not change over the lifetime of the queue.
	BatchSize() int

	// MTU returns the current MTU of the interface.
	MTU() (int, error)

	// Name returns the interface name.
	Name() (string, error)

	// Close closes the queue. Pending and later reads return an error
	// wrapping os.ErrClosed.
	Close() error
}

// Bind is the UDP seam: wireguard-go's conn.Bind. Open returns one
// conn.ReceiveFunc per address family; Send sends a batch to one endpoint.
type Bind = conn.Bind

// Endpoint is a remote UDP address as the Bind understands it.
type Endpoint = conn.Endpoint

// ReceiveFunc receives a batch of datagrams; see conn.ReceiveFunc.
type ReceiveFunc = conn.ReceiveFunc

// TUNOffload describes which virtio-net offloads a TUN device negotiated.
type TUNOffload struct {
	// VNetHdr is true when the device was opened with IFF_VNET_HDR and
	// TUNSETOFFLOAD accepted TSO4/TSO6/CSUM: reads may return TCP
	// super-packets that are split in user space, and TCP writes are
	// coalesced.
	VNetHdr bool
	// USO is true when the kernel also accepted USO4/USO6 (Linux >= 6.2):
	// UDP super-packets are split on read and UDP writes coalesced.
	USO bool
	// Queues is the number of IFF_MULTI_QUEUE queues opened.
	Queues int
}

// String formats the state for logs and the control socket.
func (o TUNOffload) String() string {
	return fmt.Sprintf("vnet_hdr=%s tso=%s uso=%s queues=%d", onOff(o.VNetHdr), onOff(o.VNetHdr), onOff(o.USO), o.Queues)
}

// UDPOffload describes the UDP segmentation offloads of a bind, per
// address family.
type UDPOffload struct {
	// GSO4 and GSO6 are true while sends coalesce datagrams with
	// UDP_SEGMENT. They turn false for good if the kernel returns EIO
	// (a NIC without TX checksum offload); see StdBind.Send.
	GSO4, GSO6 bool
	// GRO4 and GRO6 are true when the sockets have UDP_GRO enabled, so
	// one recvmmsg slot may carry up to 64 coalesced datagrams.
	GRO4, GRO6 bool
}

// String formats the state for logs and the control socket.
func (o UDPOffload) String() string {
	return fmt.Sprintf("gso4=%s gso6=%s gro4=%s gro6=%s", onOff(o.GSO4), onOff(o.GSO6), onOff(o.GRO4), onOff(o.GRO6))
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
