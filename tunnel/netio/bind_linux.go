package netio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.zx2c4.com/wireguard/conn"
)

// StdBind lives in four files: this one opens and configures the sockets;
// bind_recv_linux.go reads them (recvmmsg, GRO, in-place receive);
// bind_endpoint_linux.go holds UDPEndpoint and the receivers' endpoint
// cache; bind_send_linux.go writes them (sendmmsg, GSO).

// StdBind is gmtun's UDP bind on Linux: one IPv4 and one IPv6 socket on
// the same port, read with recvmmsg(2) and written with sendmmsg(2), with
// UDP GRO on receive and UDP GSO (UDP_SEGMENT) on send where the kernel
// has them, and sticky source addresses (IP_PKTINFO / IPV6_PKTINFO), like
// wireguard-go's conn.StdNetBind, which it replaces on the hot path:
//
//   - receiving allocates nothing per datagram: source addresses are parsed
//     from the raw sockaddr and endpoints come from a small per-socket
//     cache (a new endpoint is allocated only for a new peer address);
//   - sending coalesces runs of datagrams into GSO messages through
//     iovecs that point at the callers' buffers, instead of copying them
//     into the first buffer of the run.
//
// Receive contract: call each ReceiveFunc with BatchSize() buffers of
// MaxSegmentSize bytes. With UDP GRO the last BatchSize()/64 buffers
// receive coalesced datagrams, which are then split (copied) into the
// buffers from index 0.
//
// Nothing received is dropped silently: truncated messages, sources of an
// unknown address family, empty datagrams and GRO segments that do not
// fit the caller's slots are counted by reason (Drops), and so are the
// datagrams the kernel dropped at the sockets (full receive buffer).
type StdBind struct {
	mu     sync.Mutex // guards v4, v6 and mark
	v4, v6 *udpSocket
	mark   uint32

	drops bindDropCounters // shared by every receiver of the bind

	scratchMu sync.Mutex
	scratch   []*sendScratch
}

var (
	_ Bind         = (*StdBind)(nil)
	_ DropReporter = (*StdBind)(nil)
)

// bindDropCounters is the live form of BindDrops. closedSockets holds
// the kernel's drops at sockets already closed (the open ones are asked
// when Drops is called).
type bindDropCounters struct {
	truncated, badSource, empty, groOverflow atomic.Uint64
	closedSockets                            atomic.Uint64
}

// Drops returns the datagrams the receive functions discarded so far,
// and those the kernel dropped at the sockets (one getsockopt per open
// socket).
func (b *StdBind) Drops() BindDrops {
	b.mu.Lock()
	socket := b.drops.closedSockets.Load() + socketDrops(b.v4) + socketDrops(b.v6)
	b.mu.Unlock()
	return BindDrops{
		Truncated:   b.drops.truncated.Load(),
		BadSource:   b.drops.badSource.Load(),
		Empty:       b.drops.empty.Load(),
		GROOverflow: b.drops.groOverflow.Load(),
		Socket:      socket,
	}
}

// NewStdBind returns a closed StdBind; Open binds its sockets.
func NewStdBind() *StdBind { return new(StdBind) }

const (
	// socketBufferSize is the SO_RCVBUF/SO_SNDBUF size asked for (as
	// wireguard-go does).
	socketBufferSize = 7 << 20
	// udpGSOMaxSegments is the most datagrams per GSO message we send
	// (UDP_MAX_SEGMENTS of older kernels) and per message GRO coalesces
	// on receive (UDP_GRO_CNT_MAX). Linux 6.x raised UDP_MAX_SEGMENTS to
	// 128, so a GSO message forwarded to our socket (over veth, or from
	// another local socket) may still carry more; see receiver.segs.
	udpGSOMaxSegments = 64
	// oobSize is the control buffer per message: IPV6_PKTINFO plus
	// UDP_GRO/UDP_SEGMENT.
	oobSize = 64
	// maxIPv4Payload and maxIPv6Payload bound one GSO message.
	maxIPv4Payload = 1<<16 - 1 - 20 - 8
	maxIPv6Payload = 1<<16 - 1 - 8
	sockaddrSize   = unix.SizeofSockaddrInet6
)

// udpSocket is one address family's socket.
type udpSocket struct {
	conn *net.UDPConn
	rc   syscall.RawConn
	v6   bool
	gro  bool
	gso  atomic.Bool
}

func openUDPSocket(network string, port int) (*udpSocket, int, error) {
	v6 := network == "udp6"
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			s := int(fd)
			if unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, socketBufferSize) != nil {
				_ = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_RCVBUF, socketBufferSize)
			}
			if unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, socketBufferSize) != nil {
				_ = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_SNDBUF, socketBufferSize)
			}
			if v6 {
				serr = unix.SetsockoptInt(s, unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1)
			} else {
				serr = unix.SetsockoptInt(s, unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	pc, err := lc.ListenPacket(context.Background(), network, ":"+strconv.Itoa(port))
	if err != nil {
		return nil, 0, err
	}
	c := pc.(*net.UDPConn)
	rc, err := c.SyscallConn()
	if err != nil {
		c.Close()
		return nil, 0, err
	}
	s := &udpSocket{conn: c, rc: rc, v6: v6}
	_ = rc.Control(func(fd uintptr) {
		_, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT)
		s.gso.Store(err == nil)
		// Kernels before 5.12 cannot read UDP_GRO back; wireguard-go
		// leaves GRO off there, and so do we.
		if unix.SetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_GRO, 1) == nil {
			v, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_GRO)
			s.gro = err == nil && v == 1
		}
	})
	return s, c.LocalAddr().(*net.UDPAddr).Port, nil
}

