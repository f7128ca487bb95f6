package netio

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/gmtun/gmtun/kernels/cpu"
	"github.com/gmtun/gmtun/kernels/csum"
)

// The references here are the plain RFC 1071 helpers of packet_test.go
// (16-bit big-endian words), independent of kernels/csum.

func TestChecksumMatchesReference(t *testing.T) {
	// RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2.
	ex := []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}
	if got := csum.Fold(csum.Sum(0, ex)); got != 0xddf2 {
		t.Fatalf("RFC 1071 example: %04x, want ddf2", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 300; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if n%7 == 0 {
			for i := range b {
				b[i] = 0xff // maximal carries
			}
		}
		want := csumFold(csumAdd(0, b))
		if got := csum.Fold(csum.Sum(0, b)); got != want {
			t.Fatalf("len %d: %04x, want %04x", n, got, want)
		}
		// Split at an even point: same sum.
		h := (n / 2) &^ 1
		if got := csum.Fold(csum.Sum(csum.Sum(0, b[:h]), b[h:])); got != want {
			t.Fatalf("len %d split at %d: %04x, want %04x", n, h, got, want)
		}
		// A network-order 16-bit word added directly.
		if n >= 2 {
			w := binary.BigEndian.Uint16(b)
			if got := csum.Fold(sumAdd16(csum.Sum(0, b[2:]), w)); got != want {
				t.Fatalf("len %d with sumAdd16: %04x, want %04x", n, got, want)
			}
		}
	}
}

// tcpPacket builds an IPv4/IPv6 TCP packet with valid checksums and the
// given flags, sequence number and payload; opts are TCP options (a
// multiple of 4 bytes).
func tcpPacket(src, dst netip.AddrPort, seq uint32, flags uint8, opts, payload []byte) []byte {
	th := 20 + len(opts)
	tcp := make([]byte, th+len(payload))
	binary.BigEndian.PutUint16(tcp[0:], src.Port())
	binary.BigEndian.PutUint16(tcp[2:], dst.Port())
	binary.BigEndian.PutUint32(tcp[4:], seq)
	binary.BigEndian.PutUint32(tcp[8:], 777) // ACK number
	tcp[12] = byte(th/4) << 4
	tcp[13] = flags
	binary.BigEndian.PutUint16(tcp[14:], 501) // window
	copy(tcp[20:], opts)
	copy(tcp[th:], payload)
	sum := csumAdd(0, src.Addr().AsSlice())
	sum = csumAdd(sum, dst.Addr().AsSlice())
	sum += 6 + uint32(len(tcp))
	binary.BigEndian.PutUint16(tcp[16:], ^csumFold(csumAdd(sum, tcp)))
	if src.Addr().Is4() {
		h := make([]byte, 20, 20+len(tcp))
		h[0] = 0x45
		binary.BigEndian.PutUint16(h[2:], uint16(20+len(tcp)))
		binary.BigEndian.PutUint16(h[4:], 1000) // IP ID
		h[6] = 0x40                             // DF
		h[8], h[9] = 64, 6
		copy(h[12:], src.Addr().AsSlice())
		copy(h[16:], dst.Addr().AsSlice())
		binary.BigEndian.PutUint16(h[10:], ^csumFold(csumAdd(0, h)))
		return append(h, tcp...)
	}
	h := make([]byte, 40, 40+len(tcp))
	h[0] = 0x60
	binary.BigEndian.PutUint16(h[4:], uint16(len(tcp)))
	h[6], h[7] = 6, 64
	copy(h[8:], src.Addr().AsSlice())
	copy(h[24:], dst.Addr().AsSlice())
	return append(h, tcp...)
}

// tcpValid checks the IPv4 header checksum and the TCP checksum.
func tcpValid(pkt []byte) bool {
	iph := 40
	var sum uint32
	if pkt[0]>>4 == 4 {
		iph = 20
		if csumFold(csumAdd(0, pkt[:20])) != 0xffff || int(binary.BigEndian.Uint16(pkt[2:])) != len(pkt) {
			return false
		}
		sum = csumAdd(csumAdd(0, pkt[12:16]), pkt[16:20])
	} else {
		if int(binary.BigEndian.Uint16(pkt[4:]))+40 != len(pkt) {
			return false
		}
		sum = csumAdd(csumAdd(0, pkt[8:24]), pkt[24:40])
	}
	sum += 6 + uint32(len(pkt)-iph)
	return csumFold(csumAdd(sum, pkt[iph:])) == 0xffff
}

