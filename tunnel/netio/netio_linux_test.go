package netio

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gmtun/gmtun/tunnel/iface"
	"github.com/gmtun/gmtun/tunnel/iface/ifacetest"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

const testTimeout = 20 * time.Second

func mp(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func pattern(seq, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seq*7 + i)
	}
	return b
}

// TestStdBindGSOGRO sends a 64-datagram batch (equal sizes plus a short
// tail, the shape UDP GSO coalesces) between two namespaces over a veth
// pair, for IPv4 and IPv6 outer addresses, and checks that every datagram
// arrives intact and in order after GRO splitting.
func TestStdBindGSOGRO(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	nsA, nsB := ifacetest.New(t), ifacetest.New(t)
	ifacetest.Veth(t,
		ifacetest.VethEnd{NS: nsA, Name: "gv0", Addrs: []netip.Prefix{mp("198.18.0.1/24"), mp("fd00:18::1/64")}},
		ifacetest.VethEnd{NS: nsB, Name: "gv1", Addrs: []netip.Prefix{mp("198.18.0.2/24"), mp("fd00:18::2/64")}})
	nsA.WaitReady(t, "gv0", 5*time.Second)
	nsB.WaitReady(t, "gv1", 5*time.Second)
	bindA, bindB := NewStdBind(), NewStdBind()
	var fnsB []ReceiveFunc
	var portB uint16
	if err := nsA.Do(func() error { _, _, err := bindA.Open(0); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bindA.Close() })
	if err := nsB.Do(func() (err error) { fnsB, portB, err = bindB.Open(0); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bindB.Close() })
	t.Logf("offloads: A %v, B %v", bindA.Offload(), bindB.Offload())
	oa, ob := bindA.Offload(), bindB.Offload()
	offloaded := oa.GSO4 && oa.GSO6 && ob.GRO4 && ob.GRO6
	if !offloaded {
		t.Logf("kernel lacks UDP GSO/GRO; the batch still has to arrive intact")
	}
	go func() { // bound every blocking receive by the test timeout
		<-ctx.Done()
		bindA.Close()
		bindB.Close()
	}()

	for _, fam := range []struct{ name, dst, src string }{
		{"v4", "198.18.0.2", "198.18.0.1"},
		{"v6", "fd00:18::2", "fd00:18::1"},
	} {
		t.Run(fam.name, func(t *testing.T) {
			var recv ReceiveFunc
			for _, fn := range fnsB {
				if fn.PrettyName() == fam.name {
					recv = fn
				}
			}
			if recv == nil {
				t.Fatalf("no %s ReceiveFunc", fam.name)
			}
			ep, err := bindA.ParseEndpoint(netip.AddrPortFrom(netip.MustParseAddr(fam.dst), portB).String())
			if err != nil {
				t.Fatal(err)
			}
			const count = 64
			var sent [][]byte
			for i := 0; i < count; i++ {
				size := 1200
				if i == count-1 {
					size = 500
				}
				// Spare capacity lets StdNetBind append the following
				// datagrams for one UDP_SEGMENT message (GSO).
				b := make([]byte, 0, MaxSegmentSize)
				sent = append(sent, append(b, pattern(i, size)...))
			}
			if err := bindA.Send(sent, ep); err != nil {
				t.Fatalf("Send: %v", err)
			}
			// Under heavy load the very first IPv6 batch into a fresh
			// namespace has occasionally been lost before reaching the
			// peer's IPv6 layer (seen about once in ten -race runs with
			// other test binaries in parallel). If nothing at all has
			// arrived after two seconds, resend the batch, twice at most.
			var received atomic.Int32
			stopResend := make(chan struct{})
			defer close(stopResend)
			go func() {
				for try := 0; try < 2; try++ {
					select {
					case <-stopResend:
						return
					case <-time.After(2 * time.Second):
					}
					if received.Load() != 0 {
						return
					}
					t.Logf("%s: nothing received after 2s, resending the batch", fam.name)
					bindA.Send(sent, ep)
				}
			}()
			bufs := make([][]byte, bindB.BatchSize())
			for i := range bufs {
				bufs[i] = make([]byte, MaxSegmentSize)
			}
			sizes := make([]int, len(bufs))
			eps := make([]Endpoint, len(bufs))
			var got [][]byte
			maxPerCall := 0
			for len(got) < count {
				n, err := recv(bufs, sizes, eps)
				if err != nil {
					t.Fatalf("receive after %d datagrams: %v", len(got), err)
				}
				maxPerCall = max(maxPerCall, n)
				for i := 0; i < n; i++ {
					if sizes[i] == 0 {
						continue
					}
					if eps[i].DstIP() != netip.MustParseAddr(fam.src) {
						t.Fatalf("datagram from %v", eps[i].DstToString())
					}
					got = append(got, append([]byte(nil), bufs[i][:sizes[i]]...))
					received.Add(1)
				}
			}
			for i := range sent {
				if !bytes.Equal(got[i], sent[i]) {
					t.Fatalf("datagram %d: %d bytes, want %d, or content differs", i, len(got[i]), len(sent[i]))
				}
			}
			if maxPerCall < 2 {
				t.Errorf("every receive returned one datagram; batching not exercised")
			}
			if offloaded && maxPerCall <= 2 {
				// recvmmsg with GRO reads only IdealBatchSize/64 = 2
				// messages per call, so more than 2 datagrams from one
				// call means coalesced messages were split.
				t.Errorf("GSO/GRO on, but at most %d datagrams per receive: nothing was coalesced", maxPerCall)
			}
			t.Logf("%s: %d datagrams, up to %d per receive call", fam.name, len(got), maxPerCall)
		})
	}
}

