package iface

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// fakeNL is an in-memory stand-in for rtnetlink with the kernel behaviour
// the reconcile logic depends on: setting a link down deletes every route
// through it and its IPv6 addresses; no route can be added through a link
// that is down; a route is identified by family, destination, table and
// metric (so an unreachable route and a route into a link with the same
// prefix coexist); zero fields of a delete request are wildcards; listing
// without a table filter shows the main table only. It needs no root.
type fakeNL struct {
	mu     sync.Mutex
	links  []netlink.LinkAttrs // index i+1
	addrs  map[int][]netlink.Addr
	routes []netlink.Route
}

func newFakeNL(names ...string) *fakeNL {
	f := &fakeNL{addrs: map[int][]netlink.Addr{}}
	for i, n := range names {
		f.links = append(f.links, netlink.LinkAttrs{Index: i + 1, Name: n, MTU: 1500})
	}
	return f
}

func (f *fakeNL) attrs(index int) (*netlink.LinkAttrs, error) {
	if index < 1 || index > len(f.links) {
		return nil, fmt.Errorf("fake: link %d: %w", index, unix.ENODEV)
	}
	return &f.links[index-1], nil
}

func (f *fakeNL) LinkByName(name string) (netlink.Link, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range f.links {
		if l.Name == name {
			return &netlink.Dummy{LinkAttrs: l}, nil
		}
	}
	return nil, fmt.Errorf("fake: link %q: %w", name, unix.ENODEV)
}

func (f *fakeNL) LinkByIndex(index int) (netlink.Link, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, err := f.attrs(index)
	if err != nil {
		return nil, err
	}
	return &netlink.Dummy{LinkAttrs: *a}, nil
}

func (f *fakeNL) LinkSetMTU(link netlink.Link, mtu int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, err := f.attrs(link.Attrs().Index)
	if err == nil {
		a.MTU = mtu
	}
	return err
}

func (f *fakeNL) LinkSetUp(link netlink.Link) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, err := f.attrs(link.Attrs().Index)
	if err == nil {
		a.Flags |= net.FlagUp
	}
	return err
}

// LinkSetDown does what the kernel does: the routes through the link and
// its IPv6 addresses go.
func (f *fakeNL) LinkSetDown(link netlink.Link) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, err := f.attrs(link.Attrs().Index)
	if err != nil {
		return err
	}
	a.Flags &^= net.FlagUp
	f.routes = slices.DeleteFunc(f.routes, func(r netlink.Route) bool { return r.LinkIndex == a.Index })
	f.addrs[a.Index] = slices.DeleteFunc(f.addrs[a.Index], func(ad netlink.Addr) bool { return ad.IP.To4() == nil })
	return nil
}

func (f *fakeNL) AddrList(link netlink.Link, family int) ([]netlink.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []netlink.Addr
	for _, ad := range f.addrs[link.Attrs().Index] {
		if family == netlink.FAMILY_ALL || family == familyOf(prefixOf(ad.IPNet)) {
			out = append(out, ad)
		}
	}
	return out, nil
}

func (f *fakeNL) AddrReplace(link netlink.Link, addr *netlink.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := link.Attrs().Index
	if _, err := f.attrs(i); err != nil {
		return err
	}
	f.addrs[i] = slices.DeleteFunc(f.addrs[i], func(ad netlink.Addr) bool { return ipNetEqual(ad.IPNet, addr.IPNet) })
	f.addrs[i] = append(f.addrs[i], *addr)
	return nil
}

func (f *fakeNL) AddrDel(link netlink.Link, addr *netlink.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := link.Attrs().Index
	n := len(f.addrs[i])
	f.addrs[i] = slices.DeleteFunc(f.addrs[i], func(ad netlink.Addr) bool { return ipNetEqual(ad.IPNet, addr.IPNet) })
	if len(f.addrs[i]) == n {
		return unix.EADDRNOTAVAIL
	}
	return nil
}

func familyOf(p netip.Prefix) int {
	if p.Addr().Is6() {
		return netlink.FAMILY_V6
	}
	return netlink.FAMILY_V4
}

func dstOf(r *netlink.Route) netip.Prefix {
	if r.Dst == nil {
		return netip.PrefixFrom(netip.IPv4Unspecified(), 0)
	}
	return prefixOf(r.Dst)
}

