package netio

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// StdBind's receive side: recvmmsg, GRO splitting, in-place receive, drop counting.

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
