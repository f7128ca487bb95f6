package iface

import (
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/gmtun/gmtun/tunnel/iface/ifacetest"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

func mp(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// routesOf lists routes through link in table (unix.RT_TABLE_UNSPEC = all),
// keyed by destination, with their protocol.
func routesOf(t *testing.T, h *netlink.Handle, link netlink.Link, table int) map[netip.Prefix]netlink.RouteProtocol {
	t.Helper()
	rs, err := h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{LinkIndex: link.Attrs().Index, Table: table},
		netlink.RT_FILTER_OIF|netlink.RT_FILTER_TABLE)
	if err != nil {
		t.Fatal(err)
	}
	out := map[netip.Prefix]netlink.RouteProtocol{}
	for _, r := range rs {
		if r.Dst != nil && r.Type == unix.RTN_UNICAST {
			out[prefixOf(r.Dst)] = r.Protocol
		}
	}
	return out
}

func addrsOf(t *testing.T, h *netlink.Handle, link netlink.Link) []netip.Prefix {
	t.Helper()
	as, err := h.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Prefix
	for _, a := range as {
		if p := prefixOf(a.IPNet); !p.Addr().IsLinkLocalUnicast() {
			out = append(out, p)
		}
	}
	return out
}

func newLink(t *testing.T, ns *ifacetest.NetNS, name string) netlink.Link {
	t.Helper()
	// A veth pair whose peer stays down: the dummy driver is not always
	// built, veth is (it is what the netio integration test needs too).
	if err := ns.NL.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name, MTU: 1500}, PeerName: name + "p"}); err != nil {
		t.Fatalf("add veth: %v", err)
	}
	link, err := ns.NL.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return link
}

func relink(t *testing.T, ns *ifacetest.NetNS, name string) netlink.Link {
	t.Helper()
	link, err := ns.NL.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return link
}

func TestConfigureTeardown(t *testing.T) {
	ns := ifacetest.New(t)
	link := newLink(t, ns, "gmt0")
	// An address the operator configured before gmtun started.
	if err := ns.AddrUp("gmt0", mp("198.18.5.1/24")); err != nil {
		t.Fatal(err)
	}
	if err := ns.NL.LinkSetDown(link); err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		MTU:       1380,
		Addresses: []netip.Prefix{mp("198.18.5.1/24"), mp("198.18.6.1/24"), mp("fd00:5::1/64")},
		Routes:    []netip.Prefix{mp("198.18.6.0/24"), mp("198.18.100.0/24"), mp("198.19.0.0/16"), mp("fd00:77::/32")},
	}
	ap, err := Configure(ns.NL, "gmt0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	link = relink(t, ns, "gmt0")
	if link.Attrs().MTU != 1380 || link.Attrs().Flags&net.FlagUp == 0 {
		t.Fatalf("MTU %d flags %v", link.Attrs().MTU, link.Attrs().Flags)
	}
	have := addrsOf(t, ns.NL, link)
	for _, a := range cfg.Addresses {
		if !slices.Contains(have, a) {
			t.Errorf("address %v missing (have %v)", a, have)
		}
	}
	routes := routesOf(t, ns.NL, link, unix.RT_TABLE_MAIN)
	for _, r := range []string{"198.18.100.0/24", "198.19.0.0/16", "fd00:77::/32"} {
		if routes[mp(r)] != RouteProtocol {
			t.Errorf("route %s: protocol %v, want %d (routes %v)", r, routes[mp(r)], RouteProtocol, routes)
		}
	}
	if routes[mp("198.18.6.0/24")] != unix.RTPROT_KERNEL {
		t.Errorf("kernel subnet route replaced: %v", routes)
	}
	wantRoutes := []netip.Prefix{mp("198.18.100.0/24"), mp("198.19.0.0/16"), mp("fd00:77::/32")}
	if got := ap.Routes(); !slices.Equal(got, wantRoutes) {
		t.Errorf("Applied.Routes = %v, want %v", got, wantRoutes)
	}
	wantAddrs := []netip.Prefix{mp("198.18.6.1/24"), mp("fd00:5::1/64")}
	if got := ap.Addresses(); !slices.Equal(got, wantAddrs) {
		t.Errorf("Applied.Addresses = %v, want %v", got, wantAddrs)
	}

	// Applying again is idempotent and adopts our own routes.
	ap2, err := Configure(ns.NL, "gmt0", cfg)
	if err != nil {
		t.Fatalf("second Configure: %v", err)
	}
	if got := ap2.Routes(); !slices.Equal(got, wantRoutes) || len(ap2.Addresses()) != 0 {
		t.Errorf("second Configure recorded routes %v addresses %v", got, ap2.Addresses())
	}

	if err := ap.Teardown(); err != nil {
		t.Fatal(err)
	}
	if err := ap.Teardown(); err != nil {
		t.Fatalf("second Teardown: %v", err)
	}
	link = relink(t, ns, "gmt0")
	if link.Attrs().MTU != 1500 || link.Attrs().Flags&net.FlagUp != 0 {
		t.Errorf("after Teardown MTU %d flags %v, want 1500 and down", link.Attrs().MTU, link.Attrs().Flags)
	}
	have = addrsOf(t, ns.NL, link)
	if !slices.Equal(have, []netip.Prefix{mp("198.18.5.1/24")}) {
		t.Errorf("after Teardown addresses %v, want only the pre-existing one", have)
	}
	for p, proto := range routesOf(t, ns.NL, link, unix.RT_TABLE_UNSPEC) {
		if proto == RouteProtocol {
			t.Errorf("route %v left behind", p)
		}
	}
	// ap2's routes are already gone; its Teardown must not fail.
	if err := ap2.Teardown(); err != nil {
		t.Errorf("Teardown of already-removed state: %v", err)
	}
}

