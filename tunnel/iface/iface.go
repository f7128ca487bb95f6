// Package iface configures the gmtun network interface through rtnetlink:
// MTU, addresses, link state and one route per AllowedIPs prefix.
//
// Configure records exactly what it changed, and Teardown undoes exactly
// that: it deletes the routes and addresses it added (never ones that were
// already present), restores the MTU and sets the link down again if it was
// down. Routes carry a private rtnetlink protocol number (RouteProtocol) so
// that routes left behind by a crashed daemon can be found and removed with
// RemoveStaleRoutes.
package iface

import (
	"fmt"
	"net/netip"
)

// RouteProtocol is the rtm_protocol value gmtun stamps on its routes
// ("proto 79" in `ip route`). Values above RTPROT_STATIC (4) are not
// interpreted by the kernel (rtnetlink(7)); 79 is not assigned in the
// kernel's include/uapi/linux/rtnetlink.h or iproute2's rt_protos.
const RouteProtocol = 79

// Config is the desired state of the interface.
type Config struct {
	// MTU sets the link MTU; 0 leaves it unchanged.
	MTU int
	// Addresses are the interface's own addresses with their subnet
	// length, e.g. 198.18.0.1/24 or fd00::1/64. They are added with
	// AddrReplace, so applying the same address twice is harmless.
	// IPv6 addresses skip duplicate address detection (IFA_F_NODAD).
	Addresses []netip.Prefix
	// Routes are the AllowedIPs prefixes routed into the interface. Each
	// must be canonical (masked).
	Routes []netip.Prefix
	// Table is the routing table for Routes; 0 means the main table.
	Table int
	// Protocol overrides RouteProtocol when non-zero.
	Protocol int
}

func (c *Config) validate() error {
	if c.MTU < 0 || c.MTU > 65535 || (c.MTU > 0 && c.MTU < 576) {
		return fmt.Errorf("iface: MTU %d out of range", c.MTU)
	}
	for _, a := range c.Addresses {
		if !a.IsValid() || a.Addr().Zone() != "" {
			return fmt.Errorf("iface: invalid address %v", a)
		}
	}
	for _, r := range c.Routes {
		if !r.IsValid() || r.Masked() != r {
			return fmt.Errorf("iface: route %v is not a canonical prefix", r)
		}
	}
	if c.Table < 0 || c.Protocol < 0 || c.Protocol > 255 {
		return fmt.Errorf("iface: invalid table %d or protocol %d", c.Table, c.Protocol)
	}
	return nil
}

func (c *Config) protocol() int {
	if c.Protocol != 0 {
		return c.Protocol
	}
	return RouteProtocol
}
