package iface

import (
	"net"
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/gmtun/gmtun/tunnel/iface/ifacetest"
)

// ourRules returns the rules with gmtun's protocol in family.
func ourRules(t *testing.T, h *netlink.Handle, family int) []netlink.Rule {
	t.Helper()
	rs, err := h.RuleList(family)
	if err != nil {
		t.Fatal(err)
	}
	var out []netlink.Rule
	for _, r := range rs {
		if r.Protocol == RouteProtocol {
			out = append(out, r)
		}
	}
	return out
}

func TestFullTunnelRules(t *testing.T) {
	ns := ifacetest.New(t)
	table := FullTunnelTable("gm0")
	if table < 51900 || table >= 52900 || FullTunnelTable("gm0") != table || FullTunnelTable("gm1") == table {
		t.Fatalf("FullTunnelTable: gm0 %d, gm1 %d", table, FullTunnelTable("gm1"))
	}
	p, err := AddFullTunnelRules(ns.NL, table, uint32(table), true, false)
	if err != nil {
		t.Fatal(err)
	}
	v4 := ourRules(t, ns.NL, unix.AF_INET)
	if len(v4) != 2 || len(ourRules(t, ns.NL, unix.AF_INET6)) != 0 {
		t.Fatalf("IPv4 only: %d IPv4 rules, want 2, and no IPv6 rule", len(v4))
	}
	for _, r := range v4 {
		switch {
		case r.Table == unix.RT_TABLE_MAIN && r.SuppressPrefixlen == 0 && r.Priority == fullTunnelPriority(table):
		case r.Table == table && r.Invert && r.Mark == uint32(table) && r.Priority == fullTunnelPriority(table)+1:
		default:
			t.Errorf("unexpected rule %+v", r)
		}
	}
	// A second start over the leftovers takes them over.
	if _, err := AddFullTunnelRules(ns.NL, table, uint32(table), true, true); err != nil {
		t.Fatalf("adding over existing rules: %v", err)
	}
	if n := len(ourRules(t, ns.NL, unix.AF_INET6)); n != 2 {
		t.Errorf("%d IPv6 rules, want 2", n)
	}
	if err := p.Remove(); err != nil {
		t.Fatal(err)
	}
	if n := len(ourRules(t, ns.NL, unix.AF_INET)); n != 0 {
		t.Errorf("%d IPv4 rules after Remove", n)
	}
	// The IPv6 ones (of the second call) are found by RemoveFullTunnelRules.
	if n, err := RemoveFullTunnelRules(ns.NL, table); err != nil || n != 2 {
		t.Errorf("RemoveFullTunnelRules = %d, %v; want 2", n, err)
	}
	if n, err := RemoveFullTunnelRules(ns.NL, table); err != nil || n != 0 {
		t.Errorf("RemoveFullTunnelRules again = %d, %v; want 0", n, err)
	}
	if _, err := AddFullTunnelRules(ns.NL, table, 0, true, true); err == nil {
		t.Error("a zero mark was accepted")
	}
}

func TestPathMTU(t *testing.T) {
	ns := ifacetest.New(t)
	link := newLink(t, ns, "gmtmtu")
	if err := ns.NL.LinkSetMTU(link, 1400); err != nil {
		t.Fatal(err)
	}
	if err := ns.NL.LinkSetUp(link); err != nil {
		t.Fatal(err)
	}
	addr, _ := netlink.ParseAddr("198.18.7.1/24")
	if err := ns.NL.AddrAdd(link, addr); err != nil {
		t.Fatal(err)
	}
	if _, err := PathMTU(ns.NL, netip.Addr{}); err == nil {
		t.Error("no default route, but PathMTU found one")
	}
	gw := net.ParseIP("198.18.7.2")
	if err := ns.NL.RouteAdd(&netlink.Route{LinkIndex: link.Attrs().Index, Gw: gw}); err != nil {
		t.Fatal(err)
	}
	// A route with its own mtu attribute wins over the device's.
	_, dst, _ := net.ParseCIDR("198.18.100.0/24")
	if err := ns.NL.RouteAdd(&netlink.Route{LinkIndex: link.Attrs().Index, Dst: dst, Gw: gw, MTU: 1300}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dst  netip.Addr
		want int
	}{
		{netip.MustParseAddr("198.18.7.9"), 1400},   // connected
		{netip.MustParseAddr("198.18.200.1"), 1400}, // default route
		{netip.MustParseAddr("198.18.100.5"), 1300}, // route mtu
		{netip.Addr{}, 1400},                        // the default routes' devices
	} {
		got, err := PathMTU(ns.NL, tc.dst)
		if err != nil || got != tc.want {
			t.Errorf("PathMTU(%v) = %d, %v; want %d", tc.dst, got, err, tc.want)
		}
	}
}

// TestFailClosedDefaultTable: with SetDefaultTable the default prefixes'
// unreachable routes go to the full tunnel's table, the others stay in the
// main table, and a second Set keeps both (neither is taken for stale).
func TestFailClosedDefaultTable(t *testing.T) {
	f := newFakeNL("gm0", "wan0")
	fc := newFailClosed(f, "gm0", 0)
	fc.SetDefaultTable(51999)
	want := []netip.Prefix{mp("0.0.0.0/0"), mp("::/0"), mp("198.19.7.0/24")}
	for range 2 {
		if err := fc.Set(want); err != nil {
			t.Fatal(err)
		}
		rs, _ := f.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{}, netlink.RT_FILTER_TABLE)
		tables := map[string]int{}
		for _, r := range rs {
			if r.Type == unix.RTN_UNREACHABLE {
				tables[dstOf(&r).String()] = r.Table
			}
		}
		if tables["0.0.0.0/0"] != 51999 || tables["::/0"] != 51999 || tables["198.19.7.0/24"] != unix.RT_TABLE_MAIN || len(tables) != 3 {
			t.Fatalf("unreachable routes by table: %v", tables)
		}
	}
	if err := fc.Remove(); err != nil {
		t.Fatal(err)
	}
	if got := fc.Prefixes(); len(got) != 0 {
		t.Errorf("after Remove: %v", got)
	}
}