func tableOf(r *netlink.Route) int {
	if r.Table == 0 {
		return unix.RT_TABLE_MAIN
	}
	return r.Table
}

func isUnicast(t int) bool { return t == 0 || t == unix.RTN_UNICAST }

// normalize fills in what the kernel fills in: the table and IPv6's
// default metric.
func normalize(r netlink.Route) netlink.Route {
	r.Table = tableOf(&r)
	if r.Priority == 0 && dstOf(&r).Addr().Is6() {
		r.Priority = 1024
	}
	return r
}

func sameKey(a, b *netlink.Route) bool {
	return dstOf(a) == dstOf(b) && tableOf(a) == tableOf(b) && a.Priority == b.Priority
}

func (f *fakeNL) RouteAdd(route *netlink.Route) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := normalize(*route)
	if r.LinkIndex != 0 {
		a, err := f.attrs(r.LinkIndex)
		if err != nil {
			return err
		}
		if a.Flags&net.FlagUp == 0 {
			return unix.ENETDOWN
		}
	}
	for i := range f.routes {
		if sameKey(&f.routes[i], &r) {
			return unix.EEXIST
		}
	}
	f.routes = append(f.routes, r)
	return nil
}

func (f *fakeNL) RouteReplace(route *netlink.Route) error {
	f.mu.Lock()
	r := normalize(*route)
	for i := range f.routes {
		if sameKey(&f.routes[i], &r) {
			f.routes[i] = r
			f.mu.Unlock()
			return nil
		}
	}
	f.mu.Unlock()
	return f.RouteAdd(route)
}

// RouteDel deletes the first route that matches: destination and table
// always, metric, link, protocol and type when given.
func (f *fakeNL) RouteDel(route *netlink.Route) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := *route
	for i := range f.routes {
		r := &f.routes[i]
		if dstOf(r) != dstOf(&q) || tableOf(r) != tableOf(&q) ||
			(q.Priority != 0 && r.Priority != q.Priority) ||
			(q.LinkIndex != 0 && r.LinkIndex != q.LinkIndex) ||
			(q.Protocol != 0 && r.Protocol != q.Protocol) ||
			(!isUnicast(q.Type) && r.Type != q.Type) {
			continue
		}
		f.routes = slices.Delete(f.routes, i, i+1)
		return nil
	}
	return unix.ESRCH
}

func (f *fakeNL) RouteListFiltered(family int, filter *netlink.Route, mask uint64) ([]netlink.Route, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []netlink.Route
	for _, r := range f.routes {
		switch {
		case family != netlink.FAMILY_ALL && family != familyOf(dstOf(&r)):
		case mask&netlink.RT_FILTER_TABLE == 0 && r.Table != unix.RT_TABLE_MAIN:
		case mask&netlink.RT_FILTER_TABLE != 0 && filter.Table != unix.RT_TABLE_UNSPEC && r.Table != filter.Table:
		case mask&netlink.RT_FILTER_PROTOCOL != 0 && r.Protocol != filter.Protocol:
		case mask&netlink.RT_FILTER_PRIORITY != 0 && r.Priority != filter.Priority:
		case mask&netlink.RT_FILTER_OIF != 0 && r.LinkIndex != filter.LinkIndex:
		case mask&netlink.RT_FILTER_DST != 0 && dstOf(&r) != dstOf(filter):
		default:
			out = append(out, r)
		}
	}
	return out, nil
}

// via resolves dst in the main table as the kernel does (longest prefix,
// then lowest metric) and names the result: a link name, "unreachable",
// or "none".
func (f *fakeNL) via(dst string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := netip.MustParseAddr(dst)
	var best *netlink.Route
	for i := range f.routes {
		r := &f.routes[i]
		p := dstOf(r)
		if r.Table != unix.RT_TABLE_MAIN || p.Addr().Is6() != d.Is6() || !p.Contains(d) {
			continue
		}
		if best == nil || p.Bits() > dstOf(best).Bits() || (p.Bits() == dstOf(best).Bits() && r.Priority < best.Priority) {
			best = r
		}
	}
	switch {
	case best == nil:
		return "none"
	case best.Type == unix.RTN_UNREACHABLE:
		return "unreachable"
	}
	return f.links[best.LinkIndex-1].Name
}

