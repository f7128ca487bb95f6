package netio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.zx2c4.com/wireguard/conn"
)

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
// fit the caller's slots are counted by reason (Drops).
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

// bindDropCounters is the live form of BindDrops.
type bindDropCounters struct {
	truncated, badSource, empty, groOverflow atomic.Uint64
}

// Drops returns the datagrams the receive functions discarded so far.
func (b *StdBind) Drops() BindDrops {
	return BindDrops{
		Truncated:   b.drops.truncated.Load(),
		BadSource:   b.drops.badSource.Load(),
		Empty:       b.drops.empty.Load(),
		GROOverflow: b.drops.groOverflow.Load(),
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

// UDPEndpoint is a peer address as StdBind sees it: the remote address
// and port and, for a received datagram, the local address and interface
// it arrived on, which later sends to it use as their source (sticky
// sockets). Endpoints handed out by a ReceiveFunc are shared between the
// datagrams of one source and must be treated as immutable; ClearSrc only
// sets a flag.
type UDPEndpoint struct {
	dst        netip.AddrPort
	pktinfo    [unix.SizeofInet6Pktinfo]byte // IP_PKTINFO / IPV6_PKTINFO as received
	pktinfoLen int
	srcCleared atomic.Bool
}

var _ Endpoint = (*UDPEndpoint)(nil)

// ClearSrc makes later sends let the kernel pick the source address.
func (e *UDPEndpoint) ClearSrc() { e.srcCleared.Store(true) }

// SrcIP returns the sticky source address, or the zero Addr.
func (e *UDPEndpoint) SrcIP() netip.Addr {
	if e.srcCleared.Load() {
		return netip.Addr{}
	}
	switch e.pktinfoLen {
	case unix.SizeofInet4Pktinfo: // ifindex, spec_dst, addr
		return netip.AddrFrom4([4]byte(e.pktinfo[4:8]))
	case unix.SizeofInet6Pktinfo: // addr, ifindex
		return netip.AddrFrom16([16]byte(e.pktinfo[:16]))
	}
	return netip.Addr{}
}

// SrcToString returns SrcIP as a string ("invalid IP" if unset).
func (e *UDPEndpoint) SrcToString() string { return e.SrcIP().String() }

// DstIP returns the remote address.
func (e *UDPEndpoint) DstIP() netip.Addr { return e.dst.Addr() }

// DstToString returns the remote "ip:port".
func (e *UDPEndpoint) DstToString() string { return e.dst.String() }

// DstToBytes returns the remote address and port in netip.AddrPort's
// binary form (used as a rate-limiting key).
func (e *UDPEndpoint) DstToBytes() []byte {
	b, _ := e.dst.MarshalBinary()
	return b
}

// Addr returns the remote address.
func (e *UDPEndpoint) Addr() netip.Addr { return e.dst.Addr() }

// Port returns the remote port.
func (e *UDPEndpoint) Port() uint16 { return e.dst.Port() }

// endpointCacheMax bounds the endpoints a ReceiveFunc remembers (one per
// source address, local address and interface); when it is reached the
// cache starts over, so spoofed sources cannot grow it without bound.
const endpointCacheMax = 4096

// endpointKey identifies a cached endpoint.
type endpointKey struct {
	dst     netip.AddrPort
	info    [unix.SizeofInet6Pktinfo]byte
	infoLen int
}

// receiver is the scratch of one ReceiveFunc.
type receiver struct {
	mu    sync.Mutex
	s     *udpSocket
	msgs  []mmsghdr
	iovs  []unix.Iovec
	names []byte // sockaddrSize per message
	oob   []byte // oobSize per message
	cache map[endpointKey]*UDPEndpoint
	last  *UDPEndpoint // most recent hit: a batch is mostly one source
	drops *bindDropCounters

	// segs is, for receive, the most segments one received message may
	// carry for the slot sizing: udpGSOMaxSegments until a larger message
	// (a forwarded GSO message, up to UDP_MAX_SEGMENTS = 128 on Linux
	// 6.x) shows up, then the largest seen. Sizing every read for 128
	// from the start would halve the messages per recvmmsg for ordinary
	// GRO traffic (≤ 64 segments); sizing for what was seen costs one
	// comparison per message until it happens, and once the source sends
	// such messages each carries more datagrams, so fewer messages per
	// call lose nothing. Only the read that first meets a larger message
	// can run out of slots; its excess is counted (GROOverflow).
	//
	// receiveInPlace needs no such sizing: it holds the messages that do
	// not fit in held, where the kernel put them, and returns them from
	// the next call instead of reading. That costs nothing on ordinary
	// traffic (the slots are sized for 64 segments per message, so
	// nothing is held) and loses nothing. Both guarded by mu.
	segs int
	held []heldMsg

	readFn func(fd uintptr) bool // r.readLoop, stored once
	k, n   int
	serr   error
}

// readLoop is receive's RawConn.Read callback: one recvmmsg of r.k
// messages; false (wait) while nothing is queued.
func (r *receiver) readLoop(fd uintptr) bool {
	for {
		r.n, r.serr = recvmmsg(int(fd), r.msgs[:r.k])
		if r.serr != unix.EINTR {
			return r.serr != unix.EAGAIN
		}
	}
}

// heldMsg is a received GRO message that did not fit the slots of a
// receiveInPlace call; it stays in the caller's buffer idx (whose first
// byte is at buf) until the next call returns it.
type heldMsg struct {
	buf       *byte
	idx       int
	size, gso int
	ep        *UDPEndpoint
}

func newReceiver(s *udpSocket, drops *bindDropCounters) *receiver {
	n := IdealBatchSize
	r := &receiver{
		s:     s,
		drops: drops,
		segs:  udpGSOMaxSegments,
		held:  make([]heldMsg, 0, n),
		msgs:  make([]mmsghdr, n),
		iovs:  make([]unix.Iovec, n),
		names: make([]byte, n*sockaddrSize),
		oob:   make([]byte, n*oobSize),
		cache: make(map[endpointKey]*UDPEndpoint),
	}
	r.readFn = r.readLoop
	return r
}

// receive reads one vector of datagrams into bufs (see StdBind).
func (r *receiver) receive(bufs [][]byte, sizes []int, eps []Endpoint) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	batch := min(len(bufs), len(r.msgs))
	if batch == 0 {
		return 0, nil
	}
	first := 0
	if r.s.gro {
		first = batch - max(batch/r.segs, 1)
	}
	k := batch - first
	for j := range k {
		setIovec(&r.iovs[j], bufs[first+j])
		r.msgs[j].setMsg(r.names[j*sockaddrSize:(j+1)*sockaddrSize], r.iovs[j:j+1], r.oob[j*oobSize:(j+1)*oobSize])
	}
	r.k = k
	err := r.s.rc.Read(r.readFn)
	n, serr := r.n, r.serr
	clear(r.iovs[:k]) // do not keep the buffers reachable from the scratch
	if err != nil {
		return 0, net.ErrClosed
	}
	if serr != nil {
		return 0, os.NewSyscallError("recvmmsg", serr)
	}
	out := 0
	for j := range n {
		m := &r.msgs[j]
		src := first + j
		size := int(m.len)
		gso, ep := r.accept(j, size)
		if ep == nil {
			continue
		}
		if first == 0 || gso >= size {
			if src != out {
				copy(bufs[out], bufs[src][:size])
			}
			sizes[out], eps[out] = size, ep
			out++
			continue
		}
		// Split a GRO message. Segment i goes to bufs[out]; out never
		// passes src before the last segment while every message has at
		// most r.segs segments (batch/r.segs slots per message).
		for start := 0; start < size; start += gso {
			end := min(start+gso, size)
			if out > src || (out == src && end != size) {
				// A message larger than r.segs (now raised by
				// accept): count the rest.
				r.drops.groOverflow.Add(uint64(segments(size-start, gso)))
				break
			}
			copy(bufs[out], bufs[src][start:end])
			sizes[out], eps[out] = end-start, ep
			out++
		}
	}
	return out, nil
}

// receiveInPlace is the InPlaceReceiveFunc (see there): one recvmmsg
// into the first min(len(bufs), len(pkts)/64) buffers (len(pkts) with
// GRO off), datagrams returned as sub-slices; or, if the previous call
// held messages that did not fit its slots (see segs), no read but those
// messages.
func (r *receiver) receiveInPlace(bufs, pkts [][]byte, owner []int, eps []Endpoint) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	slots := min(len(pkts), len(owner), len(eps))
	k := min(len(bufs), slots, len(r.msgs))
	if r.s.gro {
		k = min(k, slots/udpGSOMaxSegments)
	}
	if k == 0 {
		return 0, errors.New("netio: in-place receive needs more datagram slots")
	}
	if len(r.held) > 0 {
		return r.releaseHeld(bufs, pkts, owner, eps, slots), nil
	}
	for j := range k {
		setIovec(&r.iovs[j], bufs[j])
		r.msgs[j].setMsg(r.names[j*sockaddrSize:(j+1)*sockaddrSize], r.iovs[j:j+1], r.oob[j*oobSize:(j+1)*oobSize])
	}
	r.k = k
	err := r.s.rc.Read(r.readFn)
	n, serr := r.n, r.serr
	clear(r.iovs[:k])
	if err != nil {
		return 0, net.ErrClosed
	}
	if serr != nil {
		return 0, os.NewSyscallError("recvmmsg", serr)
	}
	out := 0
	for j := range n {
		m := &r.msgs[j]
		size := int(m.len)
		gso, ep := r.accept(j, size)
		if ep == nil {
			continue
		}
		// Only messages of more than 64 segments can fill the slots
		// (see segs): hold this one and the later ones, in order.
		if len(r.held) > 0 || (out > 0 && out+segments(size, gso) > slots) {
			r.held = append(r.held, heldMsg{buf: &bufs[j][0], idx: j, size: size, gso: gso, ep: ep})
			continue
		}
		out = r.emit(bufs[j][:size], j, gso, ep, pkts, owner, eps, out, slots)
	}
	return out, nil
}