func (s *udpSocket) close() error {
	if s == nil {
		return nil
	}
	return s.conn.Close()
}

// Open binds the IPv4 and IPv6 sockets on port (0 picks one free for
// both); a family the host lacks is skipped. It returns one ReceiveFunc per
// socket ("v4", "v6").
func (b *StdBind) Open(port uint16) ([]ReceiveFunc, uint16, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	actual, err := b.open(port)
	if err != nil {
		return nil, 0, err
	}
	var fns []ReceiveFunc
	if b.v4 != nil {
		fns = append(fns, b.makeReceiveIPv4(b.v4))
	}
	if b.v6 != nil {
		fns = append(fns, b.makeReceiveIPv6(b.v6))
	}
	return fns, actual, nil
}

// OpenInPlace is Open with in-place receive functions (see
// InPlaceReceiveFunc): GRO-coalesced datagrams stay where the kernel put
// them. The functions are in the order v4, v6 (families the host lacks
// are skipped).
func (b *StdBind) OpenInPlace(port uint16) ([]InPlaceReceiveFunc, uint16, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	actual, err := b.open(port)
	if err != nil {
		return nil, 0, err
	}
	var fns []InPlaceReceiveFunc
	for _, s := range []*udpSocket{b.v4, b.v6} {
		if s != nil {
			fns = append(fns, newReceiver(s, &b.drops).receiveInPlace)
		}
	}
	return fns, actual, nil
}

var _ InPlaceBind = (*StdBind)(nil)

// open binds the sockets. b.mu held.
func (b *StdBind) open(port uint16) (uint16, error) {
	if b.v4 != nil || b.v6 != nil {
		return 0, conn.ErrBindAlreadyOpen
	}
	var v4, v6 *udpSocket
	var actual int
	for tries := 0; ; tries++ {
		var err error
		var p6 int
		v4, actual, err = openUDPSocket("udp4", int(port))
		if err != nil && !errors.Is(err, syscall.EAFNOSUPPORT) {
			return 0, err
		}
		if v4 == nil {
			actual = int(port)
		}
		v6, p6, err = openUDPSocket("udp6", actual)
		if v4 == nil && v6 != nil {
			actual = p6
		}
		if port == 0 && errors.Is(err, syscall.EADDRINUSE) && tries < 100 {
			v4.close()
			continue
		}
		if err != nil && !errors.Is(err, syscall.EAFNOSUPPORT) {
			v4.close()
			return 0, err
		}
		break
	}
	if v4 == nil && v6 == nil {
		return 0, syscall.EAFNOSUPPORT
	}
	for _, s := range []*udpSocket{v4, v6} {
		if s != nil && b.mark != 0 {
			if err := setMark(s, b.mark); err != nil {
				v4.close()
				v6.close()
				return 0, err
			}
		}
	}
	b.v4, b.v6 = v4, v6
	return uint16(actual), nil
}

func (b *StdBind) makeReceiveIPv4(s *udpSocket) ReceiveFunc {
	r := newReceiver(s, &b.drops)
	return func(bufs [][]byte, sizes []int, eps []Endpoint) (int, error) { return r.receive(bufs, sizes, eps) }
}

func (b *StdBind) makeReceiveIPv6(s *udpSocket) ReceiveFunc {
	r := newReceiver(s, &b.drops)
	return func(bufs [][]byte, sizes []int, eps []Endpoint) (int, error) { return r.receive(bufs, sizes, eps) }
}

// Close closes the sockets; all ReceiveFuncs then return net.ErrClosed.
func (b *StdBind) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.drops.closedSockets.Add(socketDrops(b.v4) + socketDrops(b.v6))
	err := errors.Join(b.v4.close(), b.v6.close())
	b.v4, b.v6 = nil, nil
	return err
}

// SetMark sets SO_MARK (the fwmark) on the sockets, now and on every
// later Open.
func (b *StdBind) SetMark(mark uint32) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mark = mark
	for _, s := range []*udpSocket{b.v4, b.v6} {
		if s != nil {
			if err := setMark(s, mark); err != nil {
				return err
			}
		}
	}
	return nil
}

func setMark(s *udpSocket, mark uint32) error {
	var serr error
	if err := s.rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_MARK, int(mark))
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("netio: SO_MARK: %w", serr)
	}
	return nil
}

// BatchSize is the number of buffers each ReceiveFunc wants and the most
// datagrams worth passing to one Send.
func (b *StdBind) BatchSize() int { return IdealBatchSize }

// ParseEndpoint parses "ip:port" (IPv6 in brackets).
func (b *StdBind) ParseEndpoint(s string) (Endpoint, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return nil, err
	}
	return &UDPEndpoint{dst: netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())}, nil
}

// Offload reports the current offload state. All fields are false while the
// bind is closed.
func (b *StdBind) Offload() UDPOffload {
	b.mu.Lock()
	defer b.mu.Unlock()
	var o UDPOffload
	if b.v4 != nil {
		o.GSO4, o.GRO4 = b.v4.gso.Load(), b.v4.gro
	}
	if b.v6 != nil {
		o.GSO6, o.GRO6 = b.v6.gso.Load(), b.v6.gro
	}
	return o
}
