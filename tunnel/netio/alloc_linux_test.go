package netio

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/gmtun/gmtun/tunnel/iface"
	"github.com/gmtun/gmtun/tunnel/iface/ifacetest"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestStdBindNoAllocs: in the steady state a Send of a GSO-sized batch
// and the receives that collect it allocate nothing (endpoints are cached
// per source, callbacks and scratch are reused).
func TestStdBindNoAllocs(t *testing.T) {
	ns := ifacetest.New(t)
	ns.WaitReady(t, "lo", 5*time.Second)
	a, b := NewStdBind(), NewStdBind()
	var fns []ReceiveFunc
	var port uint16
	if err := ns.Do(func() (err error) {
		if _, _, err = a.Open(0); err != nil {
			return err
		}
		fns, port, err = b.Open(0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	var recv ReceiveFunc
	for _, fn := range fns {
		if fn.PrettyName() == "v4" {
			recv = fn
		}
	}
	ep, err := a.ParseEndpoint(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port).String())
	if err != nil {
		t.Fatal(err)
	}
	const count = 32
	sent := make([][]byte, count)
	for i := range sent {
		sent[i] = make([]byte, 1200)
		sent[i][0] = byte(i)
	}
	bufs := make([][]byte, b.BatchSize())
	for i := range bufs {
		bufs[i] = make([]byte, MaxSegmentSize)
	}
	sizes := make([]int, len(bufs))
	eps := make([]Endpoint, len(bufs))
	round := func() {
		if err := a.Send(sent, ep); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < count; {
			n, err := recv(bufs, sizes, eps)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if sizes[i] != 1200 || bufs[i][0] != byte(got) {
					t.Fatalf("datagram %d: %d bytes, first byte %d", got, sizes[i], bufs[i][0])
				}
				got++
			}
		}
	}
	round() // warm up: endpoint cache, scratch
	if allocs := testing.AllocsPerRun(50, round); allocs != 0 {
		t.Errorf("%.1f allocations per send+receive round of %d datagrams, want 0", allocs, count)
	}
}

// TestTUNNoAllocs: TUN Write of a coalescible UDP batch and TUN Read of
// a USO super-packet allocate nothing in the steady state.
func TestTUNNoAllocs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ns := ifacetest.New(t)
	var dev *TUNDevice
	if err := ns.Do(func() (err error) {
		dev, err = OpenTUN(TUNConfig{Name: "gma%d", MTU: 1420, Queues: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	go func() { <-ctx.Done(); dev.Close() }()
	if !dev.Offload().VNetHdr || !dev.Offload().USO {
		t.Skipf("needs TUN offloads with USO, have %v", dev.Offload())
	}
	ap, err := iface.Configure(ns.NL, dev.Name(), iface.Config{
		Addresses: []netip.Prefix{mp("198.18.3.1/24")},
		Routes:    []netip.Prefix{mp("198.18.4.0/24")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ap.Teardown() })
	ns.WaitReady(t, dev.Name(), 5*time.Second)
	q := dev.Queues()[0]
	local := netip.MustParseAddr("198.18.3.1")
	c, err := listenUDP(ns, netip.AddrPortFrom(local, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, _ := c.SyscallConn()
	var serr error
	rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT, 1000) })
	if serr != nil {
		t.Fatal(serr)
	}
	const offset = 16
	bufs := make([][]byte, q.BatchSize())
	for i := range bufs {
		bufs[i] = make([]byte, offset+MaxSegmentSize)
	}
	sizes := make([]int, len(bufs))
	payload := make([]byte, 8*1000)
	remote := netip.AddrPortFrom(netip.MustParseAddr("198.18.4.9"), 9999)
	readRound := func() {
		if _, err := c.WriteToUDPAddrPort(payload, remote); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < 8; {
			n, err := q.Read(bufs, sizes, offset)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if _, d, pl, ok := parseUDP(bufs[i][offset : offset+sizes[i]]); ok && d == remote && len(pl) == 1000 {
					got++
				}
			}
		}
	}
	dst := netip.AddrPortFrom(local, c.LocalAddr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port())
	var wbufs, orig [][]byte
	for i := range 8 {
		pkt := buildUDP(remote, dst, pattern(i, 1000))
		b := make([]byte, offset+len(pkt))
		copy(b[offset:], pkt)
		wbufs = append(wbufs, b)
		orig = append(orig, append([]byte(nil), b...))
	}
	rbuf := make([]byte, MaxSegmentSize)
	writeRound := func() {
		for i := range wbufs {
			copy(wbufs[i], orig[i]) // Write rewrote the head's headers
		}
		if _, err := q.Write(wbufs, offset); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		for range 8 {
			if n, _, err := c.ReadFromUDPAddrPort(rbuf); err != nil || n != 1000 {
				t.Fatalf("read %d bytes: %v", n, err)
			}
		}
	}
	readRound()
	writeRound()
	if allocs := testing.AllocsPerRun(30, readRound); allocs != 0 {
		t.Errorf("TUN read: %.1f allocations per round, want 0", allocs)
	}
	if allocs := testing.AllocsPerRun(30, writeRound); allocs != 0 {
		t.Errorf("TUN write: %.1f allocations per round, want 0", allocs)
	}
}

// TestStdBindStickySourceRecovers: replies go out from the address the
// peer sent to (IP_PKTINFO); when that address disappears, Send falls back
// to a kernel-chosen source instead of failing, and the peer receives.
func TestStdBindStickySourceRecovers(t *testing.T) {
	nsA, nsB := ifacetest.New(t), ifacetest.New(t)
	ifacetest.Veth(t,
		ifacetest.VethEnd{NS: nsA, Name: "sv0", Addrs: []netip.Prefix{mp("198.18.5.1/24")}},
		ifacetest.VethEnd{NS: nsB, Name: "sv1", Addrs: []netip.Prefix{mp("198.18.5.2/24")}})
	nsA.WaitReady(t, "sv0", 5*time.Second)
	nsB.WaitReady(t, "sv1", 5*time.Second)
	a, b := NewStdBind(), NewStdBind()
	var fnsA, fnsB []ReceiveFunc
	var portB uint16
	if err := nsA.Do(func() (err error) { fnsA, _, err = a.Open(0); return err }); err != nil {
		t.Fatal(err)
	}
	if err := nsB.Do(func() (err error) { fnsB, portB, err = b.Open(0); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	go func() { time.Sleep(testTimeout); a.Close(); b.Close() }()
	v4 := func(fns []ReceiveFunc) ReceiveFunc {
		for _, fn := range fns {
			if fn.PrettyName() == "v4" {
				return fn
			}
		}
		t.Fatal("no v4 ReceiveFunc")
		return nil
	}
	recvA, recvB := v4(fnsA), v4(fnsB)
	bufs := make([][]byte, IdealBatchSize)
	for i := range bufs {
		bufs[i] = make([]byte, MaxSegmentSize)
	}
	sizes := make([]int, len(bufs))
	eps := make([]Endpoint, len(bufs))
	recvOne := func(recv ReceiveFunc) (string, Endpoint) {
		t.Helper()
		n, err := recv(bufs, sizes, eps)
		if err != nil || n != 1 {
			t.Fatalf("receive: %d datagrams, %v", n, err)
		}
		return string(bufs[0][:sizes[0]]), eps[0]
	}
	toB, _ := a.ParseEndpoint(netip.AddrPortFrom(netip.MustParseAddr("198.18.5.2"), portB).String())
	if err := a.Send([][]byte{[]byte("hello")}, toB); err != nil {
		t.Fatal(err)
	}
	msg, fromA := recvOne(recvB)
	if msg != "hello" || fromA.SrcIP() != netip.MustParseAddr("198.18.5.2") {
		t.Fatalf("got %q with sticky source %v", msg, fromA.SrcIP())
	}
	// B's address moves; the sticky source 198.18.5.2 is gone.
	link, err := nsB.NL.LinkByName("sv1")
	if err != nil {
		t.Fatal(err)
	}
	old, _ := netlink.ParseAddr("198.18.5.2/24")
	if err := nsB.NL.AddrDel(link, old); err != nil {
		t.Fatal(err)
	}
	if err := nsB.AddrUp("sv1", mp("198.18.5.22/24")); err != nil {
		t.Fatal(err)
	}
	if err := b.Send([][]byte{[]byte("moved")}, fromA); err != nil {
		t.Fatalf("send after the address change: %v", err)
	}
	msg, fromB := recvOne(recvA)
	if msg != "moved" || fromB.DstIP() != netip.MustParseAddr("198.18.5.22") {
		t.Fatalf("got %q from %v", msg, fromB.DstToString())
	}
	if fromA.SrcIP().IsValid() {
		t.Errorf("stale sticky source %v kept", fromA.SrcIP())
	}
}