// emit returns the segments of the message in buf (from the caller's
// buffer idx) as pkts[out:], at most up to slots, counting any that do
// not fit (a message of more segments than slots), and returns the new
// out.
func (r *receiver) emit(buf []byte, idx, gso int, ep *UDPEndpoint, pkts [][]byte, owner []int, eps []Endpoint, out, slots int) int {
	for start := 0; start < len(buf); start += gso {
		if out == slots {
			r.drops.groOverflow.Add(uint64(segments(len(buf)-start, gso)))
			break
		}
		end := min(start+gso, len(buf))
		pkts[out], owner[out], eps[out] = buf[start:end:end], idx, ep
		out++
	}
	return out
}

// releaseHeld returns held messages, in order, as many as fit, without
// reading. A message whose buffer the caller did not pass back at the same
// index (see InPlaceReceiveFunc) is counted as dropped.
func (r *receiver) releaseHeld(bufs, pkts [][]byte, owner []int, eps []Endpoint, slots int) int {
	out, kept := 0, 0
	for _, h := range r.held {
		nseg := segments(h.size, h.gso)
		if h.idx >= len(bufs) || len(bufs[h.idx]) < h.size || &bufs[h.idx][0] != h.buf {
			r.drops.groOverflow.Add(uint64(nseg))
			continue
		}
		if kept > 0 || (out > 0 && out+nseg > slots) {
			r.held[kept] = h
			kept++
			continue
		}
		out = r.emit(bufs[h.idx][:h.size], h.idx, h.gso, h.ep, pkts, owner, eps, out, slots)
	}
	clear(r.held[kept:]) // do not keep the buffers reachable
	r.held = r.held[:kept]
	return out
}

