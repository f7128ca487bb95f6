package netio

import (
	"encoding/binary"
	"errors"
	"math/bits"

	"github.com/gmtun/gmtun/kernels/csum"
)

// Virtio-net offload handling for the TUN queues: the virtio_net_hdr in
// front of every packet (include/uapi/linux/virtio_net.h), the split of a
// TSO/USO super-packet into MTU-sized segments on read, and the coalescing
// of a flow's segments into one super-packet on write. This file is pure
// byte manipulation (tested on every platform); tun_linux.go does the I/O.

// virtio_net_hdr constants (include/uapi/linux/virtio_net.h).
const (
	vnetHdrLen        = 10
	vnetFlagNeedsCsum = 1 // VIRTIO_NET_HDR_F_NEEDS_CSUM
	vnetGSONone       = 0 // VIRTIO_NET_HDR_GSO_NONE
	vnetGSOTCPv4      = 1 // VIRTIO_NET_HDR_GSO_TCPV4
	vnetGSOTCPv6      = 4 // VIRTIO_NET_HDR_GSO_TCPV6
	vnetGSOUDPL4      = 5 // VIRTIO_NET_HDR_GSO_UDP_L4
	vnetGSOECN        = 0x80

	protoTCP = 6
	protoUDP = 17

	tcpFlagFIN = 0x01
	tcpFlagSYN = 0x02
	tcpFlagRST = 0x04
	tcpFlagPSH = 0x08
	tcpFlagACK = 0x10
	tcpFlagURG = 0x20
	tcpFlagECE = 0x40
	tcpFlagCWR = 0x80

	// maxCoalesce is the most packets one coalesced write carries (the
	// UDP GSO segment limit of older kernels; TCP uses the same bound).
	maxCoalesce = 64
)

// vnetHdr is a decoded struct virtio_net_hdr. The legacy TUN interface
// uses the host's byte order for its fields.
type vnetHdr struct {
	flags      uint8
	gsoType    uint8
	hdrLen     uint16
	gsoSize    uint16
	csumStart  uint16
	csumOffset uint16
}

func (h *vnetHdr) decode(b []byte) {
	_ = b[vnetHdrLen-1]
	h.flags, h.gsoType = b[0], b[1]
	h.hdrLen = binary.NativeEndian.Uint16(b[2:])
	h.gsoSize = binary.NativeEndian.Uint16(b[4:])
	h.csumStart = binary.NativeEndian.Uint16(b[6:])
	h.csumOffset = binary.NativeEndian.Uint16(b[8:])
}

func (h *vnetHdr) encode(b []byte) {
	_ = b[vnetHdrLen-1]
	b[0], b[1] = h.flags, h.gsoType
	binary.NativeEndian.PutUint16(b[2:], h.hdrLen)
	binary.NativeEndian.PutUint16(b[4:], h.gsoSize)
	binary.NativeEndian.PutUint16(b[6:], h.csumStart)
	binary.NativeEndian.PutUint16(b[8:], h.csumOffset)
}

// Checksums are the Internet checksum (RFC 1071) as kernels/csum keeps
// it: a running 64-bit sum that csum.Sum and csum.CopySum add bytes to and
// csum.Fold folds to 16 bits in network order. sumAdd16 and pseudoSum add
// to such a sum.

// sumAdd16 adds a 16-bit value given in network order.
func sumAdd16(acc uint64, v uint16) uint64 {
	var c uint64
	acc, c = bits.Add64(acc, uint64(bits.ReverseBytes16(v)), 0)
	return acc + c
}

// pseudoSum is the running sum of the TCP/UDP pseudo-header (RFC 793
// §3.1, RFC 768, RFC 8200 §8.1) of the IP packet pkt with the given
// transport protocol and transport length.
func pseudoSum(pkt []byte, proto uint8, length int) uint64 {
	var acc uint64
	if pkt[0]>>4 == 4 {
		acc = csum.Sum(0, pkt[12:20])
	} else {
		acc = csum.Sum(0, pkt[8:40])
	}
	acc = sumAdd16(acc, uint16(proto))
	return sumAdd16(acc, uint16(length))
}

// errBadVnet reports a virtio-net header inconsistent with its packet.
var errBadVnet = errors.New("netio: malformed virtio-net packet from the TUN device")