type tunRead struct {
	queue int
	pkts  [][]byte
}

// TestTUNOffloadsMultiQueue opens a two-queue TUN with offloads inside a
// namespace, configures it with iface, and checks: a 10-segment UDP GSO
// send by the kernel comes out of one Read as 10 valid packets (with USO);
// a batch written to the TUN is GRO-coalesced and delivered to a socket
// intact; and the kernel spreads flows over both queues. IPv4 and IPv6.
func TestTUNOffloadsMultiQueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ns := ifacetest.New(t)
	var dev *TUNDevice
	if err := ns.Do(func() (err error) {
		dev, err = OpenTUN(TUNConfig{Name: "gmt%d", MTU: 1420, Queues: 2})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	off := dev.Offload()
	t.Logf("TUN %s: %v", dev.Name(), off)
	if !off.VNetHdr || off.Queues != 2 || len(dev.Queues()) != 2 {
		t.Fatalf("offload state %v, %d queues", off, len(dev.Queues()))
	}
	for _, q := range dev.Queues() {
		if q.BatchSize() != IdealBatchSize {
			t.Fatalf("queue batch size %d", q.BatchSize())
		}
		if mtu, err := q.MTU(); err != nil || mtu != 1420 {
			t.Fatalf("MTU = %d, %v", mtu, err)
		}
	}
	ap, err := iface.Configure(ns.NL, dev.Name(), iface.Config{
		Addresses: []netip.Prefix{mp("198.18.1.1/24"), mp("fd00:1::1/64")},
		Routes:    []netip.Prefix{mp("198.18.2.0/24"), mp("fd00:2::/64")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ap.Teardown() }) // on failure paths; tolerates a closed device
	ns.WaitReady(t, dev.Name(), 5*time.Second)

	reads := make(chan tunRead, 4096)
	const offset = 16
	for qi, q := range dev.Queues() {
		go func() {
			bufs := make([][]byte, q.BatchSize())
			for i := range bufs {
				bufs[i] = make([]byte, offset+MaxSegmentSize)
			}
			sizes := make([]int, len(bufs))
			for {
				n, err := q.Read(bufs, sizes, offset)
				if err != nil && n == 0 {
					return // closed
				}
				r := tunRead{queue: qi}
				for i := 0; i < n; i++ {
					r.pkts = append(r.pkts, append([]byte(nil), bufs[i][offset:offset+sizes[i]]...))
				}
				reads <- r
			}
		}()
	}
	go func() {
		<-ctx.Done()
		dev.Close()
	}()

	for _, fam := range []struct{ name, local, remote string }{
		{"v4", "198.18.1.1", "198.18.2.9"},
		{"v6", "fd00:1::1", "fd00:2::9"},
	} {
		local, remote := netip.MustParseAddr(fam.local), netip.MustParseAddr(fam.remote)
		t.Run("read-split-"+fam.name, func(t *testing.T) {
			testTUNReadSplit(ctx, t, ns, reads, local, remote, off.USO)
		})
		t.Run("write-coalesce-"+fam.name, func(t *testing.T) {
			testTUNWriteCoalesce(t, ns, dev.Queues()[0], local, remote)
		})
	}
	t.Run("queue-spread", func(t *testing.T) {
		testQueueSpread(ctx, t, ns, reads)
	})
	// Teardown while the device is open removes exactly our routes.
	if err := ap.Teardown(); err != nil {
		t.Fatalf("teardown: %v", err)
	}
	rs, err := ns.NL.RouteList(nil, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Protocol == iface.RouteProtocol {
			t.Errorf("route %v left after teardown", r.Dst)
		}
	}
}

func listenUDP(ns *ifacetest.NetNS, addr netip.AddrPort) (c *net.UDPConn, err error) {
	err = ns.Do(func() error {
		c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(addr))
		return err
	})
	return c, err
}

// collect reads TUN batches until match has accepted want packets.
func collect(ctx context.Context, t *testing.T, reads <-chan tunRead, want int, match func(tunRead, []byte) bool) {
	t.Helper()
	for got := 0; got < want; {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out with %d of %d packets", got, want)
		case r := <-reads:
			for _, p := range r.pkts {
				if match(r, p) {
					got++
				}
			}
		}
	}
}