// accept checks received message j of size bytes: it returns the GRO
// segment size (size itself without GRO) and the source endpoint, or a
// nil endpoint after counting why the message is dropped. It raises
// r.segs when the message has more segments than the slots were sized
// for. r.mu held.
func (r *receiver) accept(j, size int) (gso int, ep *UDPEndpoint) {
	m := &r.msgs[j]
	if m.hdr.Flags&unix.MSG_TRUNC != 0 {
		r.drops.truncated.Add(1)
		return 0, nil
	}
	if size == 0 {
		r.drops.empty.Add(1)
		return 0, nil
	}
	gso, info, infoLen := parseRecvControl(r.oob[j*oobSize : j*oobSize+int(m.hdr.Controllen)])
	if gso <= 0 || gso > size {
		gso = size
	}
	if ep = r.endpoint(r.names[j*sockaddrSize:(j+1)*sockaddrSize], info, infoLen); ep == nil {
		r.drops.badSource.Add(uint64(segments(size, gso)))
		return 0, nil
	}
	if n := segments(size, gso); n > r.segs {
		r.segs = n
	}
	return gso, ep
}

// segments is the number of datagrams in size bytes of a GRO message with
// segment size gso > 0.
func segments(size, gso int) int { return (size + gso - 1) / gso }

// parseRecvControl extracts the GRO segment size and the packet info from
// a received control buffer without allocating.
func parseRecvControl(oob []byte) (gso int, info [unix.SizeofInet6Pktinfo]byte, infoLen int) {
	for len(oob) >= unix.SizeofCmsghdr {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			break
		}
		switch {
		case h.Level == unix.SOL_UDP && h.Type == unix.UDP_GRO && len(data) >= 2:
			if len(data) >= 4 {
				gso = int(binary.NativeEndian.Uint32(data))
			} else {
				gso = int(binary.NativeEndian.Uint16(data))
			}
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			infoLen = copy(info[:], data[:unix.SizeofInet4Pktinfo])
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			infoLen = copy(info[:], data[:unix.SizeofInet6Pktinfo])
		}
		oob = rest
	}
	return gso, info, infoLen
}