// flatten returns what Write hands to writev for the write at order
// position k: the virtio header and head packet, then member payloads.
func flatten(c *coalescer, bufs [][]byte, offset, k int) []byte {
	i := c.order[k]
	out := append([]byte(nil), bufs[i][offset-vnetHdrLen:]...)
	for m := c.next[i]; m >= 0; m = c.next[m] {
		out = append(out, bufs[m][offset+c.parsed[m].hdrLen:]...)
	}
	return out
}

const testOffset = 16

func withHeadroom(pkts [][]byte) [][]byte {
	bufs := make([][]byte, len(pkts))
	for i, p := range pkts {
		b := make([]byte, testOffset+len(p))
		copy(b[testOffset:], p)
		for j := range testOffset {
			b[j] = 0xee // must be overwritten by the virtio header
		}
		bufs[i] = b
	}
	return bufs
}

func splitAll(t *testing.T, super []byte) [][]byte {
	t.Helper()
	var h vnetHdr
	h.decode(super)
	pkt := append([]byte(nil), super[vnetHdrLen:]...)
	segs, hdrLen, err := segmentCount(&h, pkt)
	if err != nil {
		t.Fatalf("segmentCount: %v", err)
	}
	out := make([][]byte, segs)
	for i := range out {
		out[i] = make([]byte, testOffset+len(pkt))
	}
	sizes := make([]int, segs)
	splitInto(&h, pkt, segs, hdrLen, out, sizes, testOffset)
	for i := range out {
		out[i] = out[i][testOffset : testOffset+sizes[i]]
	}
	return out
}

// TestCoalesceSplitRoundTrip coalesces the segments of a TCP flow (IPv4,
// IPv6, with TCP options) and of a UDP flow, checks the super-packet's
// virtio header, lengths and partial checksum, then splits it again as
// the read path does and expects the original segments back, byte for
// byte (checksums included).
func TestCoalesceSplitRoundTrip(t *testing.T) {
	for _, fam := range []struct{ name, a, b string }{
		{"v4", "10.0.0.1:1000", "10.0.0.2:2000"},
		{"v6", "[fd00::1]:1000", "[fd00::2]:2000"},
	} {
		src, dst := netip.MustParseAddrPort(fam.a), netip.MustParseAddrPort(fam.b)
		for _, proto := range []string{"tcp", "udp"} {
			t.Run(fam.name+"-"+proto, func(t *testing.T) {
				const gso, n = 1000, 7
				opts := []byte{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2} // NOP NOP timestamps
				var pkts [][]byte
				for i := range n {
					size := gso
					if i == n-1 {
						size = 333 // short tail
					}
					if proto == "tcp" {
						flags := uint8(tcpFlagACK)
						if i == n-1 {
							flags |= tcpFlagPSH
						}
						pkts = append(pkts, tcpPacket(src, dst, 5000+uint32(i*gso), flags, opts, testPayload(i, size)))
					} else {
						pkts = append(pkts, buildUDP(src, dst, testPayload(i, size)))
					}
				}
				orig := make([][]byte, n)
				for i := range pkts {
					orig[i] = append([]byte(nil), pkts[i]...)
				}
				bufs := withHeadroom(pkts)
				var c coalescer
				c.plan(bufs, testOffset, true)
				if len(c.order) != 1 {
					t.Fatalf("%d writes, want 1", len(c.order))
				}
				super := flatten(&c, bufs, testOffset, 0)
				var h vnetHdr
				h.decode(super)
				wantType := uint8(vnetGSOUDPL4)
				if proto == "tcp" {
					wantType = vnetGSOTCPv4
					if fam.name == "v6" {
						wantType = vnetGSOTCPv6
					}
				}
				if h.flags != vnetFlagNeedsCsum || h.gsoType != wantType || h.gsoSize != gso {
					t.Fatalf("virtio header %+v", h)
				}
				pkt := super[vnetHdrLen:]
				if pkt[0]>>4 == 4 && (int(binary.BigEndian.Uint16(pkt[2:])) != len(pkt) || csumFold(csumAdd(0, pkt[:20])) != 0xffff) {
					t.Fatal("IPv4 header of the super-packet: bad length or checksum")
				}
				// The partial checksum plus the sum over the transport
				// header and payload must complete to a valid checksum.
				full := append([]byte(nil), pkt...)
				if err := completeChecksum(&h, full); err != nil {
					t.Fatal(err)
				}
				if proto == "tcp" && !tcpValid(full) {
					t.Fatal("completed super-packet checksum invalid")
				}
				if proto == "udp" {
					if _, _, pl, ok := parseUDP(full); !ok || len(pl) != (n-1)*gso+333 {
						t.Fatal("completed UDP super-packet invalid")
					}
				}
				segs := splitAll(t, super)
				if len(segs) != n {
					t.Fatalf("split into %d segments, want %d", len(segs), n)
				}
				for i := range segs {
					if !bytes.Equal(segs[i], orig[i]) {
						if proto == "tcp" && pkt[0]>>4 == 4 {
							// IP IDs: the originals all carry 1000; a split
							// numbers them upwards. Compare the rest.
							a, b := append([]byte(nil), segs[i]...), append([]byte(nil), orig[i]...)
							clear(a[4:6])
							clear(b[4:6])
							clear(a[10:12])
							clear(b[10:12])
							if bytes.Equal(a, b) && tcpValid(segs[i]) {
								continue
							}
						}
						if proto == "udp" && pkt[0]>>4 == 4 {
							a, b := append([]byte(nil), segs[i]...), append([]byte(nil), orig[i]...)
							clear(a[4:6])
							clear(b[4:6])
							clear(a[10:12])
							clear(b[10:12])
							if _, _, _, ok := parseUDP(segs[i]); ok && bytes.Equal(a, b) {
								continue
							}
						}
						t.Fatalf("segment %d differs after the round trip", i)
					}
				}
			})
		}
	}
}

