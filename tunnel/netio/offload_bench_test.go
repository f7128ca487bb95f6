package netio

import (
	"net/netip"
	"testing"
)

// The checksum work of the two offload paths, per byte of payload: the TSO
// split of the read path (copy every segment's payload out of the
// super-packet and compute its TCP checksum) and the coalescer of the
// write path (verify every packet's TCP checksum before one GSO write).
// Run: go test -run '^$' -bench 'SplitTSO|CoalesceTCP' ./tunnel/netio/

// benchSuper is a TCP/IPv4 super-packet of segs segments of gso payload
// bytes, as a TUN read with TSO returns it (virtio header included).
func benchSuper(b *testing.B, gso, segs int) []byte {
	b.Helper()
	src, dst := netip.MustParseAddrPort("198.18.0.1:1000"), netip.MustParseAddrPort("198.18.0.2:2000")
	pkts := make([][]byte, segs)
	for i := range pkts {
		pkts[i] = tcpPacket(src, dst, 5000+uint32(i*gso), tcpFlagACK, nil, testPayload(i, gso))
	}
	bufs := withHeadroom(pkts)
	var c coalescer
	c.plan(bufs, testOffset, false)
	if len(c.order) != 1 {
		b.Fatalf("%d writes, want 1", len(c.order))
	}
	return flatten(&c, bufs, testOffset, 0)
}

func BenchmarkSplitTSO(b *testing.B) {
	const gso, segs = 1400, 46 // 64 KiB of payload, the kernel's TSO limit
	super := benchSuper(b, gso, segs)
	var h vnetHdr
	h.decode(super)
	pkt := append([]byte(nil), super[vnetHdrLen:]...)
	n, hdrLen, err := segmentCount(&h, pkt)
	if err != nil || n != segs {
		b.Fatalf("segmentCount: %d segments, %v", n, err)
	}
	out := make([][]byte, segs)
	for i := range out {
		out[i] = make([]byte, testOffset+hdrLen+gso)
	}
	sizes := make([]int, segs)
	b.SetBytes(int64(segs * gso))
	b.ReportAllocs()
	for b.Loop() {
		splitInto(&h, pkt, segs, hdrLen, out, sizes, testOffset)
	}
}

func BenchmarkCoalesceTCP(b *testing.B) {
	const gso, segs = 1400, 46
	src, dst := netip.MustParseAddrPort("198.18.0.1:1000"), netip.MustParseAddrPort("198.18.0.2:2000")
	pkts := make([][]byte, segs)
	for i := range pkts {
		pkts[i] = tcpPacket(src, dst, 5000+uint32(i*gso), tcpFlagACK, nil, testPayload(i, gso))
	}
	orig := withHeadroom(pkts)
	bufs := withHeadroom(pkts)
	var c coalescer
	b.SetBytes(int64(segs * gso))
	b.ReportAllocs()
	for b.Loop() {
		copy(bufs[0], orig[0]) // plan rewrites the head's headers
		c.plan(bufs, testOffset, false)
	}
	if len(c.order) != 1 {
		b.Fatalf("%d writes, want 1", len(c.order))
	}
}
