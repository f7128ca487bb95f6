package netio

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/gmtun/gmtun/tunnel/iface/ifacetest"
	"golang.org/x/sys/unix"
)

// TestStdBindLargeGSOCounted sends UDP GSO messages of 128 segments (Linux
// 6.x accepts up to UDP_MAX_SEGMENTS = 128; GRO on receive coalesces at
// most 64) over the loopback of a test namespace, so each reaches the
// bind's socket as one message of 128 datagrams, and checks that every
// datagram is either delivered intact, once, or counted in
// Drops().GROOverflow:
//   - in place, nothing is lost: the messages that do not fit are held
//     for the next call;
//   - in place with fresh buffers after the first call, the held
//     messages (four of 128 datagrams) are counted;
//   - copied apart, only the first call may overflow (its slots were
//     sized for 64 segments per message).
func TestStdBindLargeGSOCounted(t *testing.T) {
	ns := ifacetest.New(t)
	addr := netip.MustParseAddr("198.18.9.1")
	if err := ns.AddrUp("lo", netip.PrefixFrom(addr, 32)); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"inplace", "inplace-newbufs", "copy"} {
		t.Run(mode, func(t *testing.T) { testLargeGSO(t, ns, addr, mode) })
	}
}

func testLargeGSO(t *testing.T, ns *ifacetest.NetNS, addr netip.Addr, mode string) {
	inPlace := mode != "copy"
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	bind := NewStdBind()
	var port uint16
	var ipFns []InPlaceReceiveFunc
	var fns []ReceiveFunc
	err := ns.Do(func() (err error) {
		if inPlace {
			ipFns, port, err = bind.OpenInPlace(0)
		} else {
			fns, port, err = bind.Open(0)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer bind.Close()
	if !bind.Offload().GRO4 {
		t.Skip("no UDP GRO: messages are never coalesced")
	}
	go func() { <-ctx.Done(); bind.Close() }()
	sender, err := listenUDP(ns, netip.AddrPortFrom(addr, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()

	const msgs, segs, segSize = 16, 128, 100
	const total = msgs * segs
	dst := net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, port))
	oob := make([]byte, unix.CmsgSpace(2))
	var seg [2]byte
	binary.NativeEndian.PutUint16(seg[:], segSize)
	oob = oob[:putCmsg(oob, unix.SOL_UDP, unix.UDP_SEGMENT, seg[:])]
	payload := make([]byte, segs*segSize)
	for m := range msgs {
		for i := range segs {
			d := payload[i*segSize : (i+1)*segSize]
			copy(d, pattern(m*segs+i, segSize))
			binary.BigEndian.PutUint16(d, uint16(m*segs+i))
		}
		if _, _, err := sender.WriteMsgUDP(payload, oob, dst); err != nil {
			if errors.Is(err, unix.EINVAL) && m == 0 {
				t.Skipf("kernel refuses %d GSO segments: %v", segs, err)
			}
			t.Fatalf("send message %d: %v", m, err)
		}
	}

	bufs := make([][]byte, IdealBatchSize)
	for i := range bufs {
		bufs[i] = make([]byte, MaxSegmentSize)
	}
	pkts := make([][]byte, 8*64) // what tunnel.RoutineReceiveInPlace passes
	owner := make([]int, len(pkts))
	eps := make([]Endpoint, max(len(pkts), len(bufs)))
	sizes := make([]int, len(bufs))
	seen := make([]bool, total)
	delivered := 0
	var afterFirst uint64 // GROOverflow after the calls that may overflow
	for call := 0; delivered+int(bind.Drops().GROOverflow) < total; call++ {
		var n int
		var err error
		if inPlace {
			n, err = ipFns[0](bufs[:8], pkts, owner, eps)
		} else {
			n, err = fns[0](bufs, sizes, eps)
			for i := range n {
				pkts[i] = bufs[i][:sizes[i]]
			}
		}
		if err != nil {
			t.Fatalf("receive call %d after %d datagrams and %v: %v", call, delivered, bind.Drops(), err)
		}
		for _, p := range pkts[:n] {
			if len(p) != segSize {
				t.Fatalf("datagram of %d bytes, want %d", len(p), segSize)
			}
			id := int(binary.BigEndian.Uint16(p))
			want := pattern(id, segSize)
			binary.BigEndian.PutUint16(want, uint16(id))
			if id >= total || seen[id] || string(p) != string(want) {
				t.Fatalf("datagram %d duplicated, out of range or corrupted", id)
			}
			seen[id] = true
			delivered++
		}
		// Drops may grow in the first call (copy) or the second
		// (inplace-newbufs: the held messages are counted), never later.
		if call <= 1 {
			afterFirst = bind.Drops().GROOverflow
		} else if d := bind.Drops().GROOverflow; d != afterFirst {
			t.Fatalf("receive call %d overflowed (%d → %d)", call, afterFirst, d)
		}
		if call == 0 && mode == "inplace-newbufs" {
			for i := range bufs {
				bufs[i] = make([]byte, MaxSegmentSize)
			}
		}
	}
	d := bind.Drops()
	t.Logf("%d datagrams in %d-segment messages: %d delivered, drops %+v", total, segs, delivered, d)
	// The kernel took 128 segments, so the loopback delivers them
	// unsegmented to a GRO socket: the first call meets 8 of them.
	switch want := map[string]uint64{"inplace": 0, "inplace-newbufs": 4 * segs, "copy": 129}[mode]; {
	case d.GROOverflow != want:
		t.Errorf("GROOverflow %d, want %d", d.GROOverflow, want)
	case mode == "inplace" && delivered != total:
		t.Errorf("%d datagrams delivered, want all %d", delivered, total)
	}
	if d.Truncated != 0 || d.BadSource != 0 || d.Empty != 0 {
		t.Errorf("unexpected drops %+v", d)
	}
}

// TestReceiverAcceptCounts feeds receiver.accept the messages a socket
// cannot easily produce (MSG_TRUNC, a source of an unknown family, an
// empty datagram) and a GRO message of 128 segments, and checks the
// counters, the segment size returned and the slot resizing.
func TestReceiverAcceptCounts(t *testing.T) {
	var drops bindDropCounters
	r := newReceiver(&udpSocket{gro: true}, &drops)
	set := func(j, family, gso, flags int) {
		name := r.names[j*sockaddrSize : (j+1)*sockaddrSize]
		clear(name)
		binary.NativeEndian.PutUint16(name, uint16(family))
		binary.BigEndian.PutUint16(name[2:], 51820)
		copy(name[4:8], []byte{198, 18, 0, 7})
		oob := r.oob[j*oobSize : (j+1)*oobSize]
		used := 0
		if gso > 0 {
			var seg [2]byte
			binary.NativeEndian.PutUint16(seg[:], uint16(gso))
			used = putCmsg(oob, unix.SOL_UDP, unix.UDP_GRO, seg[:])
		}
		r.msgs[j].hdr = unix.Msghdr{Flags: int32(flags)}
		r.msgs[j].hdr.SetControllen(used)
	}
	want := BindDrops{}
	check := func(what string) {
		t.Helper()
		got := BindDrops{Truncated: drops.truncated.Load(), BadSource: drops.badSource.Load(), Empty: drops.empty.Load(), GROOverflow: drops.groOverflow.Load()}
		if got != want {
			t.Fatalf("%s: drops %+v, want %+v", what, got, want)
		}
	}

	set(0, unix.AF_INET, 1000, unix.MSG_TRUNC)
	if _, ep := r.accept(0, 4000); ep != nil {
		t.Fatal("truncated message accepted")
	}
	want.Truncated++
	check("MSG_TRUNC")

	set(1, unix.AF_UNIX, 100, 0)
	if _, ep := r.accept(1, 1050); ep != nil {
		t.Fatal("message from an AF_UNIX source accepted")
	}
	want.BadSource += 11 // 10 full segments and a tail
	check("bad family")

	set(2, unix.AF_INET, 0, 0)
	if _, ep := r.accept(2, 0); ep != nil {
		t.Fatal("empty datagram accepted")
	}
	want.Empty++
	check("empty")

	set(3, unix.AF_INET, 0, 0)
	gso, ep := r.accept(3, 1400)
	if ep == nil || gso != 1400 || ep.DstToString() != "198.18.0.7:51820" {
		t.Fatalf("plain datagram: gso %d, endpoint %v", gso, ep)
	}
	if r.segs != udpGSOMaxSegments {
		t.Fatalf("segs %d after a plain datagram", r.segs)
	}
	set(4, unix.AF_INET, 100, 0)
	if gso, ep := r.accept(4, 128*100); ep == nil || gso != 100 {
		t.Fatalf("128-segment message: gso %d, endpoint %v", gso, ep)
	}
	if r.segs != 128 {
		t.Fatalf("segs %d after a 128-segment message, want 128", r.segs)
	}
	check("accepted messages")
	if got, want := (BindDrops{1, 2, 3, 4, 5}).Total(), uint64(15); got != want {
		t.Fatalf("Total %d, want %d", got, want)
	}
}

// TestStdBindCountsSocketDrops fills the IPv4 socket of a bind nobody
// reads, with its receive buffer shrunk, and checks that the kernel's
// drops appear in Drops().Socket, and stay there after Close.
func TestStdBindCountsSocketDrops(t *testing.T) {
	ns := ifacetest.New(t)
	addr := netip.MustParseAddr("198.18.9.2")
	if err := ns.AddrUp("lo", netip.PrefixFrom(addr, 32)); err != nil {
		t.Fatal(err)
	}
	bind := NewStdBind()
	var port uint16
	if err := ns.Do(func() (err error) { _, port, err = bind.Open(0); return err }); err != nil {
		t.Fatal(err)
	}
	defer bind.Close()
	if got := bind.Drops().Socket; got != 0 {
		t.Fatalf("a fresh socket reports %d drops", got)
	}
	bind.mu.Lock()
	s := bind.v4
	bind.mu.Unlock()
	if err := s.rc.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 4096)
	}); err != nil {
		t.Fatal(err)
	}
	const sent = 200
	err := ns.Do(func() error {
		c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, port)))
		if err != nil {
			return err
		}
		defer c.Close()
		payload := make([]byte, 1000)
		for i := range sent {
			binary.LittleEndian.PutUint32(payload, uint32(i))
			if _, err := c.Write(payload); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dropped := bind.Drops().Socket
	if dropped == 0 || dropped > sent {
		t.Fatalf("%d datagrams sent to a 4 KiB receive buffer nobody reads: %d counted as dropped", sent, dropped)
	}
	if err := bind.Close(); err != nil {
		t.Fatal(err)
	}
	if got := bind.Drops().Socket; got != dropped {
		t.Errorf("after Close: %d socket drops, want the %d counted before", got, dropped)
	}
}
