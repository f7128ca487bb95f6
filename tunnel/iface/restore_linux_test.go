package iface

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/gmtun/gmtun/tunnel/iface/ifacetest"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// flap sets the link down (the kernel deletes every route through it and
// its IPv6 addresses) and up again.
func flap(t *testing.T, ns *ifacetest.NetNS, name string) {
	t.Helper()
	link := relink(t, ns, name)
	if err := ns.NL.LinkSetDown(link); err != nil {
		t.Fatal(err)
	}
	if err := ns.NL.LinkSetUp(link); err != nil {
		t.Fatal(err)
	}
}

// missing returns the routes and addresses of cfg that the link lacks.
func missing(t *testing.T, ns *ifacetest.NetNS, name string, cfg Config) []netip.Prefix {
	t.Helper()
	link := relink(t, ns, name)
	routes := routesOf(t, ns.NL, link, unix.RT_TABLE_MAIN)
	addrs := addrsOf(t, ns.NL, link)
	var out []netip.Prefix
	for _, r := range cfg.Routes {
		if routes[r] != RouteProtocol {
			out = append(out, r)
		}
	}
	for _, a := range cfg.Addresses {
		if !slices.Contains(addrs, a) {
			out = append(out, a)
		}
	}
	return out
}

var flapConfig = Config{
	Addresses: []netip.Prefix{mp("198.18.7.1/24"), mp("fd00:7::1/64")},
	Routes:    []netip.Prefix{mp("198.19.7.0/24"), mp("fd00:77::/48")},
}