// segmentCount returns how many segments splitting the packet pkt (read
// after hdr) yields, and validates hdr against pkt. The header length is
// parsed from the packet rather than trusted from hdr (the kernel may set
// it to the whole first packet on a forwarding path).
func segmentCount(hdr *vnetHdr, pkt []byte) (segs, hdrLen int, err error) {
	if hdr.gsoType&^vnetGSOECN == vnetGSONone {
		return 1, 0, nil
	}
	if len(pkt) < 20 {
		return 0, 0, errBadVnet
	}
	gt := hdr.gsoType &^ vnetGSOECN
	v := pkt[0] >> 4
	switch {
	case v == 4 && (gt == vnetGSOTCPv4 || gt == vnetGSOUDPL4):
	case v == 6 && (gt == vnetGSOTCPv6 || gt == vnetGSOUDPL4):
	default:
		return 0, 0, errBadVnet
	}
	cs := int(hdr.csumStart)
	if gt == vnetGSOUDPL4 {
		hdrLen = cs + 8
	} else {
		if len(pkt) <= cs+12 {
			return 0, 0, errBadVnet
		}
		th := int(pkt[cs+12]>>4) * 4
		if th < 20 {
			return 0, 0, errBadVnet
		}
		hdrLen = cs + th
	}
	minIP := 20
	if v == 6 {
		minIP = 40
	}
	if cs < minIP || hdrLen > len(pkt) || hdr.gsoSize == 0 || cs+int(hdr.csumOffset)+2 > hdrLen {
		return 0, 0, errBadVnet
	}
	payload := len(pkt) - hdrLen
	segs = max((payload+int(hdr.gsoSize)-1)/int(hdr.gsoSize), 1)
	return segs, hdrLen, nil
}

// completeChecksum finishes a CHECKSUM_PARTIAL packet (NEEDS_CSUM without
// GSO): the field at csumStart+csumOffset holds the pseudo-header sum, and
// the checksum covers everything from csumStart.
func completeChecksum(hdr *vnetHdr, pkt []byte) error {
	cs, at := int(hdr.csumStart), int(hdr.csumStart)+int(hdr.csumOffset)
	if at+2 > len(pkt) || cs > len(pkt) {
		return errBadVnet
	}
	binary.BigEndian.PutUint16(pkt[at:], ^csum.Fold(csum.Sum(0, pkt[cs:])))
	return nil
}

