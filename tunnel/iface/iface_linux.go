package iface

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Applied is the record of what Configure changed on one link; Teardown
// reverts it. Its methods are safe for concurrent use.
type Applied struct {
	mu        sync.Mutex
	h         netlinker
	index     int
	name      string
	prevMTU   int // MTU before Configure; 0 if Configure did not change it
	broughtUp bool
	addrs     []netlink.Addr  // addresses Configure added
	routes    []netlink.Route // routes Configure added or adopted
	done      bool
}

// Configure applies cfg to the link called name, using h for rtnetlink (a
// nil h uses the calling thread's network namespace). Steps run in the
// order MTU, addresses, link up, routes; if one fails, the steps already
// done are reverted and the error is returned.
//
// A route that already exists on this link with gmtun's protocol (left by
// an earlier run) is adopted and removed by Teardown; one that exists on
// this link with another protocol (for example the kernel's subnet route
// for an address) is left alone; one that exists on another link is an
// error.
func Configure(h *netlink.Handle, name string, cfg Config) (*Applied, error) {
	if h == nil {
		h = &netlink.Handle{}
	}
	return configure(h, name, cfg)
}

// netlinker is the part of *netlink.Handle that Applied and FailClosed use;
// the unit tests substitute an in-memory routing table for it.
type netlinker interface {
	LinkByName(name string) (netlink.Link, error)
	LinkByIndex(index int) (netlink.Link, error)
	LinkSetMTU(link netlink.Link, mtu int) error
	LinkSetUp(link netlink.Link) error
	LinkSetDown(link netlink.Link) error
	AddrList(link netlink.Link, family int) ([]netlink.Addr, error)
	AddrReplace(link netlink.Link, addr *netlink.Addr) error
	AddrDel(link netlink.Link, addr *netlink.Addr) error
	RouteAdd(route *netlink.Route) error
	RouteDel(route *netlink.Route) error
	RouteReplace(route *netlink.Route) error
	RouteListFiltered(family int, filter *netlink.Route, filterMask uint64) ([]netlink.Route, error)
}

var _ netlinker = (*netlink.Handle)(nil)

func configure(h netlinker, name string, cfg Config) (*Applied, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	link, err := h.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("iface: link %q: %w", name, err)
	}
	a := &Applied{h: h, index: link.Attrs().Index, name: name}
	if err := a.apply(link, &cfg); err != nil {
		return nil, errors.Join(err, a.Teardown())
	}
	return a, nil
}

func (a *Applied) apply(link netlink.Link, cfg *Config) error {
	attrs := link.Attrs()
	if cfg.MTU != 0 && cfg.MTU != attrs.MTU {
		if err := a.h.LinkSetMTU(link, cfg.MTU); err != nil {
			return fmt.Errorf("iface: set MTU %d on %s: %w", cfg.MTU, a.name, err)
		}
		a.prevMTU = attrs.MTU
	}
	if err := a.addAddresses(link, cfg.Addresses); err != nil {
		return err
	}
	if attrs.Flags&net.FlagUp == 0 {
		if err := a.h.LinkSetUp(link); err != nil {
			return fmt.Errorf("iface: set %s up: %w", a.name, err)
		}
		a.broughtUp = true
	}
	for _, p := range cfg.Routes {
		if err := a.addRoute(p, cfg.Table, cfg.protocol()); err != nil {
			return err
		}
	}
	return nil
}

func (a *Applied) addAddresses(link netlink.Link, want []netip.Prefix) error {
	have, err := a.h.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		return fmt.Errorf("iface: list addresses of %s: %w", a.name, err)
	}
	for _, p := range want {
		addr := netlink.Addr{IPNet: ipNet(p)}
		if p.Addr().Is6() {
			addr.Flags = unix.IFA_F_NODAD
		}
		present := false
		for _, h := range have {
			if ipNetEqual(h.IPNet, addr.IPNet) {
				present = true
			}
		}
		if err := a.h.AddrReplace(link, &addr); err != nil {
			return fmt.Errorf("iface: add address %v to %s: %w", p, a.name, err)
		}
		if !present {
			a.addrs = append(a.addrs, addr)
		}
	}
	return nil
}

func (a *Applied) route(p netip.Prefix, table, protocol int) netlink.Route {
	r := netlink.Route{
		LinkIndex: a.index,
		Dst:       ipNet(p),
		Table:     table,
		Protocol:  netlink.RouteProtocol(protocol),
	}
	if p.Addr().Is4() {
		r.Scope = netlink.SCOPE_LINK
	}
	return r
}

