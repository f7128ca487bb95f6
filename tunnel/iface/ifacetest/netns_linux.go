package ifacetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/gmtun/gmtun/internal/testenv"
)

// RequireRoot skips the test unless it runs as root with /dev/net/tun
// available, as in CI.
func RequireRoot(t testing.TB) {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireTUN(t)
}

// NetNS is a named network namespace owned by one test.
type NetNS struct {
	// Name is the namespace name, gmtun-t-<8 hex digits>.
	Name string
	// NS is an open handle to the namespace.
	NS netns.NsHandle
	// NL is an rtnetlink handle bound to the namespace; it works from any
	// goroutine.
	NL *netlink.Handle
}

// New creates a namespace with its loopback up and registers its deletion
// with t.Cleanup.
func New(t testing.TB) *NetNS {
	t.Helper()
	RequireRoot(t)
	n := &NetNS{Name: fmt.Sprintf("gmtun-t-%08x", rand.Uint32())}
	var err error
	onNewThread(func() {
		// netns.NewNamed switches the calling thread into the new
		// namespace. The thread stays locked and is discarded when
		// this goroutine exits, so nothing else runs in it.
		n.NS, err = netns.NewNamed(n.Name)
	})
	if err != nil {
		_ = os.Remove("/var/run/netns/" + n.Name)
		t.Fatalf("create netns %s: %v", n.Name, err)
	}
	t.Cleanup(func() {
		if n.NL != nil {
			n.NL.Close()
		}
		n.NS.Close()
		if err := netns.DeleteNamed(n.Name); err != nil {
			t.Errorf("delete netns %s: %v", n.Name, err)
		}
	})
	if n.NL, err = netlink.NewHandleAt(n.NS); err != nil {
		t.Fatalf("netlink handle in %s: %v", n.Name, err)
	}
	lo, err := n.NL.LinkByName("lo")
	if err == nil {
		err = n.NL.LinkSetUp(lo)
	}
	if err != nil {
		t.Fatalf("loopback up in %s: %v", n.Name, err)
	}
	return n
}

// onNewThread runs f on a fresh goroutine whose OS thread is locked and
// never unlocked, so the runtime destroys the thread afterwards instead of
// reusing it with a foreign namespace.
func onNewThread(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		f()
	}()
	<-done
}

// Do runs f with the calling OS thread inside the namespace. Sockets and
// TUN devices created by f belong to the namespace and may be used from any
// goroutine afterwards.
func (n *NetNS) Do(f func() error) error {
	var err error
	onNewThread(func() {
		if err = netns.Set(n.NS); err != nil {
			err = fmt.Errorf("enter netns %s: %w", n.Name, err)
			return
		}
		err = f()
	})
	return err
}

// VethEnd describes one end of a veth pair for Veth.
type VethEnd struct {
	NS    *NetNS
	Name  string
	Addrs []netip.Prefix
}

// Veth creates a veth pair between a.NS and b.NS, assigns each end its
// addresses, brings both ends up, and installs permanent neighbour entries
// for the other end's addresses on each side, so the first packets are
// never queued behind (or dropped by) ARP or neighbour discovery. The pair
// is created inside a.NS, never in the test's own namespace, and
// disappears with the namespaces.
func Veth(t testing.TB, a, b VethEnd) {
	t.Helper()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a.Name}, PeerName: b.Name}
	if err := a.NS.NL.LinkAdd(veth); err != nil {
		t.Fatalf("add veth in %s: %v", a.NS.Name, err)
	}
	peer, err := a.NS.NL.LinkByName(b.Name)
	if err != nil {
		t.Fatalf("veth peer: %v", err)
	}
	if err := a.NS.NL.LinkSetNsFd(peer, int(b.NS.NS)); err != nil {
		t.Fatalf("move %s to %s: %v", b.Name, b.NS.Name, err)
	}
	for _, end := range []VethEnd{a, b} {
		for _, addr := range end.Addrs {
			if err := end.NS.AddrUp(end.Name, addr); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, pair := range [][2]VethEnd{{a, b}, {b, a}} {
		local, remote := pair[0], pair[1]
		ll, err1 := local.NS.NL.LinkByName(local.Name)
		rl, err2 := remote.NS.NL.LinkByName(remote.Name)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		for _, addr := range remote.Addrs {
			family := netlink.FAMILY_V4
			if addr.Addr().Is6() {
				family = netlink.FAMILY_V6
			}
			n := &netlink.Neigh{
				LinkIndex:    ll.Attrs().Index,
				Family:       family,
				State:        netlink.NUD_PERMANENT,
				IP:           addr.Addr().AsSlice(),
				HardwareAddr: rl.Attrs().HardwareAddr,
			}
			if err := local.NS.NL.NeighSet(n); err != nil {
				t.Fatalf("neighbour %v on %s: %v", addr.Addr(), local.Name, err)
			}
		}
	}
}

// AddrUp adds addr to the link called name in n (IPv6 without DAD) and
// brings the link up.
func (n *NetNS) AddrUp(name string, addr netip.Prefix) error {
	link, err := n.NL.LinkByName(name)
	if err != nil {
		return fmt.Errorf("link %s in %s: %w", name, n.Name, err)
	}
	bits := 32
	if addr.Addr().Is6() {
		bits = 128
	}
	a := &netlink.Addr{IPNet: &net.IPNet{IP: addr.Addr().AsSlice(), Mask: net.CIDRMask(addr.Bits(), bits)}}
	if addr.Addr().Is6() {
		a.Flags = unix.IFA_F_NODAD
	}
	return errors.Join(n.NL.AddrReplace(link, a), n.NL.LinkSetUp(link))
}

// WaitReady waits until the link called name is operationally up and no
// IPv6 address on it is tentative. After a link comes up the kernel
// activates its queueing discipline from the linkwatch worker (which may
// run up to a second later; until then packets are dropped), and even with
// IFA_F_NODAD it finishes an address's setup from a work queue; tests wait
// here before sending the first packet. It fails the test after timeout.
func (n *NetNS) WaitReady(t testing.TB, name string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		link, err := n.NL.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		addrs, err := n.NL.AddrList(link, netlink.FAMILY_V6)
		if err != nil {
			t.Fatal(err)
		}
		oper := link.Attrs().OperState
		ready := oper == netlink.OperUp || oper == netlink.OperUnknown
		for _, a := range addrs {
			if a.Flags&unix.IFA_F_TENTATIVE != 0 {
				ready = false
			}
		}
		if ready {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %v: operstate %v, addresses %v", name, timeout, oper, addrs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
