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

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// RequireRoot skips the test unless it runs as root with /dev/net/tun
// available, as in CI.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("needs /dev/net/tun: %v", err)
	}
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

// Veth creates a veth pair with one end, aName, in a and the other, bName,
// in b, assigns the given addresses, and brings both ends up. The pair is
// created inside a, never in the test's own namespace, and disappears
// with the namespaces.
func Veth(t testing.TB, a *NetNS, aName string, aAddr netip.Prefix, b *NetNS, bName string, bAddr netip.Prefix) {
	t.Helper()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: aName}, PeerName: bName}
	if err := a.NL.LinkAdd(veth); err != nil {
		t.Fatalf("add veth in %s: %v", a.Name, err)
	}
	peer, err := a.NL.LinkByName(bName)
	if err != nil {
		t.Fatalf("veth peer: %v", err)
	}
	if err := a.NL.LinkSetNsFd(peer, int(b.NS)); err != nil {
		t.Fatalf("move %s to %s: %v", bName, b.Name, err)
	}
	for _, side := range []struct {
		ns   *NetNS
		name string
		addr netip.Prefix
	}{{a, aName, aAddr}, {b, bName, bAddr}} {
		if err := side.ns.AddrUp(side.name, side.addr); err != nil {
			t.Fatal(err)
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