// endpoint returns the cached endpoint for the raw sockaddr name and the
// packet info, creating one for a new source.
func (r *receiver) endpoint(name []byte, info [unix.SizeofInet6Pktinfo]byte, infoLen int) *UDPEndpoint {
	var dst netip.AddrPort
	switch binary.NativeEndian.Uint16(name) {
	case unix.AF_INET:
		dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(name[4:8])), binary.BigEndian.Uint16(name[2:]))
	case unix.AF_INET6:
		dst = netip.AddrPortFrom(netip.AddrFrom16([16]byte(name[8:24])).Unmap(), binary.BigEndian.Uint16(name[2:]))
	default:
		return nil
	}
	if e := r.last; e != nil && e.dst == dst && e.pktinfoLen == infoLen && e.pktinfo == info && !e.srcCleared.Load() {
		return e
	}
	k := endpointKey{dst: dst, info: info, infoLen: infoLen}
	e := r.cache[k]
	if e == nil || e.srcCleared.Load() {
		if len(r.cache) >= endpointCacheMax {
			clear(r.cache)
		}
		e = &UDPEndpoint{dst: dst, pktinfo: info, pktinfoLen: infoLen}
		r.cache[k] = e
	}
	r.last = e
	return e
}

// sendScratch is the per-call state of Send.
type sendScratch struct {
	msgs   []mmsghdr
	iovs   []unix.Iovec
	oob    []byte
	name   [sockaddrSize]byte
	starts [IdealBatchSize]int // first datagram of each message

	writeFn    func(fd uintptr) bool // sc.writeLoop, stored once
	nmsg, sent int
	serr       error
}

// writeLoop is sendChunk's RawConn.Write callback: sendmmsg until every
// message went out; false (wait) on EAGAIN.
func (sc *sendScratch) writeLoop(fd uintptr) bool {
	for sc.sent < sc.nmsg {
		n, err := sendmmsg(int(fd), sc.msgs[sc.sent:sc.nmsg])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return false
		case err != nil:
			sc.serr = err
			return true
		}
		sc.sent += n
	}
	return true
}

func (b *StdBind) getScratch() *sendScratch {
	b.scratchMu.Lock()
	defer b.scratchMu.Unlock()
	if n := len(b.scratch); n > 0 {
		s := b.scratch[n-1]
		b.scratch = b.scratch[:n-1]
		return s
	}
	sc := &sendScratch{
		msgs: make([]mmsghdr, IdealBatchSize),
		iovs: make([]unix.Iovec, IdealBatchSize),
		oob:  make([]byte, IdealBatchSize*oobSize),
	}
	sc.writeFn = sc.writeLoop
	return sc
}

func (b *StdBind) putScratch(s *sendScratch) {
	b.scratchMu.Lock()
	b.scratch = append(b.scratch, s)
	b.scratchMu.Unlock()
}

// Send sends bufs to ep in as few system calls as the offloads allow.
// With GSO, runs of equal-sized datagrams (plus one shorter tail) become
// one UDP_SEGMENT message of at most 64 datagrams and 64 KiB, gathered
// from the buffers with iovecs (nothing is copied). If the kernel rejects
// UDP GSO (EIO: the egress NIC lacks TX checksum offload), Send retries
// without it, disables GSO on that socket for good and returns a
// conn.ErrUDPGSODisabled wrapping the retry's result; callers should treat
// that error as informational when its RetryErr is nil.
func (b *StdBind) Send(bufs [][]byte, ep Endpoint) error {
	e, ok := ep.(*UDPEndpoint)
	if !ok {
		return fmt.Errorf("netio: endpoint %T is not from StdBind", ep)
	}
	b.mu.Lock()
	s := b.v4
	if e.dst.Addr().Is6() {
		s = b.v6
	}
	b.mu.Unlock()
	if s == nil {
		return syscall.EAFNOSUPPORT
	}
	sc := b.getScratch()
	defer b.putScratch(sc)
	for len(bufs) > 0 {
		chunk := bufs[:min(len(bufs), IdealBatchSize)]
		bufs = bufs[len(chunk):]
		if err := b.sendChunk(s, sc, chunk, e); err != nil {
			return err
		}
	}
	return nil
}

