//go:build !linux

package netio

import (
	"errors"
	"sync/atomic"

	"golang.zx2c4.com/wireguard/conn"
)

// StdBind is wireguard-go's conn.StdNetBind (batched UDP over
// golang.org/x/net ipv4/ipv6 PacketConn ReadBatch/WriteBatch, i.e.
// recvmmsg/sendmmsg on Linux, with UDP GSO and GRO where the kernel has
// them) plus a report of which offloads are active, for the daemon's status
// output.
//
// Receive contract inherited from StdNetBind: call each ReceiveFunc with
// exactly BatchSize() buffers of MaxSegmentSize bytes. With UDP GRO the
// last few buffers receive coalesced datagrams, which are then split into
// the buffers from index 0.
type StdBind struct {
	conn.Bind
	gso4, gso6, gro4, gro6 atomic.Bool
}

var _ Bind = (*StdBind)(nil)

// NewStdBind returns a closed StdBind; Open binds its sockets.
func NewStdBind() *StdBind {
	return &StdBind{Bind: conn.NewStdNetBind()}
}

// Open binds the IPv4 and IPv6 sockets on port (0 picks one) and records
// the offload state. The state is probed the way wireguard-go decides it
// (getsockopt UDP_SEGMENT for GSO; UDP_GRO enabled and readable back, Linux
// >= 5.12, for GRO) on a socket of each family in the calling thread's
// network namespace, so call Open from the namespace the bind lives in.
func (b *StdBind) Open(port uint16) ([]ReceiveFunc, uint16, error) {
	fns, actual, err := b.Bind.Open(port)
	if err != nil {
		return nil, 0, err
	}
	o := probeUDPOffload()
	b.gso4.Store(o.GSO4)
	b.gso6.Store(o.GSO6)
	b.gro4.Store(o.GRO4)
	b.gro6.Store(o.GRO6)
	return fns, actual, nil
}

// Send sends bufs to ep in as few system calls as the offloads allow. With
// GSO, runs of equal-sized datagrams (plus one shorter tail) are appended
// into the spare capacity of the run's first buffer and sent as one
// UDP_SEGMENT message of at most 64 datagrams and 64 KiB. If the
// kernel rejects UDP GSO (EIO: the egress NIC lacks TX checksum offload),
// StdNetBind retries without it, disables GSO for that family for good and
// returns a conn.ErrUDPGSODisabled wrapping the retry's result; Send then
// records GSO as off. Callers should treat that error as informational
// when its RetryErr is nil.
func (b *StdBind) Send(bufs [][]byte, ep Endpoint) error {
	err := b.Bind.Send(bufs, ep)
	if err != nil {
		var gsoOff conn.ErrUDPGSODisabled
		if errors.As(err, &gsoOff) {
			if ep.DstIP().Is6() {
				b.gso6.Store(false)
			} else {
				b.gso4.Store(false)
			}
		}
	}
	return err
}

// Close closes the sockets; all ReceiveFuncs then return net.ErrClosed.
func (b *StdBind) Close() error {
	err := b.Bind.Close()
	b.gso4.Store(false)
	b.gso6.Store(false)
	b.gro4.Store(false)
	b.gro6.Store(false)
	return err
}

// Offload reports the current offload state. All fields are false while the
// bind is closed.
func (b *StdBind) Offload() UDPOffload {
	return UDPOffload{GSO4: b.gso4.Load(), GSO6: b.gso6.Load(), GRO4: b.gro4.Load(), GRO6: b.gro6.Load()}
}

// probeUDPOffload reports no offloads: StdNetBind uses UDP GSO/GRO only on
// Linux.
func probeUDPOffload() UDPOffload { return UDPOffload{} }
