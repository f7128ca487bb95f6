package netio

import (
	"encoding/binary"
	"net/netip"
)

// Minimal IPv4/IPv6 + UDP builders and a validating parser for the
// integration tests. Written from RFC 791, RFC 8200, RFC 768 and RFC 1071.

func csumAdd(sum uint32, b []byte) uint32 {
	for len(b) >= 2 {
		sum += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	return sum
}

func csumFold(sum uint32) uint16 {
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return uint16(sum)
}

// udpChecksum returns the RFC 768 checksum over the pseudo-header and the
// UDP header+payload u (whose checksum field is included as is).
func udpPseudoSum(src, dst netip.Addr, u []byte) uint32 {
	sum := csumAdd(0, src.AsSlice())
	sum = csumAdd(sum, dst.AsSlice())
	sum += 17 + uint32(len(u))
	return csumAdd(sum, u)
}

func buildUDP(src, dst netip.AddrPort, payload []byte) []byte {
	u := make([]byte, 8+len(payload))
	binary.BigEndian.PutUint16(u[0:], src.Port())
	binary.BigEndian.PutUint16(u[2:], dst.Port())
	binary.BigEndian.PutUint16(u[4:], uint16(len(u)))
	copy(u[8:], payload)
	c := ^csumFold(udpPseudoSum(src.Addr(), dst.Addr(), u))
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(u[6:], c)
	if src.Addr().Is4() {
		h := make([]byte, 20, 20+len(u))
		h[0] = 0x45
		binary.BigEndian.PutUint16(h[2:], uint16(20+len(u)))
		h[8], h[9] = 64, 17
		copy(h[12:], src.Addr().AsSlice())
		copy(h[16:], dst.Addr().AsSlice())
		binary.BigEndian.PutUint16(h[10:], ^csumFold(csumAdd(0, h)))
		return append(h, u...)
	}
	h := make([]byte, 40, 40+len(u))
	h[0] = 0x60
	binary.BigEndian.PutUint16(h[4:], uint16(len(u)))
	h[6], h[7] = 17, 64
	copy(h[8:], src.Addr().AsSlice())
	copy(h[24:], dst.Addr().AsSlice())
	return append(h, u...)
}

// parseUDP validates an IPv4/IPv6 UDP packet (lengths, IPv4 header
// checksum, UDP checksum) and returns its addresses and payload.
func parseUDP(pkt []byte) (src, dst netip.AddrPort, payload []byte, ok bool) {
	var sa, da netip.Addr
	var u []byte
	switch {
	case len(pkt) >= 20 && pkt[0]>>4 == 4:
		ihl := int(pkt[0]&0xf) * 4
		if ihl < 20 || len(pkt) < ihl || int(binary.BigEndian.Uint16(pkt[2:])) != len(pkt) || pkt[9] != 17 {
			return
		}
		if csumFold(csumAdd(0, pkt[:ihl])) != 0xffff {
			return
		}
		sa, da = netip.AddrFrom4([4]byte(pkt[12:16])), netip.AddrFrom4([4]byte(pkt[16:20]))
		u = pkt[ihl:]
	case len(pkt) >= 40 && pkt[0]>>4 == 6:
		if pkt[6] != 17 || int(binary.BigEndian.Uint16(pkt[4:]))+40 != len(pkt) {
			return
		}
		sa, da = netip.AddrFrom16([16]byte(pkt[8:24])), netip.AddrFrom16([16]byte(pkt[24:40]))
		u = pkt[40:]
	default:
		return
	}
	if len(u) < 8 || int(binary.BigEndian.Uint16(u[4:])) != len(u) {
		return
	}
	if csumFold(udpPseudoSum(sa, da, u)) != 0xffff {
		return
	}
	src = netip.AddrPortFrom(sa, binary.BigEndian.Uint16(u[0:]))
	dst = netip.AddrPortFrom(da, binary.BigEndian.Uint16(u[2:]))
	return src, dst, u[8:], true
}
