package iface

import (
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Full tunnel: a peer whose allowed_ips hold 0.0.0.0/0 or ::/0 takes the
// default route. As wg-quick does, that route (and its fail-closed
// unreachable twin) lives in a table of its own, consulted for every packet
// that does not carry the tunnel's firewall mark, after the main table
// without its default route:
//
//	PRIO    from all lookup main suppress_prefixlength 0
//	PRIO+1  not from all fwmark MARK lookup TABLE
//
// The daemon marks its UDP sockets with MARK, so the underlay packets to
// the peers skip TABLE and leave by the main table's default route.

// FullTunnelTable is the routing table (and, when fwmark is not
// configured, the firewall mark) of the full-tunnel routes of the interface
// called name: 51900 plus a hash of the name below 1000.
func FullTunnelTable(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return 51900 + int(h.Sum32()%1000)
}

// fullTunnelPriority is the priority of the first of the two rules of
// table: distinct per table, below the main table's rule (32766).
func fullTunnelPriority(table int) int { return 30000 + 2*(((table-51900)%1000+1000)%1000) }

// PolicyRules are the installed full-tunnel rules of one interface.
type PolicyRules struct {
	h     *netlink.Handle
	rules []netlink.Rule
}

func fullTunnelRules(family, table int, mark uint32) []netlink.Rule {
	prio := fullTunnelPriority(table)
	suppress := netlink.NewRule()
	suppress.Family, suppress.Priority, suppress.Table = family, prio, unix.RT_TABLE_MAIN
	suppress.SuppressPrefixlen, suppress.Protocol = 0, RouteProtocol
	tunnel := netlink.NewRule()
	tunnel.Family, tunnel.Priority, tunnel.Table = family, prio+1, table
	tunnel.Mark, tunnel.Invert, tunnel.Protocol = mark, true, RouteProtocol
	return []netlink.Rule{*suppress, *tunnel}
}

// AddFullTunnelRules installs the two rules for each family that is true
// (v4, v6), sending unmarked packets to table. A rule that exists already
// (left by a run that did not stop cleanly) is taken over. h nil: the
// calling thread's namespace.
func AddFullTunnelRules(h *netlink.Handle, table int, mark uint32, v4, v6 bool) (*PolicyRules, error) {
	if h == nil {
		h = &netlink.Handle{}
	}
	if table <= 0 || table == unix.RT_TABLE_MAIN || table == unix.RT_TABLE_LOCAL || mark == 0 {
		return nil, fmt.Errorf("iface: invalid full-tunnel table %d or mark %d", table, mark)
	}
	p := &PolicyRules{h: h}
	for _, fam := range []struct {
		on     bool
		family int
	}{{v4, unix.AF_INET}, {v6, unix.AF_INET6}} {
		if !fam.on {
			continue
		}
		for _, r := range fullTunnelRules(fam.family, table, mark) {
			if err := h.RuleAdd(&r); err != nil && !errors.Is(err, unix.EEXIST) {
				return nil, errors.Join(fmt.Errorf("iface: add policy rule %v: %w", r, err), p.Remove())
			}
			p.rules = append(p.rules, r)
		}
	}
	return p, nil
}

// Remove deletes the rules (idempotent).
func (p *PolicyRules) Remove() error {
	if p == nil {
		return nil
	}
	var errs []error
	for i := len(p.rules) - 1; i >= 0; i-- {
		r := p.rules[i]
		if err := p.h.RuleDel(&r); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("iface: delete policy rule %v: %w", r, err))
		}
	}
	p.rules = nil
	return errors.Join(errs...)
}

// RemoveFullTunnelRules deletes the full-tunnel rules of table that a run
// which did not stop cleanly left, in both families; it returns how many.
func RemoveFullTunnelRules(h *netlink.Handle, table int) (int, error) {
	if h == nil {
		h = &netlink.Handle{}
	}
	prio := fullTunnelPriority(table)
	n := 0
	var errs []error
	for _, family := range []int{unix.AF_INET, unix.AF_INET6} {
		rules, err := h.RuleList(family)
		if err != nil {
			errs = append(errs, fmt.Errorf("iface: list policy rules: %w", err))
			continue
		}
		for _, r := range rules {
			if r.Protocol != RouteProtocol || (r.Priority != prio && r.Priority != prio+1) {
				continue
			}
			if err := h.RuleDel(&r); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("iface: delete policy rule %v: %w", r, err))
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}
