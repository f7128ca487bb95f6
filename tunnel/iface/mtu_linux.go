package iface

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// PathMTU returns the MTU of the route the kernel would use to reach dst:
// the route's own mtu attribute if it has one, else the MTU of its output
// device. h nil: the calling thread's namespace. With an invalid dst it
// returns the smallest MTU of the devices of the default routes (IPv4 and
// IPv6).
func PathMTU(h *netlink.Handle, dst netip.Addr) (int, error) {
	if h == nil {
		h = &netlink.Handle{}
	}
	if !dst.IsValid() {
		return defaultRouteMTU(h)
	}
	routes, err := h.RouteGet(net.IP(dst.AsSlice()))
	if err != nil {
		return 0, fmt.Errorf("iface: no route to %v: %w", dst, err)
	}
	for _, r := range routes {
		if mtu, err := routeMTU(h, r); err == nil {
			return mtu, nil
		}
	}
	return 0, fmt.Errorf("iface: no route with a device to %v", dst)
}

func routeMTU(h *netlink.Handle, r netlink.Route) (int, error) {
	if r.MTU > 0 {
		return r.MTU, nil
	}
	if r.LinkIndex <= 0 {
		return 0, errors.New("iface: route without a device")
	}
	link, err := h.LinkByIndex(r.LinkIndex)
	if err != nil {
		return 0, err
	}
	return link.Attrs().MTU, nil
}

func defaultRouteMTU(h *netlink.Handle) (int, error) {
	best := 0
	for _, family := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		routes, err := h.RouteListFiltered(family, &netlink.Route{Table: unix.RT_TABLE_MAIN},
			netlink.RT_FILTER_TABLE)
		if err != nil {
			return 0, fmt.Errorf("iface: list routes: %w", err)
		}
		for _, r := range routes {
			if r.Dst != nil {
				if ones, _ := r.Dst.Mask.Size(); ones != 0 {
					continue
				}
			}
			if mtu, err := routeMTU(h, r); err == nil && (best == 0 || mtu < best) {
				best = mtu
			}
		}
	}
	if best == 0 {
		return 0, errors.New("iface: no default route")
	}
	return best, nil
}