// TestCoalesceRules checks what must not be merged: a sequence gap, a
// different flow, a bad checksum, anything after PSH or a short segment,
// SYN/FIN packets, pure ACKs, and more than maxCoalesce segments.
func TestCoalesceRules(t *testing.T) {
	src, dst := netip.MustParseAddrPort("10.0.0.1:1000"), netip.MustParseAddrPort("10.0.0.2:2000")
	other := netip.MustParseAddrPort("10.0.0.1:1001")
	seg := func(seq uint32, flags uint8, size int) []byte {
		return tcpPacket(src, dst, seq, flags, nil, testPayload(int(seq), size))
	}
	corrupt := seg(2000, tcpFlagACK, 1000)
	corrupt[len(corrupt)-1] ^= 1
	cases := []struct {
		name  string
		pkts  [][]byte
		want  []int // packets per write, in write order
		udpOK bool
	}{
		{"contiguous", [][]byte{seg(0, tcpFlagACK, 1000), seg(1000, tcpFlagACK, 1000), seg(2000, tcpFlagACK, 1000)}, []int{3}, false},
		{"gap", [][]byte{seg(0, tcpFlagACK, 1000), seg(1000, tcpFlagACK, 1000), seg(3000, tcpFlagACK, 1000)}, []int{2, 1}, false},
		{"two-flows", [][]byte{seg(0, tcpFlagACK, 1000), tcpPacket(other, dst, 1000, tcpFlagACK, nil, testPayload(1, 1000)), seg(1000, tcpFlagACK, 1000)}, []int{2, 1}, false},
		{"bad-checksum", [][]byte{seg(0, tcpFlagACK, 1000), seg(1000, tcpFlagACK, 1000), corrupt}, []int{2, 1}, false},
		{"after-psh", [][]byte{seg(0, tcpFlagACK|tcpFlagPSH, 1000), seg(1000, tcpFlagACK, 1000)}, []int{1, 1}, false},
		{"after-short", [][]byte{seg(0, tcpFlagACK, 1000), seg(1000, tcpFlagACK, 500), seg(1500, tcpFlagACK, 500)}, []int{2, 1}, false},
		{"larger-after", [][]byte{seg(0, tcpFlagACK, 500), seg(500, tcpFlagACK, 1000)}, []int{1, 1}, false},
		{"fin", [][]byte{seg(0, tcpFlagACK, 1000), seg(1000, tcpFlagACK|tcpFlagFIN, 1000)}, []int{1, 1}, false},
		{"pure-ack", [][]byte{seg(0, tcpFlagACK, 0), seg(0, tcpFlagACK, 0)}, []int{1, 1}, false},
		{"udp-without-uso", [][]byte{buildUDP(src, dst, testPayload(1, 100)), buildUDP(src, dst, testPayload(2, 100))}, []int{1, 1}, false},
		{"udp-with-uso", [][]byte{buildUDP(src, dst, testPayload(1, 100)), buildUDP(src, dst, testPayload(2, 100))}, []int{2}, true},
	}
	var long [][]byte
	for i := range maxCoalesce + 3 {
		long = append(long, seg(uint32(i*100), tcpFlagACK, 100))
	}
	cases = append(cases, struct {
		name  string
		pkts  [][]byte
		want  []int
		udpOK bool
	}{"limit", long, []int{maxCoalesce, 3}, false})
	var c coalescer // reused across cases, as a queue does
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bufs := withHeadroom(tc.pkts)
			c.plan(bufs, testOffset, tc.udpOK)
			var got []int
			for _, i := range c.order {
				k := 1
				for m := c.next[i]; m >= 0; m = c.next[m] {
					k++
				}
				got = append(got, k)
				if k == 1 && !bytes.Equal(bufs[i][testOffset-vnetHdrLen:testOffset], make([]byte, vnetHdrLen)) {
					t.Errorf("lone packet %d without a zero virtio header", i)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("writes %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("writes %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestSplitNoGSOChecksum: a CHECKSUM_PARTIAL packet without GSO gets its
// checksum completed.
func TestSplitNoGSOChecksum(t *testing.T) {
	src, dst := netip.MustParseAddrPort("[fd00::1]:1"), netip.MustParseAddrPort("[fd00::2]:2")
	pkt := tcpPacket(src, dst, 1, tcpFlagACK, nil, testPayload(9, 77))
	// Replace the checksum by the pseudo-header sum, as the kernel does.
	binary.BigEndian.PutUint16(pkt[40+16:], csum.Fold(pseudoSum(pkt, protoTCP, len(pkt)-40)))
	if tcpValid(pkt) {
		t.Fatal("test setup: partial checksum already valid")
	}
	h := vnetHdr{flags: vnetFlagNeedsCsum, csumStart: 40, csumOffset: 16}
	if err := completeChecksum(&h, pkt); err != nil || !tcpValid(pkt) {
		t.Fatalf("completeChecksum: %v, valid %v", err, tcpValid(pkt))
	}
}

// TestSegmentCountRejects: inconsistent virtio headers are errors, never
// panics.
func TestSegmentCountRejects(t *testing.T) {
	src, dst := netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2")
	pkt := tcpPacket(src, dst, 1, tcpFlagACK, nil, testPayload(1, 3000))
	for _, h := range []vnetHdr{
		{gsoType: vnetGSOTCPv6, gsoSize: 1000, csumStart: 20, csumOffset: 16}, // wrong family
		{gsoType: vnetGSOTCPv4, gsoSize: 0, csumStart: 20, csumOffset: 16},    // no size
		{gsoType: vnetGSOTCPv4, gsoSize: 1000, csumStart: 10, csumOffset: 16}, // inside IP header
		{gsoType: vnetGSOTCPv4, gsoSize: 1000, csumStart: 20, csumOffset: 60}, // past the header
		{gsoType: 9, gsoSize: 1000, csumStart: 20, csumOffset: 16},            // unknown type
	} {
		if _, _, err := segmentCount(&h, pkt); err == nil {
			t.Errorf("%+v accepted", h)
		}
	}
	h := vnetHdr{gsoType: vnetGSOTCPv4, gsoSize: 1000, csumStart: 20, csumOffset: 16}
	if segs, hdrLen, err := segmentCount(&h, pkt); err != nil || segs != 3 || hdrLen != 40 {
		t.Fatalf("valid header: %d segments, header %d, %v", segs, hdrLen, err)
	}
	if _, _, err := segmentCount(&h, pkt[:45]); err != nil {
		t.Fatalf("short payload: %v", err)
	}
}

// testPayload is n bytes derived from seq.
func testPayload(seq, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seq*13 + i*7)
	}
	return b
}

// TestSplitRandom splits random TSO/USO super-packets (IPv4 and IPv6, TCP
// with and without options, UDP; segment sizes odd and even, short
// tails, unaligned output buffers) and checks every segment against the
// independent RFC 1071 reference of packet_test.go: its payload is the
// matching slice of the super-packet's, and its IPv4 header and TCP/UDP
// checksums are valid. The payload copy and its checksum are one pass
// (csum.CopySum), so this is what proves the fused pass right.
func TestSplitRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for iter := range 400 {
		v6 := iter%2 == 1
		udp := iter%3 == 2
		src, dst := netip.MustParseAddrPort("198.18.0.1:1000"), netip.MustParseAddrPort("198.19.0.2:2000")
		if v6 {
			src, dst = netip.MustParseAddrPort("[fd00::1]:1000"), netip.MustParseAddrPort("[fd00::2]:2000")
		}
		gso := 1 + r.IntN(1500)
		payload := testPayload(iter, 1+r.IntN(min(20*gso, 60000)))
		for i := range payload {
			payload[i] ^= byte(r.Uint32())
		}
		var pkt []byte
		var seq0 uint32
		h := vnetHdr{flags: vnetFlagNeedsCsum, gsoSize: uint16(gso)}
		var th int
		if udp {
			pkt, th = buildUDP(src, dst, payload), 8
			h.gsoType, h.csumOffset = vnetGSOUDPL4, 6
		} else {
			opts := make([]byte, 4*r.IntN(11))
			for i := range opts {
				opts[i] = 1 // NOP
			}
			flags := uint8(tcpFlagACK) | uint8(r.IntN(2))*tcpFlagPSH | uint8(r.IntN(2))*tcpFlagFIN | uint8(r.IntN(2))*tcpFlagCWR
			seq0 = r.Uint32()
			pkt, th = tcpPacket(src, dst, seq0, flags, opts, payload), 20+len(opts)
			h.gsoType, h.csumOffset = vnetGSOTCPv4, 16
			if v6 {
				h.gsoType = vnetGSOTCPv6
			}
		}
		iph := 20
		if v6 {
			iph = 40
		}
		h.csumStart, h.hdrLen = uint16(iph), uint16(iph+th)
		orig := append([]byte(nil), pkt...)
		segs, hdrLen, err := segmentCount(&h, pkt)
		if err != nil || hdrLen != iph+th || segs != (len(payload)+gso-1)/gso {
			t.Fatalf("iter %d: segmentCount %d, %d, %v", iter, segs, hdrLen, err)
		}
		offset := r.IntN(33)
		out := make([][]byte, segs)
		for i := range out {
			out[i] = make([]byte, offset+hdrLen+gso+r.IntN(3))
		}
		sizes := make([]int, segs)
		splitInto(&h, pkt, segs, hdrLen, out, sizes, offset)
		for i := range segs {
			seg := out[i][offset : offset+sizes[i]]
			want := payload[i*gso : min((i+1)*gso, len(payload))]
			if !bytes.Equal(seg[hdrLen:], want) {
				t.Fatalf("iter %d segment %d: payload differs", iter, i)
			}
			if udp {
				if _, _, pl, ok := parseUDP(seg); !ok || !bytes.Equal(pl, want) {
					t.Fatalf("iter %d segment %d: invalid UDP segment", iter, i)
				}
			} else if !tcpValid(seg) {
				t.Fatalf("iter %d segment %d (gso %d, header %d): invalid TCP segment", iter, i, gso, hdrLen)
			}
			if v6 && int(binary.BigEndian.Uint16(seg[4:])) != len(seg)-40 {
				t.Fatalf("iter %d segment %d: IPv6 payload length %d for %d bytes", iter, i, binary.BigEndian.Uint16(seg[4:]), len(seg))
			}
			if !v6 && binary.BigEndian.Uint16(seg[4:]) != binary.BigEndian.Uint16(orig[4:])+uint16(i) {
				t.Fatalf("iter %d segment %d: IP ID %d", iter, i, binary.BigEndian.Uint16(seg[4:]))
			}
			if udp {
				continue
			}
			if got := binary.BigEndian.Uint32(seg[iph+4:]); got != seq0+uint32(i*gso) {
				t.Fatalf("iter %d segment %d: sequence number %d, want %d", iter, i, got, seq0+uint32(i*gso))
			}
			want0 := orig[iph+13]
			if i != segs-1 {
				want0 &^= tcpFlagFIN | tcpFlagPSH
			}
			if i != 0 {
				want0 &^= tcpFlagCWR
			}
			if seg[iph+13] != want0 || seg[iph+12] != orig[iph+12] || !bytes.Equal(seg[iph+8:iph+12], orig[iph+8:iph+12]) {
				t.Fatalf("iter %d segment %d: TCP header % x, want flags %02x from % x", iter, i, seg[iph:hdrLen], want0, orig[iph:hdrLen])
			}
		}
	}
}

func TestChecksumTier(t *testing.T) {
	sel, avail := ChecksumTier()
	if len(avail) == 0 || avail[0] != sel || avail[len(avail)-1] != cpu.TierGeneric {
		t.Fatalf("ChecksumTier() = %q, %q: want the best tier first and %q last", sel, avail, cpu.TierGeneric)
	}
	if sel != csum.Best().String() {
		t.Fatalf("selected %q, csum.Best() %q", sel, csum.Best())
	}
}