// splitInto copies the segments of the super-packet pkt (segs of them, as
// returned by segmentCount) into out[i][offset:], fixing every segment's
// IP and transport headers and computing its checksums, and stores their
// lengths in sizes. pkt is modified (its checksum fields, and the fields
// that differ per segment, are cleared).
//
// The headers are summed once: the fields that differ per segment (IPv4
// total length and ID; TCP sequence number and flags, or UDP length; the
// pseudo-header's length) are read out and zeroed in pkt's headers first,
// and every segment adds its own values of them to those sums (the sum is
// linear in the 16-bit words, RFC 1071 §2(A), RFC 1624). Each segment's
// payload is summed as it is copied (csum.CopySum), so splitting reads the
// super-packet once.
func splitInto(hdr *vnetHdr, pkt []byte, segs, hdrLen int, out [][]byte, sizes []int, offset int) {
	isV4 := pkt[0]>>4 == 4
	cs := int(hdr.csumStart)
	gso := int(hdr.gsoSize)
	tcp := hdr.gsoType&^vnetGSOECN != vnetGSOUDPL4
	proto := uint8(protoUDP)
	if tcp {
		proto = protoTCP
	}
	binary.BigEndian.PutUint16(pkt[cs+int(hdr.csumOffset):], 0)
	var ipBase uint64
	id0 := binary.BigEndian.Uint16(pkt[4:])
	if isV4 {
		clear(pkt[2:6])   // total length, ID
		clear(pkt[10:12]) // header checksum
		ipBase = csum.Sum(0, pkt[:cs])
	}
	var seq0 uint32
	var offFlags uint16 // TCP data offset and flags: the word at cs+12
	if tcp {
		seq0 = binary.BigEndian.Uint32(pkt[cs+4:])
		offFlags = binary.BigEndian.Uint16(pkt[cs+12:])
		clear(pkt[cs+4 : cs+8])
		clear(pkt[cs+12 : cs+14])
	} else {
		clear(pkt[cs+4 : cs+6]) // UDP length
	}
	// hdrLen-cs is even (a TCP header is whole 32-bit words, a UDP header
	// 8 bytes), so the payload's sum can be added after it.
	tBase := csum.Sum(pseudoSum(pkt, proto, 0), pkt[cs:hdrLen])
	for i := range segs {
		start := hdrLen + i*gso
		end := min(start+gso, len(pkt))
		total := hdrLen + end - start
		seg := out[i][offset : offset+total]
		copy(seg, pkt[:hdrLen])
		sizes[i] = total
		if isV4 {
			id := id0 + uint16(i)
			binary.BigEndian.PutUint16(seg[2:], uint16(total))
			binary.BigEndian.PutUint16(seg[4:], id)
			binary.BigEndian.PutUint16(seg[10:], ^csum.Fold(sumAdd16(sumAdd16(ipBase, uint16(total)), id)))
		} else {
			binary.BigEndian.PutUint16(seg[4:], uint16(total-40))
		}
		tlen := uint16(total - cs)
		acc := sumAdd16(tBase, tlen) // the pseudo-header's length
		if tcp {
			seq := seq0 + uint32(i*gso)
			w := offFlags
			if i != segs-1 {
				w &^= tcpFlagFIN | tcpFlagPSH
			}
			if i != 0 {
				w &^= tcpFlagCWR
			}
			binary.BigEndian.PutUint32(seg[cs+4:], seq)
			binary.BigEndian.PutUint16(seg[cs+12:], w)
			acc = sumAdd16(sumAdd16(sumAdd16(acc, uint16(seq>>16)), uint16(seq)), w)
		} else {
			binary.BigEndian.PutUint16(seg[cs+4:], tlen)
			acc = sumAdd16(acc, tlen)
		}
		c := ^csum.Fold(csum.CopySum(seg[hdrLen:], pkt[start:end], acc))
		if !tcp && c == 0 {
			c = 0xffff // RFC 768: a computed zero is sent as all ones
		}
		binary.BigEndian.PutUint16(seg[cs+int(hdr.csumOffset):], c)
	}
}

// groKind classifies a packet for coalescing.
type groKind uint8

const (
	groNone groKind = iota
	groTCP
	groUDP
)

// groPacket is the parsed view of one packet offered to the coalescer.
type groPacket struct {
	kind    groKind
	iphLen  int
	hdrLen  int    // IP + transport header
	seq     uint32 // TCP
	flags   uint8  // TCP
	payload int
}

// parseGRO classifies pkt. Only packets the kernel can take back as one
// GSO super-packet qualify: IPv4 without options or fragmentation, IPv6
// without extension headers, TCP with only ACK (and PSH) set, UDP when
// udp is set (USO accepted), and a non-empty payload.
func parseGRO(pkt []byte, udp bool) groPacket {
	var g groPacket
	if len(pkt) < 20 {
		return g
	}
	var proto uint8
	switch pkt[0] >> 4 {
	case 4:
		if pkt[0]&0x0f != 5 || int(binary.BigEndian.Uint16(pkt[2:])) != len(pkt) {
			return g
		}
		if binary.BigEndian.Uint16(pkt[6:])&0x3fff != 0 { // MF or fragment offset
			return g
		}
		proto, g.iphLen = pkt[9], 20
	case 6:
		if len(pkt) < 40 || int(binary.BigEndian.Uint16(pkt[4:]))+40 != len(pkt) {
			return g
		}
		proto, g.iphLen = pkt[6], 40
	default:
		return g
	}
	switch {
	case proto == protoTCP:
		if len(pkt) < g.iphLen+20 {
			return g
		}
		th := int(pkt[g.iphLen+12]>>4) * 4
		flags := pkt[g.iphLen+13]
		if th < 20 || len(pkt) < g.iphLen+th || flags&^(tcpFlagACK|tcpFlagPSH) != 0 || flags&tcpFlagACK == 0 {
			return g
		}
		g.hdrLen = g.iphLen + th
		g.seq = binary.BigEndian.Uint32(pkt[g.iphLen+4:])
		g.flags = flags
		g.kind = groTCP
	case proto == protoUDP && udp:
		if len(pkt) < g.iphLen+8 || int(binary.BigEndian.Uint16(pkt[g.iphLen+4:])) != len(pkt)-g.iphLen {
			return g
		}
		g.hdrLen = g.iphLen + 8
		g.kind = groUDP
	default:
		return g
	}
	g.payload = len(pkt) - g.hdrLen
	if g.payload == 0 {
		g.kind = groNone
	}
	return g
}

