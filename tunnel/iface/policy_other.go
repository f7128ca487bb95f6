//go:build !linux

package iface

import (
	"errors"
	"hash/fnv"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// FullTunnelTable is the routing table of the interface's full-tunnel
// routes (see the Linux implementation).
func FullTunnelTable(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return 51900 + int(h.Sum32()%1000)
}

// PolicyRules are the installed full-tunnel rules; none outside Linux.
type PolicyRules struct{}

// AddFullTunnelRules is implemented only on Linux.
func AddFullTunnelRules(h *netlink.Handle, table int, mark uint32, v4, v6 bool) (*PolicyRules, error) {
	return nil, errors.ErrUnsupported
}

// Remove does nothing outside Linux.
func (p *PolicyRules) Remove() error { return nil }

// RemoveFullTunnelRules does nothing outside Linux.
func RemoveFullTunnelRules(h *netlink.Handle, table int) (int, error) { return 0, nil }

// PathMTU is implemented only on Linux.
func PathMTU(h *netlink.Handle, dst netip.Addr) (int, error) { return 0, errors.ErrUnsupported }
