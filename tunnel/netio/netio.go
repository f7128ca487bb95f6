// Package netio defines the two I/O seams of the gmtun data plane, the TUN
// device and the UDP bind, with Linux implementations built on wireguard-go's
// tun and conn packages and in-memory fakes in netio/netiotest.
//
// Both seams are batch-first and use caller-owned buffers, as in wireguard-go:
//
//   - TUN.Read fills up to len(bufs) packets, each starting at offset, so the
//     caller can keep headroom for its transport header in front of the
//     plaintext. On Linux with offloads on it drains every packet the kernel
//     has queued (non-blocking read()s until the batch is full) and splits
//     each 64 KiB TSO/USO super-packet into MTU-sized segments, computing
//     their checksums (offload.go).
//   - TUN.Write takes a batch of packets at offset; with offloads on, packets
//     of one TCP or UDP flow are coalesced (GRO) into one writev() straight
//     from the callers' buffers, after verifying each packet's checksum.
//   - Bind (conn.Bind) reads with recvmmsg and UDP GRO, and sends a batch to
//     one endpoint with sendmmsg and UDP GSO (UDP_SEGMENT), falling back to
//     one datagram per message when the kernel or NIC refuses. On Linux,
//     StdBind is gmtun's own (allocation-free receive, iovec GSO, in-place
//     receive through InPlaceBind); elsewhere it wraps wireguard-go's
//     StdNetBind.
//
// Buffer contract: pass len(bufs) == BatchSize() buffers to reads; give
// each buffer MaxSegmentSize bytes plus headroom; TUN writes need
// offset >= TUNWriteHeadroom, and the bytes just before offset are
// overwritten. The Linux implementations never write past the packets
// passed to Write or Send; wireguard-go's implementations (other
// platforms) coalesce by appending later packets of a flow into the spare
// capacity (cap - len) of the first packet's buffer, so callers must
// accept that bytes past len of those buffers may be overwritten.
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

// InPlaceReceiveFunc receives datagrams without copying GRO-coalesced
// ones apart. It reads into bufs (each at least MaxSegmentSize bytes;
// with GRO each buffer may receive up to 64 datagrams of one source) and
// returns n, the number of datagrams: datagram k is pkts[k], a sub-slice
// of bufs[owner[k]] whose capacity ends with it (so nothing appended to
// it can reach the next datagram), from eps[k]. len(pkts), len(owner) and
// len(eps) must be at least 64·len(bufs) with GRO, len(bufs) without; at
// most min(len(bufs), len(pkts)/64) buffers are filled per call. The
// caller owns bufs and must not reuse a buffer while it still uses a
// datagram in it. A message of more than 64 segments (a forwarded UDP GSO
// message) may not fit the slots left: the function then holds it, and
// the messages after it, in their buffers and returns them from the next
// call, without reading; so a buffer none of whose datagrams were returned
// must be passed again, untouched, at the same index. Held messages whose
// buffer is not passed back are counted as dropped (BindDrops.GROOverflow).
type InPlaceReceiveFunc func(bufs, pkts [][]byte, owner []int, eps []Endpoint) (n int, err error)

// InPlaceBind is implemented by binds that offer InPlaceReceiveFunc: Open
// and OpenInPlace are alternatives (one per open).
type InPlaceBind interface {
	Bind
	// OpenInPlace is Open with in-place receive functions.
	OpenInPlace(port uint16) ([]InPlaceReceiveFunc, uint16, error)
}

// BindDrops counts what a bind received from the network and discarded
// before handing it to the caller, by reason. The counters only grow, over
// the whole life of the bind (across Close and Open).
type BindDrops struct {
	// Truncated counts messages larger than the caller's buffer
	// (MSG_TRUNC); what arrived of them is incomplete, so the whole
	// message is dropped (a GRO message counts once).
	Truncated uint64
	// BadSource counts datagrams whose source address is neither IPv4
	// nor IPv6 (there is no endpoint to answer).
	BadSource uint64
	// Empty counts zero-length datagrams.
	Empty uint64
	// GROOverflow counts datagrams of GRO-coalesced messages that did not
	// fit the slots the caller passed (a message forwarded with more than
	// 64 UDP GSO segments; see StdBind).
	GROOverflow uint64
	// Socket counts datagrams the kernel dropped at the bind's sockets
	// before they were read: the receive buffer was full (the receivers
	// fell behind), or the UDP checksum was bad.
	Socket uint64
}

// Total returns the sum of all reasons.
func (d BindDrops) Total() uint64 {
	return d.Truncated + d.BadSource + d.Empty + d.GROOverflow + d.Socket
}

// DropReporter is implemented by binds that count the datagrams they
// drop (StdBind on Linux). Binds that never drop need not implement it.
type DropReporter interface {
	// Drops returns a snapshot of the counters.
	Drops() BindDrops
}

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