func TestTableAndStaleRoutes(t *testing.T) {
	ns := ifacetest.New(t)
	link := newLink(t, ns, "gmt1")
	cfg := Config{Routes: []netip.Prefix{mp("0.0.0.0/0"), mp("::/0"), mp("198.18.9.0/24")}, Table: 1234}
	ap, err := Configure(ns.NL, "gmt1", cfg)
	if err != nil {
		t.Fatal(err)
	}
	_ = ap // simulate a crash: no Teardown
	in := routesOf(t, ns.NL, link, 1234)
	if len(in) != 3 {
		t.Fatalf("table 1234 routes %v, want 3", in)
	}
	if main := routesOf(t, ns.NL, link, unix.RT_TABLE_MAIN); len(main) != 0 {
		t.Fatalf("main table touched: %v", main)
	}
	n, err := RemoveStaleRoutes(ns.NL, "gmt1", 0)
	if err != nil || n != 3 {
		t.Fatalf("RemoveStaleRoutes = %d, %v; want 3", n, err)
	}
	if left := routesOf(t, ns.NL, link, unix.RT_TABLE_UNSPEC); len(left) != 0 {
		t.Fatalf("routes left: %v", left)
	}
}

func TestConflictRollsBack(t *testing.T) {
	ns := ifacetest.New(t)
	other := newLink(t, ns, "other0")
	newLink(t, ns, "gmt2")
	if err := ns.NL.LinkSetUp(other); err != nil {
		t.Fatal(err)
	}
	taken := netlink.Route{LinkIndex: other.Attrs().Index, Dst: ipNet(mp("198.18.50.0/24")), Scope: netlink.SCOPE_LINK}
	if err := ns.NL.RouteAdd(&taken); err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		MTU:       1400,
		Addresses: []netip.Prefix{mp("198.18.7.1/24")},
		Routes:    []netip.Prefix{mp("198.18.40.0/24"), mp("198.18.50.0/24")},
	}
	if _, err := Configure(ns.NL, "gmt2", cfg); err == nil {
		t.Fatal("Configure succeeded despite a conflicting route")
	}
	link := relink(t, ns, "gmt2")
	if link.Attrs().MTU != 1500 || link.Attrs().Flags&net.FlagUp != 0 || len(addrsOf(t, ns.NL, link)) != 0 {
		t.Errorf("not rolled back: MTU %d flags %v addrs %v", link.Attrs().MTU, link.Attrs().Flags, addrsOf(t, ns.NL, link))
	}
	if r := routesOf(t, ns.NL, link, unix.RT_TABLE_UNSPEC); len(r) != 0 {
		t.Errorf("routes left after rollback: %v", r)
	}
}

func TestTeardownAfterLinkGone(t *testing.T) {
	ns := ifacetest.New(t)
	newLink(t, ns, "gmt3")
	ap, err := Configure(ns.NL, "gmt3", Config{Addresses: []netip.Prefix{mp("198.18.8.1/24")}, Routes: []netip.Prefix{mp("198.18.88.0/24")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.NL.LinkDel(relink(t, ns, "gmt3")); err != nil {
		t.Fatal(err)
	}
	if err := ap.Teardown(); err != nil {
		t.Fatalf("Teardown after the link vanished: %v", err)
	}
}

func TestConfigValidation(t *testing.T) {
	bad := []Config{
		{MTU: 100},
		{MTU: 70000},
		{Routes: []netip.Prefix{mp("10.0.0.1/8")}},
		{Routes: []netip.Prefix{{}}},
		{Addresses: []netip.Prefix{{}}},
		{Protocol: 300},
	}
	for _, c := range bad {
		if _, err := Configure(nil, "lo", c); err == nil {
			t.Errorf("Configure(%+v) accepted", c)
		}
	}
}