func (a *Applied) addRoute(p netip.Prefix, table, protocol int) error {
	r := a.route(p, table, protocol)
	err := a.h.RouteAdd(&r)
	if err == nil {
		a.routes = append(a.routes, r)
		return nil
	}
	if !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("iface: add route %v dev %s: %w", p, a.name, err)
	}
	// The destination already has a route in this table: find out whose.
	listTable := table
	if listTable == 0 {
		listTable = unix.RT_TABLE_MAIN
	}
	family := netlink.FAMILY_V4
	if p.Addr().Is6() {
		family = netlink.FAMILY_V6
	}
	existing, lerr := a.h.RouteListFiltered(family, &netlink.Route{Dst: r.Dst, Table: listTable},
		netlink.RT_FILTER_DST|netlink.RT_FILTER_TABLE)
	if lerr != nil {
		return fmt.Errorf("iface: add route %v dev %s: %w (listing: %w)", p, a.name, err, lerr)
	}
	for _, e := range existing {
		if e.LinkIndex == a.index && int(e.Protocol) == protocol {
			a.routes = append(a.routes, r) // ours, from an earlier run
			return nil
		}
		if e.LinkIndex == a.index {
			return nil // someone else's route into our link: leave it
		}
	}
	return fmt.Errorf("iface: route %v already exists via another interface: %w", p, err)
}

// Teardown reverts what Configure did, in reverse order: routes,
// addresses, link state, MTU. Items that have already disappeared (for
// example because the TUN device was closed, which removes the link and
// everything attached to it) count as removed. Teardown is idempotent.
func (a *Applied) Teardown() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return nil
	}
	a.done = true
	link, err := a.h.LinkByIndex(a.index)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) || gone(err) {
			return nil // the link and all its addresses and routes are gone
		}
		return fmt.Errorf("iface: teardown %s: %w", a.name, err)
	}
	var errs []error
	for i := len(a.routes) - 1; i >= 0; i-- {
		r := a.routes[i]
		if err := a.h.RouteDel(&r); err != nil && !errors.Is(err, unix.ESRCH) && !gone(err) {
			errs = append(errs, fmt.Errorf("iface: delete route %v: %w", r.Dst, err))
		}
	}
	for i := len(a.addrs) - 1; i >= 0; i-- {
		addr := a.addrs[i]
		if err := a.h.AddrDel(link, &addr); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) && !gone(err) {
			errs = append(errs, fmt.Errorf("iface: delete address %v: %w", addr.IPNet, err))
		}
	}
	if a.broughtUp {
		if err := a.h.LinkSetDown(link); err != nil && !gone(err) {
			errs = append(errs, fmt.Errorf("iface: set %s down: %w", a.name, err))
		}
	}
	if a.prevMTU != 0 {
		if err := a.h.LinkSetMTU(link, a.prevMTU); err != nil && !gone(err) {
			errs = append(errs, fmt.Errorf("iface: restore MTU of %s: %w", a.name, err))
		}
	}
	return errors.Join(errs...)
}

// gone reports an error caused by the link disappearing while Teardown
// runs (the TUN device closing concurrently); its state went with it.
func gone(err error) bool { return errors.Is(err, unix.ENODEV) }

// Routes returns the route destinations Configure added (or adopted), which
// Teardown will remove.
func (a *Applied) Routes() []netip.Prefix {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]netip.Prefix, 0, len(a.routes))
	for _, r := range a.routes {
		out = append(out, prefixOf(r.Dst))
	}
	return out
}

// Addresses returns the addresses Configure added, which Teardown will
// remove.
func (a *Applied) Addresses() []netip.Prefix {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]netip.Prefix, 0, len(a.addrs))
	for _, addr := range a.addrs {
		out = append(out, prefixOf(addr.IPNet))
	}
	return out
}

// RemoveStaleRoutes deletes every route through the link called name that
// carries the given protocol (RouteProtocol if 0), in any routing table, and
// returns how many it deleted. The daemon calls it at startup to clean up
// after a crash.
func RemoveStaleRoutes(h *netlink.Handle, name string, protocol int) (int, error) {
	if h == nil {
		h = &netlink.Handle{}
	}
	if protocol == 0 {
		protocol = RouteProtocol
	}
	link, err := h.LinkByName(name)
	if err != nil {
		return 0, fmt.Errorf("iface: link %q: %w", name, err)
	}
	filter := &netlink.Route{
		LinkIndex: link.Attrs().Index,
		Protocol:  netlink.RouteProtocol(protocol),
		Table:     unix.RT_TABLE_UNSPEC,
	}
	routes, err := h.RouteListFiltered(netlink.FAMILY_ALL, filter,
		netlink.RT_FILTER_OIF|netlink.RT_FILTER_PROTOCOL|netlink.RT_FILTER_TABLE)
	if err != nil {
		return 0, fmt.Errorf("iface: list routes of %s: %w", name, err)
	}
	n := 0
	var errs []error
	for _, r := range routes {
		if err := h.RouteDel(&r); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("iface: delete route %v: %w", r.Dst, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

func ipNet(p netip.Prefix) *net.IPNet {
	bits := 32
	if p.Addr().Is6() {
		bits = 128
	}
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), bits)}
}

func prefixOf(n *net.IPNet) netip.Prefix {
	if n == nil {
		return netip.Prefix{}
	}
	a, _ := netip.AddrFromSlice(n.IP)
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), ones)
}

func ipNetEqual(a, b *net.IPNet) bool {
	return a != nil && b != nil && prefixOf(a) == prefixOf(b)
}
