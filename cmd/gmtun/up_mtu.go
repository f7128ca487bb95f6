package main

import (
	"fmt"
	"net/netip"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/tunnel/iface"
)

// autoMTU derives the tunnel MTU of mtu = "auto" from the underlay:
// the smallest config.AutoMTU over the path MTUs to the peers' endpoints
// (IPv4 or IPv6 header as the endpoint is), or, without an endpoint that
// resolves, from the default routes' devices (IPv6 header). pathMTU looks
// up the MTU towards an address (the invalid Addr: the default routes). It
// also says how the value was found, for the log.
func autoMTU(cfg *config.Config, pathMTU func(netip.Addr) (int, error)) (int, string) {
	best, how := 0, ""
	for i := range cfg.Peers {
		ep := cfg.Peers[i].Endpoint
		if !ep.IsValid() {
			continue
		}
		addr := ep.Addr().Unmap()
		m, err := pathMTU(addr)
		if err != nil || m <= 0 {
			continue
		}
		if mtu := config.AutoMTU(m, addr.Is4()); best == 0 || mtu < best {
			best, how = mtu, fmt.Sprintf("path MTU %d towards peer %s at %v", m, cfg.Peers[i].Name, addr)
		}
	}
	if best != 0 {
		return best, how
	}
	if m, err := pathMTU(netip.Addr{}); err == nil && m > 0 {
		return config.AutoMTU(m, false), fmt.Sprintf("MTU %d of the default route's device", m)
	}
	return config.DefaultMTU, "no route to a peer or default route found: the default"
}

// resolveMTU sets the MTU of mtu = "auto" before the interface is created.
func (d *daemon) resolveMTU() {
	ifc := &d.cfg.Interface
	if !ifc.MTUAuto {
		return
	}
	mtu, how := autoMTU(d.cfg, func(a netip.Addr) (int, error) { return iface.PathMTU(nil, a) })
	ifc.MTU = mtu
	d.log.Infof("mtu auto: %d (from the %s)", mtu, how)
}