// sameFlow reports whether b may follow a in one super-packet as far as
// the headers go: same addresses, ports (and for TCP the ACK number,
// window and options), and equal IP fields the kernel would copy to every
// segment (TOS/traffic class, TTL/hop limit, DF).
func sameFlow(a, b []byte, ga, gb *groPacket) bool {
	if ga.kind != gb.kind || ga.hdrLen != gb.hdrLen || ga.iphLen != gb.iphLen {
		return false
	}
	if ga.iphLen == 20 {
		if a[1] != b[1] || a[8] != b[8] || a[9] != b[9] || a[6]&0xe0 != b[6]&0xe0 ||
			binary.BigEndian.Uint64(a[12:]) != binary.BigEndian.Uint64(b[12:]) {
			return false
		}
	} else {
		if binary.BigEndian.Uint32(a) != binary.BigEndian.Uint32(b) || a[6] != b[6] || a[7] != b[7] ||
			string(a[8:40]) != string(b[8:40]) {
			return false
		}
	}
	t := ga.iphLen
	if binary.BigEndian.Uint32(a[t:]) != binary.BigEndian.Uint32(b[t:]) { // ports
		return false
	}
	if ga.kind == groTCP {
		// ACK number, data offset, window; then options.
		if binary.BigEndian.Uint32(a[t+8:]) != binary.BigEndian.Uint32(b[t+8:]) ||
			a[t+12] != b[t+12] || binary.BigEndian.Uint16(a[t+14:]) != binary.BigEndian.Uint16(b[t+14:]) ||
			string(a[t+20:ga.hdrLen]) != string(b[t+20:gb.hdrLen]) {
			return false
		}
	}
	return true
}

// transportValid verifies the TCP/UDP checksum of a parsed packet. A UDP
// checksum of zero over IPv4 means "none" (RFC 768) and is accepted.
func transportValid(pkt []byte, g *groPacket) bool {
	proto := uint8(protoTCP)
	if g.kind == groUDP {
		proto = protoUDP
		if g.iphLen == 20 && binary.BigEndian.Uint16(pkt[g.iphLen+6:]) == 0 {
			return true
		}
	}
	return csum.Fold(csum.Sum(pseudoSum(pkt, proto, len(pkt)-g.iphLen), pkt[g.iphLen:])) == 0xffff
}

// groFlow is one super-packet being assembled: the packet at index head
// followed by the payloads of its members, in order.
type groFlow struct {
	head    int
	last    int // index of the latest member (or head)
	count   int
	gsoSize int
	total   int // length of the super-packet
	nextSeq uint32
	closed  bool // PSH seen, or a short segment: nothing may follow
	valid   bool // head's checksum verified
	g       groPacket
}

// coalescer plans the writes of one TUN.Write batch. Its scratch is reused
// across calls (it belongs to one TUN queue and is used under its write
// lock), so planning allocates nothing.
type coalescer struct {
	flows  []groFlow
	next   []int // next[i]: the member after packet i, or -1
	order  []int // write order: heads and lone packets
	isHead []bool
	parsed []groPacket
}

// plan groups the packets bufs[i][offset:] and fills c.order with the
// index of each write in order. For heads of a flow with members it
// rewrites the head's IP and transport headers and the virtio header in
// front of it (bufs[i][offset-vnetHdrLen:offset]) for one GSO write;
// every other write gets a zero virtio header. The members' payloads are
// reached through c.next. udp allows UDP (USO) coalescing.
func (c *coalescer) plan(bufs [][]byte, offset int, udp bool) {
	n := len(bufs)
	c.flows = c.flows[:0]
	c.order = c.order[:0]
	if cap(c.next) < n {
		c.next = make([]int, n)
		c.isHead = make([]bool, n)
		c.parsed = make([]groPacket, n)
	}
	c.next, c.isHead, c.parsed = c.next[:n], c.isHead[:n], c.parsed[:n]
	for i := range n {
		c.next[i], c.isHead[i] = -1, false
		pkt := bufs[i][offset:]
		g := parseGRO(pkt, udp)
		c.parsed[i] = g
		if g.kind != groNone && c.tryAppend(bufs, offset, i, &g) {
			continue
		}
		c.order = append(c.order, i)
		if g.kind != groNone {
			c.flows = append(c.flows, groFlow{
				head: i, last: i, count: 1, gsoSize: g.payload, total: len(pkt), g: g,
				nextSeq: g.seq + uint32(g.payload),
				closed:  g.kind == groTCP && g.flags&tcpFlagPSH != 0,
			})
			c.isHead[i] = true
		}
	}
	for fi := range c.flows {
		c.finish(bufs, offset, &c.flows[fi])
	}
	for _, i := range c.order {
		if !c.isHead[i] || c.next[i] < 0 {
			clear(bufs[i][offset-vnetHdrLen : offset])
		}
	}
}

