package netio

import (
	"encoding/binary"
	"net/netip"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// UDPEndpoint, the peer address StdBind hands out, and the receivers' cache of them.

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