func testTUNReadSplit(ctx context.Context, t *testing.T, ns *ifacetest.NetNS, reads <-chan tunRead, local, remote netip.Addr, uso bool) {
	const segs, segSize = 10, 1000
	c, err := listenUDP(ns, netip.AddrPortFrom(local, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT, segSize)
	}); err != nil || serr != nil {
		t.Fatalf("UDP_SEGMENT: %v %v", err, serr)
	}
	payload := pattern(3, segs*segSize)
	dst := netip.AddrPortFrom(remote, 9999)
	if _, err := c.WriteToUDPAddrPort(payload, dst); err != nil {
		t.Fatalf("GSO send: %v", err)
	}
	var got []byte
	perRead := map[int]int{}
	batch := 0
	collect(ctx, t, reads, segs, func(r tunRead, p []byte) bool {
		src, d, pl, ok := parseUDP(p)
		if !ok || d != dst || src.Addr() != local {
			return false // ND/MLD or other noise
		}
		if len(pl) != segSize {
			t.Fatalf("segment payload %d bytes, want %d", len(pl), segSize)
		}
		if len(perRead) == 0 || perRead[batch] == 0 {
			batch++
		}
		perRead[batch]++
		got = append(got, pl...)
		return true
	})
	if !bytes.Equal(got, payload) {
		t.Fatal("reassembled segments differ from the sent payload")
	}
	if uso {
		// With USO the kernel hands the TUN one 10 KB super-packet; one
		// Read must split it into all ten segments.
		maxBatch := 0
		for _, n := range perRead {
			maxBatch = max(maxBatch, n)
		}
		if maxBatch != segs {
			t.Errorf("segments per read: %v, want all %d in one read", perRead, segs)
		}
	}
}

func testTUNWriteCoalesce(t *testing.T, ns *ifacetest.NetNS, q TUN, local, remote netip.Addr) {
	const count, size = 8, 1000
	c, err := listenUDP(ns, netip.AddrPortFrom(local, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dst := c.LocalAddr().(*net.UDPAddr).AddrPort()
	dst = netip.AddrPortFrom(local, dst.Port())
	src := netip.AddrPortFrom(remote, 5555)
	const offset = 16
	bufs := make([][]byte, count)
	for i := range bufs {
		pkt := buildUDP(src, dst, pattern(i, size))
		b := make([]byte, offset+len(pkt), offset+MaxSegmentSize)
		copy(b[offset:], pkt)
		bufs[i] = b
	}
	if _, err := q.Write(bufs, offset); err != nil {
		t.Fatalf("TUN write: %v", err)
	}
	buf := make([]byte, MaxSegmentSize)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := 0; i < count; i++ {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		if from.Port() != src.Port() || !bytes.Equal(buf[:n], pattern(i, size)) {
			t.Fatalf("datagram %d from %v: %d bytes, content mismatch", i, from, n)
		}
	}
}

func testQueueSpread(ctx context.Context, t *testing.T, ns *ifacetest.NetNS, reads <-chan tunRead) {
	const flows = 32
	seen := map[int]int{}
	dst := netip.AddrPortFrom(netip.MustParseAddr("198.18.2.10"), 7777)
	for i := 0; i < flows; i++ {
		c, err := listenUDP(ns, netip.AddrPortFrom(netip.MustParseAddr("198.18.1.1"), 0))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WriteToUDPAddrPort([]byte(fmt.Sprint("flow", i)), dst); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	collect(ctx, t, reads, flows, func(r tunRead, p []byte) bool {
		_, d, _, ok := parseUDP(p)
		if ok && d == dst {
			seen[r.queue]++
			return true
		}
		return false
	})
	t.Logf("flows per queue: %v", seen)
	if len(seen) != 2 {
		t.Errorf("all %d flows were read from one queue: %v", flows, seen)
	}
}