// TestRestoreAfterFlap: a link flap removes the routes (and the IPv6
// address); Restore puts them back, and does nothing while the link is down.
func TestRestoreAfterFlap(t *testing.T) {
	ns := ifacetest.New(t)
	newLink(t, ns, "gmt0")
	ap, err := Configure(ns.NL, "gmt0", flapConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer ap.Teardown()
	if m := missing(t, ns, "gmt0", flapConfig); len(m) != 0 {
		t.Fatalf("after Configure missing %v", m)
	}
	if err := ns.NL.LinkSetDown(relink(t, ns, "gmt0")); err != nil {
		t.Fatal(err)
	}
	if n, err := ap.Restore(); n != 0 || err != nil {
		t.Errorf("Restore while down = %d, %v; want 0, nil", n, err)
	}
	if err := ns.NL.LinkSetUp(relink(t, ns, "gmt0")); err != nil {
		t.Fatal(err)
	}
	m := missing(t, ns, "gmt0", flapConfig)
	if len(m) == 0 {
		t.Fatal("the flap removed nothing: the test proves nothing on this kernel")
	}
	n, err := ap.Restore()
	if err != nil || n != len(m) {
		t.Errorf("Restore = %d, %v; want %d (missing %v)", n, err, len(m), m)
	}
	if m := missing(t, ns, "gmt0", flapConfig); len(m) != 0 {
		t.Errorf("after Restore missing %v", m)
	}
	if n, err := ap.Restore(); n != 0 || err != nil {
		t.Errorf("second Restore = %d, %v; want 0, nil", n, err)
	}
}

// TestWatchRestoresWithinASecond: with Watch calling Restore, a flap and an
// operator's `ip route del` are both repaired within 1 s.
func TestWatchRestoresWithinASecond(t *testing.T) {
	ns := ifacetest.New(t)
	newLink(t, ns, "gmt0")
	ap, err := Configure(ns.NL, "gmt0", flapConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer ap.Teardown()
	done := make(chan struct{})
	defer close(done)
	restored := make(chan int, 16)
	if err := ns.Do(func() error {
		return Watch("gmt0", done, 50*time.Millisecond, time.Hour, func() {
			n, err := ap.Restore()
			if err != nil {
				t.Errorf("Restore: %v", err)
			}
			restored <- n
		})
	}); err != nil {
		t.Fatal(err)
	}
	waitRestored := func(what string) {
		t.Helper()
		deadline := time.After(time.Second)
		for {
			if len(missing(t, ns, "gmt0", flapConfig)) == 0 {
				return
			}
			select {
			case <-restored:
			case <-time.After(20 * time.Millisecond):
			case <-deadline:
				t.Fatalf("%s: still missing %v after 1 s", what, missing(t, ns, "gmt0", flapConfig))
			}
		}
	}
	start := time.Now()
	flap(t, ns, "gmt0")
	waitRestored("link flap")
	t.Logf("flap repaired in %v", time.Since(start).Round(time.Millisecond))

	r := netlink.Route{LinkIndex: relink(t, ns, "gmt0").Attrs().Index, Dst: ipNet(mp("198.19.7.0/24")),
		Scope: netlink.SCOPE_LINK, Protocol: RouteProtocol}
	if err := ns.NL.RouteDel(&r); err != nil {
		t.Fatal(err)
	}
	waitRestored("route deleted")
}

// routeGet resolves dst in the namespace: the error is EHOSTUNREACH for an
// unreachable route, ENETUNREACH for no route.
func routeGet(ns *ifacetest.NetNS, dst string) ([]netlink.Route, error) {
	return ns.NL.RouteGet(net.ParseIP(dst))
}

// TestFailClosedRoutes: with a default route present, a prefix whose route
// into the interface is gone resolves to unreachable, not to the default
// route; the interface's own route wins while present; Set replaces the
// set (and clears what an earlier run left); Remove clears it.
func TestFailClosedRoutes(t *testing.T) {
	ns := ifacetest.New(t)
	newLink(t, ns, "gmt0")
	newLink(t, ns, "wan0")
	if err := ns.AddrUp("wan0", mp("198.18.8.1/24")); err != nil {
		t.Fatal(err)
	}
	wan := relink(t, ns, "wan0")
	for _, gw := range []string{"198.18.8.254", "fd00:8::fe"} {
		if gw == "fd00:8::fe" {
			if err := ns.NL.AddrAdd(wan, &netlink.Addr{IPNet: ipNet(mp("fd00:8::1/64")), Flags: unix.IFA_F_NODAD}); err != nil {
				t.Fatal(err)
			}
		}
		if err := ns.NL.RouteAdd(&netlink.Route{LinkIndex: wan.Attrs().Index, Gw: net.ParseIP(gw)}); err != nil {
			t.Fatalf("default route via %s: %v", gw, err)
		}
	}
	// Before: nothing stops 198.19.9.5 from taking the default route.
	if rs, err := routeGet(ns, "198.19.9.5"); err != nil || len(rs) == 0 || rs[0].LinkIndex != wan.Attrs().Index {
		t.Fatalf("without fail-closed routes 198.19.9.5 should leave via wan0: %v %v", rs, err)
	}

	fc := NewFailClosed(ns.NL, "gmt0", 0)
	prefixes := []netip.Prefix{mp("198.19.9.0/24"), mp("fd00:99::/48")}
	if err := fc.Set(prefixes); err != nil {
		t.Fatal(err)
	}
	if got := fc.Prefixes(); !slices.Equal(got, prefixes) {
		t.Errorf("Prefixes = %v, want %v", got, prefixes)
	}
	for _, dst := range []string{"198.19.9.5", "fd00:99::5"} {
		if rs, err := routeGet(ns, dst); !errors.Is(err, unix.EHOSTUNREACH) {
			t.Errorf("%s with the fail-closed route: %v %v, want EHOSTUNREACH", dst, rs, err)
		}
	}
	// The interface's own routes win while they exist.
	ap, err := Configure(ns.NL, "gmt0", Config{Routes: prefixes})
	if err != nil {
		t.Fatal(err)
	}
	gm := relink(t, ns, "gmt0")
	for _, dst := range []string{"198.19.9.5", "fd00:99::5"} {
		if rs, err := routeGet(ns, dst); err != nil || len(rs) == 0 || rs[0].LinkIndex != gm.Attrs().Index {
			t.Errorf("%s with both routes: %v %v, want via gmt0", dst, rs, err)
		}
	}
	// Link down: the kernel drops the interface's routes, the fail-closed ones stay.
	if err := ns.NL.LinkSetDown(gm); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []string{"198.19.9.5", "fd00:99::5"} {
		if rs, err := routeGet(ns, dst); !errors.Is(err, unix.EHOSTUNREACH) {
			t.Errorf("%s with the link down: %v %v, want EHOSTUNREACH (a leak through the default route otherwise)", dst, rs, err)
		}
	}
	ap.Teardown()

	// A new run (after a crash) with another set: the old routes go.
	fc2 := NewFailClosed(ns.NL, "gmt0", 0)
	if err := fc2.Set(prefixes[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := routeGet(ns, "fd00:99::5"); errors.Is(err, unix.EHOSTUNREACH) {
		t.Error("a stale fail-closed route of the earlier run is still there")
	}
	// Another interface's routes are not touched by this one's Set/Remove.
	other := NewFailClosed(ns.NL, "gmt1", 0)
	if err := other.Set([]netip.Prefix{mp("198.19.10.0/24")}); err != nil {
		t.Fatal(err)
	}
	if err := fc2.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := routeGet(ns, "198.19.9.5"); errors.Is(err, unix.EHOSTUNREACH) {
		t.Error("Remove left a fail-closed route")
	}
	if _, err := routeGet(ns, "198.19.10.5"); !errors.Is(err, unix.EHOSTUNREACH) {
		t.Errorf("Remove of gmt0 deleted gmt1's fail-closed route: %v", err)
	}
	if FailClosedMetric("gmt0") == FailClosedMetric("gmt1") {
		t.Error("two interfaces share a fail-closed metric")
	}
}