func (b *StdBind) sendChunk(s *udpSocket, sc *sendScratch, bufs [][]byte, e *UDPEndpoint) error {
	name := sc.name[:]
	if s.v6 {
		clear(name)
		binary.NativeEndian.PutUint16(name, unix.AF_INET6)
		binary.BigEndian.PutUint16(name[2:], e.dst.Port())
		a := e.dst.Addr().As16()
		copy(name[8:24], a[:])
		name = name[:unix.SizeofSockaddrInet6]
	} else {
		clear(name)
		binary.NativeEndian.PutUint16(name, unix.AF_INET)
		binary.BigEndian.PutUint16(name[2:], e.dst.Port())
		a := e.dst.Addr().As4()
		copy(name[4:8], a[:])
		name = name[:unix.SizeofSockaddrInet4]
	}
	var info []byte
	if e.pktinfoLen > 0 && !e.srcCleared.Load() {
		info = e.pktinfo[:e.pktinfoLen]
	}
	gso := s.gso.Load()
	retried, srcCleared := false, false
retry:
	maxPayload := maxIPv4Payload
	if s.v6 {
		maxPayload = maxIPv6Payload
	}
	nmsg := 0
	for i := 0; i < len(bufs); nmsg++ {
		size := len(bufs[i])
		j, total := i+1, size
		if gso {
			for j < len(bufs) && j-i < udpGSOMaxSegments && len(bufs[j]) <= size && total+len(bufs[j]) <= maxPayload {
				total += len(bufs[j])
				j++
				if len(bufs[j-1]) < size {
					break // a shorter datagram ends the run
				}
			}
		}
		for k := i; k < j; k++ {
			setIovec(&sc.iovs[k], bufs[k])
		}
		oob := sc.oob[nmsg*oobSize : (nmsg+1)*oobSize]
		used := 0
		if info != nil {
			level, typ := int32(unix.IPPROTO_IP), int32(unix.IP_PKTINFO)
			if s.v6 {
				level, typ = unix.IPPROTO_IPV6, unix.IPV6_PKTINFO
			}
			used += putCmsg(oob, level, typ, info)
		}
		if j-i > 1 {
			var seg [2]byte
			binary.NativeEndian.PutUint16(seg[:], uint16(size))
			used += putCmsg(oob[used:], unix.SOL_UDP, unix.UDP_SEGMENT, seg[:])
		}
		sc.msgs[nmsg].setMsg(name, sc.iovs[i:j], oob[:used])
		sc.starts[nmsg] = i
		i = j
	}
	sc.nmsg, sc.sent, sc.serr = nmsg, 0, nil
	err := s.rc.Write(sc.writeFn)
	sent, serr := sc.sent, sc.serr
	clear(sc.iovs[:len(bufs)])
	if err != nil {
		return net.ErrClosed
	}
	if info != nil && !srcCleared && (serr == unix.EINVAL || serr == unix.ENETUNREACH || serr == unix.EADDRNOTAVAIL) {
		// The sticky source address is gone (the local address changed,
		// or routing did): let the kernel pick one from now on; the
		// next datagram from the peer brings a fresh one.
		e.ClearSrc()
		info, srcCleared = nil, true
		bufs = bufs[sc.starts[sent]:]
		goto retry
	}
	if serr == unix.EIO && gso && !retried {
		// UDP_SEGMENT needs TX checksum offload on the egress device.
		s.gso.Store(false)
		gso, retried = false, true
		// Messages before the failed one went out; resend the rest.
		bufs = bufs[sc.starts[sent]:]
		goto retry
	}
	if serr != nil {
		serr = os.NewSyscallError("sendmmsg", serr)
	}
	if retried {
		return conn.ErrUDPGSODisabled{RetryErr: serr}
	}
	return serr
}
