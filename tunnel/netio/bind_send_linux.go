package netio

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.zx2c4.com/wireguard/conn"
)

// StdBind's send side: sendmmsg with UDP GSO from the callers' buffers, and its fallbacks.

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