func (f *fakeNL) link(t *testing.T, name string) netlink.Link {
	t.Helper()
	l, err := f.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// withDefaultRoutes gives the fake a link wan0 that is up and carries the
// IPv4 and IPv6 default routes: without fail-closed routes, traffic that
// misses gm0 would leave through it in clear.
func withDefaultRoutes(t *testing.T, f *fakeNL) {
	t.Helper()
	wan := f.link(t, "wan0")
	if err := f.LinkSetUp(wan); err != nil {
		t.Fatal(err)
	}
	for _, def := range []string{"0.0.0.0/0", "::/0"} {
		if err := f.RouteAdd(&netlink.Route{LinkIndex: wan.Attrs().Index, Dst: ipNet(mp(def))}); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	fakeCfg = Config{
		Addresses: []netip.Prefix{mp("198.18.7.1/24"), mp("fd00:7::1/64")},
		Routes:    []netip.Prefix{mp("198.19.7.0/24"), mp("fd00:77::/48")},
	}
	fakeRemote = []string{"198.19.7.9", "fd00:77::9"}
)

func wantVia(t *testing.T, f *fakeNL, when, want string) {
	t.Helper()
	for _, dst := range fakeRemote {
		if got := f.via(dst); got != want {
			t.Errorf("%s: %s resolves via %s, want %s", when, dst, got, want)
		}
	}
}

// TestReconcileFake walks the daemon's reconcile sequence on the in-memory
// routing table (no root): fail-closed routes before the interface's,
// a link flap (nothing leaves via wan0 while down, Restore is a no-op
// while down and puts back routes and the IPv6 address once up), an
// operator deleting a route or an unreachable route while up, a clean stop
// (the routes into the link go first, the fail-closed ones last), and the
// same sequence without fail-closed routes showing the leak they prevent.
func TestReconcileFake(t *testing.T) {
	f := newFakeNL("gm0", "wan0")
	withDefaultRoutes(t, f)
	wantVia(t, f, "before start", "wan0") // the leak that is possible

	fc := newFailClosed(f, "gm0", 0)
	if err := fc.Set(fakeCfg.Routes); err != nil {
		t.Fatal(err)
	}
	wantVia(t, f, "starting (fail-closed routes only)", "unreachable")
	ap, err := configure(f, "gm0", fakeCfg)
	if err != nil {
		t.Fatal(err)
	}
	wantVia(t, f, "running", "gm0")

	gm := f.link(t, "gm0")
	if err := f.LinkSetDown(gm); err != nil {
		t.Fatal(err)
	}
	wantVia(t, f, "link down", "unreachable")
	if n, err := ap.Restore(); n != 0 || err != nil {
		t.Errorf("Restore while down = %d, %v; want 0, nil", n, err)
	}
	if err := f.LinkSetUp(gm); err != nil {
		t.Fatal(err)
	}
	wantVia(t, f, "link up, not yet restored", "unreachable")
	// Two routes and the IPv6 address came back.
	if n, err := ap.Restore(); n != 3 || err != nil {
		t.Errorf("Restore after the flap = %d, %v; want 3, nil", n, err)
	}
	wantVia(t, f, "restored", "gm0")
	if addrs, _ := f.AddrList(gm, netlink.FAMILY_ALL); len(addrs) != 2 {
		t.Errorf("after Restore the link has addresses %v, want both of %v", addrs, fakeCfg.Addresses)
	}
	if n, err := ap.Restore(); n != 0 || err != nil {
		t.Errorf("Restore with nothing missing = %d, %v; want 0, nil", n, err)
	}

	// An operator deletes a route while the link is up.
	if err := f.RouteDel(&netlink.Route{LinkIndex: gm.Attrs().Index, Dst: ipNet(mp("198.19.7.0/24"))}); err != nil {
		t.Fatal(err)
	}
	if got := f.via("198.19.7.9"); got != "unreachable" {
		t.Errorf("route deleted: via %s, want unreachable", got)
	}
	if n, err := ap.Restore(); n != 1 || err != nil {
		t.Errorf("Restore after a deleted route = %d, %v; want 1, nil", n, err)
	}
	wantVia(t, f, "route restored", "gm0")

	// An operator deletes a fail-closed route; the next reconcile (Set
	// with the same prefixes) puts it back.
	if err := f.RouteDel(&netlink.Route{Dst: ipNet(mp("fd00:77::/48")), Type: unix.RTN_UNREACHABLE}); err != nil {
		t.Fatal(err)
	}
	if err := fc.Set(fakeCfg.Routes); err != nil {
		t.Fatal(err)
	}
	if err := f.LinkSetDown(gm); err != nil {
		t.Fatal(err)
	}
	wantVia(t, f, "fail-closed route re-set, link down", "unreachable")
	if err := f.LinkSetUp(gm); err != nil {
		t.Fatal(err)
	}
	if _, err := ap.Restore(); err != nil {
		t.Fatal(err)
	}

	// Clean stop: the interface's routes go, the prefixes stay refused
	// until the fail-closed routes are removed last.
	if err := ap.Teardown(); err != nil {
		t.Fatal(err)
	}
	wantVia(t, f, "stopping", "unreachable")
	if n, err := ap.Restore(); n != 0 || err != nil {
		t.Errorf("Restore after Teardown = %d, %v; want 0, nil (a late watcher call must not re-add)", n, err)
	}
	if err := fc.Remove(); err != nil {
		t.Fatal(err)
	}
	wantVia(t, f, "stopped cleanly", "wan0")

	// Control: without fail-closed routes the same flap leaks.
	ap, err = configure(f, "gm0", fakeCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.LinkSetDown(gm); err != nil {
		t.Fatal(err)
	}
	wantVia(t, f, "fail_closed = false, link down", "wan0")
	if err := f.LinkSetUp(gm); err != nil {
		t.Fatal(err)
	}
	if n, err := ap.Restore(); n != 3 || err != nil {
		t.Errorf("fail_closed = false: Restore = %d, %v; want 3, nil", n, err)
	}
	wantVia(t, f, "fail_closed = false, restored", "gm0")
}

// TestFailClosedAfterCrashFake: a new run takes over the fail-closed
// routes an earlier run of the same interface left (kill -9), drops those
// of prefixes no longer configured or in another table, and leaves another
// interface's routes alone.
func TestFailClosedAfterCrashFake(t *testing.T) {
	f := newFakeNL("gm0", "wan0")
	withDefaultRoutes(t, f)
	old := newFailClosed(f, "gm0", 0)
	if err := old.Set([]netip.Prefix{mp("198.19.7.0/24"), mp("198.19.8.0/24")}); err != nil {
		t.Fatal(err)
	}
	if err := newFailClosed(f, "gm0", 7).Set([]netip.Prefix{mp("fd00:77::/48")}); err != nil {
		t.Fatal(err)
	}
	other := newFailClosed(f, "gm1", 0)
	if err := other.Set([]netip.Prefix{mp("198.19.9.0/24")}); err != nil {
		t.Fatal(err)
	}
	// The crashed run is gone; a new one starts with a changed set.
	fc := newFailClosed(f, "gm0", 0)
	if err := fc.Set(fakeCfg.Routes); err != nil {
		t.Fatal(err)
	}
	if got := fc.Prefixes(); !slices.Equal(got, fakeCfg.Routes) {
		t.Errorf("Prefixes = %v, want %v", got, fakeCfg.Routes)
	}
	left, _ := f.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{}, netlink.RT_FILTER_TABLE)
	var got []string
	for _, r := range left {
		if r.Type == unix.RTN_UNREACHABLE {
			got = append(got, fmt.Sprintf("%v table %d metric %#x", dstOf(&r), r.Table, r.Priority))
		}
	}
	slices.Sort(got)
	m0, m1 := FailClosedMetric("gm0"), FailClosedMetric("gm1")
	want := []string{
		fmt.Sprintf("198.19.7.0/24 table 254 metric %#x", m0),
		fmt.Sprintf("198.19.9.0/24 table 254 metric %#x", m1),
		fmt.Sprintf("fd00:77::/48 table 254 metric %#x", m0),
	}
	if !slices.Equal(got, want) {
		t.Errorf("unreachable routes after the restart:\n got %q\nwant %q", got, want)
	}
	if err := fc.Remove(); err != nil {
		t.Fatal(err)
	}
	if got := f.via("198.19.9.5"); got != "unreachable" {
		t.Errorf("gm0's Remove took gm1's route: 198.19.9.5 via %s", got)
	}
	wantVia(t, f, "after gm0's Remove", "wan0")
}