// tryAppend adds packet i to the newest open flow it belongs to and
// reports whether it did.
func (c *coalescer) tryAppend(bufs [][]byte, offset, i int, g *groPacket) bool {
	pkt := bufs[i][offset:]
	for fi := len(c.flows) - 1; fi >= 0; fi-- {
		f := &c.flows[fi]
		head := bufs[f.head][offset:]
		if !sameFlow(head, pkt, &f.g, g) {
			continue
		}
		// The newest flow with these headers decides; older ones are
		// closed for this packet.
		if f.closed || f.count >= maxCoalesce || g.payload > f.gsoSize || f.total+g.payload > MaxSegmentSize {
			return false
		}
		if g.kind == groTCP && g.seq != f.nextSeq {
			return false
		}
		if !f.valid {
			if !transportValid(head, &f.g) {
				return false
			}
			f.valid = true
		}
		if !transportValid(pkt, g) {
			return false
		}
		c.next[f.last] = i
		f.last = i
		f.count++
		f.total += g.payload
		f.nextSeq += uint32(g.payload)
		if g.payload < f.gsoSize || (g.kind == groTCP && g.flags&tcpFlagPSH != 0) {
			f.closed = true
		}
		if g.kind == groTCP {
			f.g.flags |= g.flags & tcpFlagPSH
		}
		return true
	}
	return false
}

// finish rewrites the head of a flow with members into a super-packet
// header: lengths, IPv4 header checksum, the pseudo-header sum in the
// transport checksum field (CHECKSUM_PARTIAL), PSH from the last member,
// and the virtio header.
func (c *coalescer) finish(bufs [][]byte, offset int, f *groFlow) {
	if f.count < 2 {
		return
	}
	pkt := bufs[f.head][offset:]
	g := &f.g
	tlen := f.total - g.iphLen
	h := vnetHdr{
		flags:     vnetFlagNeedsCsum,
		hdrLen:    uint16(g.hdrLen),
		gsoSize:   uint16(f.gsoSize),
		csumStart: uint16(g.iphLen),
	}
	proto := uint8(protoTCP)
	if g.iphLen == 20 {
		binary.BigEndian.PutUint16(pkt[2:], uint16(f.total))
		binary.BigEndian.PutUint16(pkt[10:], 0)
		binary.BigEndian.PutUint16(pkt[10:], ^csum.Fold(csum.Sum(0, pkt[:20])))
		h.gsoType = vnetGSOTCPv4
	} else {
		binary.BigEndian.PutUint16(pkt[4:], uint16(tlen))
		h.gsoType = vnetGSOTCPv6
	}
	if g.kind == groTCP {
		pkt[g.iphLen+13] |= g.flags & tcpFlagPSH
		h.csumOffset = 16
	} else {
		proto = protoUDP
		h.gsoType = vnetGSOUDPL4
		h.csumOffset = 6
		binary.BigEndian.PutUint16(pkt[g.iphLen+4:], uint16(tlen))
	}
	binary.BigEndian.PutUint16(pkt[g.iphLen+int(h.csumOffset):], csum.Fold(pseudoSum(pkt, proto, tlen)))
	h.encode(bufs[f.head][offset-vnetHdrLen:])
}

// ChecksumTier reports the kernels/csum tier the offload paths run ("AVX2"
// or "generic") and the tiers this CPU can run, fastest first, for the
// start-up log and `gmtun show`.
func ChecksumTier() (selected string, available []string) {
	for _, t := range csum.AllTiers {
		if t.Supported() {
			available = append(available, t.String())
		}
	}
	return csum.Best().String(), available
}
