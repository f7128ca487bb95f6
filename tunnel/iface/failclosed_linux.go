package iface

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// FailClosed keeps one unreachable route per prefix (for the peers'
// allowed_ips) in a routing table, with a metric far above the routes into
// the interface. While the interface carries a prefix its own route wins
// (same length, lower metric); when that route is gone — the link is down,
// gmtun is starting, stopping or has crashed — the unreachable route still
// beats any shorter route such as the default route, so the traffic is
// refused (ICMP unreachable to the sender) instead of leaving in clear.
//
// The routes carry RouteProtocol and a metric derived from the interface
// name (FailClosedMetric), so each interface finds its own routes again
// after a crash and leaves other interfaces' routes alone. Its methods are
// safe for concurrent use.
type FailClosed struct {
	mu     sync.Mutex
	h      netlinker
	table  int
	metric int
	// defTable, when non-zero, holds the routes of the default prefixes
	// (0.0.0.0/0, ::/0) instead of table: the full tunnel's own table.
	defTable int
	have     map[netip.Prefix]netlink.Route
}

// FailClosedMetric is the metric of the fail-closed routes of the interface
// called name: 0xf0000000 plus a 16-bit hash of the name, above every
// metric a route into an interface gets by default (IPv4 0, IPv6 1024).
func FailClosedMetric(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	s := h.Sum32()
	return int(0xf0000000 | (s^s>>16)&0xffff)
}

// NewFailClosed returns the fail-closed route set of the interface called
// name in table (0 = main), using h for rtnetlink (nil: the calling
// thread's namespace). It installs nothing until Set.
func NewFailClosed(h *netlink.Handle, name string, table int) *FailClosed {
	if h == nil {
		h = &netlink.Handle{}
	}
	return newFailClosed(h, name, table)
}

func newFailClosed(h netlinker, name string, table int) *FailClosed {
	if table == 0 {
		table = unix.RT_TABLE_MAIN
	}
	return &FailClosed{h: h, table: table, metric: FailClosedMetric(name), have: map[netip.Prefix]netlink.Route{}}
}

// SetDefaultTable puts the fail-closed routes of 0.0.0.0/0 and ::/0 into
// table (0: the same table as the others), from the next Set on.
func (f *FailClosed) SetDefaultTable(table int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.defTable = table
}

// tableOf is the table of p's fail-closed route.
func (f *FailClosed) tableOf(p netip.Prefix) int {
	if p.Bits() == 0 && f.defTable != 0 {
		return f.defTable
	}
	return f.table
}

func (f *FailClosed) route(p netip.Prefix) netlink.Route {
	return netlink.Route{
		Dst:      ipNet(p),
		Type:     unix.RTN_UNREACHABLE,
		Table:    f.tableOf(p),
		Priority: f.metric,
		Protocol: netlink.RouteProtocol(RouteProtocol),
	}
}

// Set makes the installed routes exactly prefixes: it adds the missing ones
// first, then deletes the ones no longer wanted, including those an earlier
// run of the same interface left behind (in any table).
func (f *FailClosed) Set(prefixes []netip.Prefix) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	want := make(map[netip.Prefix]bool, len(prefixes))
	for _, p := range prefixes {
		if !p.IsValid() || p.Masked() != p {
			errs = append(errs, fmt.Errorf("iface: fail-closed route %v is not a canonical prefix", p))
			continue
		}
		want[p] = true
		r := f.route(p)
		if err := f.h.RouteReplace(&r); err != nil {
			errs = append(errs, fmt.Errorf("iface: add unreachable route %v: %w", p, err))
			continue
		}
		f.have[p] = r
	}
	stale, err := f.list()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, r := range stale {
		p := prefixOf(r.Dst)
		if want[p] && r.Table == f.tableOf(p) {
			continue
		}
		if err := f.h.RouteDel(&r); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("iface: delete unreachable route %v: %w", p, err))
			continue
		}
		if r.Table == f.tableOf(p) {
			delete(f.have, p)
		}
	}
	return errors.Join(errs...)
}

// Prefixes returns the prefixes that have a fail-closed route, sorted.
func (f *FailClosed) Prefixes() []netip.Prefix {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]netip.Prefix, 0, len(f.have))
	for p := range f.have {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	return out
}

// Present returns the prefixes that have a fail-closed route of this
// interface now, in any table: before the first Set, those an earlier run
// that did not stop cleanly left behind.
func (f *FailClosed) Present() ([]netip.Prefix, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rs, err := f.list()
	if err != nil {
		return nil, err
	}
	out := make([]netip.Prefix, 0, len(rs))
	for _, r := range rs {
		out = append(out, prefixOf(r.Dst))
	}
	return out, nil
}

// Remove deletes every fail-closed route of the interface (a clean stop).
func (f *FailClosed) Remove() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	routes, err := f.list()
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range routes {
		if err := f.h.RouteDel(&r); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("iface: delete unreachable route %v: %w", prefixOf(r.Dst), err))
		}
	}
	clear(f.have)
	return errors.Join(errs...)
}

// list returns the interface's fail-closed routes present in any table.
func (f *FailClosed) list() ([]netlink.Route, error) {
	filter := &netlink.Route{Table: unix.RT_TABLE_UNSPEC, Protocol: netlink.RouteProtocol(RouteProtocol), Priority: f.metric}
	rs, err := f.h.RouteListFiltered(netlink.FAMILY_ALL, filter,
		netlink.RT_FILTER_TABLE|netlink.RT_FILTER_PROTOCOL|netlink.RT_FILTER_PRIORITY)
	if err != nil {
		return nil, fmt.Errorf("iface: list unreachable routes: %w", err)
	}
	out := rs[:0]
	for _, r := range rs {
		// The filter's priority is not applied by every netlink version:
		// check it here, it is what tells interfaces apart.
		if r.Type == unix.RTN_UNREACHABLE && r.Dst != nil && r.Priority == f.metric {
			out = append(out, r)
		}
	}
	return out, nil
}
