package allowedips

import (
	"net/netip"
	"slices"
)

// FirstOverlap reports a pair of overlapping prefixes in ps, if any. Two
// prefixes overlap when one contains the other (equal prefixes included);
// IPv4 and IPv6 prefixes never overlap each other. The returned a contains
// b (a.Bits() <= b.Bits()), and both are returned as given in ps.
//
// Configuration validation uses it on the union of all peers' AllowedIPs:
// an address routed to two peers is ambiguous, so any overlap across peers
// is an error. Prefixes are compared after masking, so call CheckPrefix
// first to reject non-canonical ones; invalid prefixes are ignored.
//
// It runs in O(n log n): after sorting by (family, address, length), prefixes
// are either nested or disjoint, so the first overlap in sorted order is
// always between neighbours.
func FirstOverlap(ps []netip.Prefix) (a, b netip.Prefix, ok bool) {
	type item struct {
		masked netip.Prefix
		orig   netip.Prefix
	}
	items := make([]item, 0, len(ps))
	for _, p := range ps {
		if p.IsValid() {
			items = append(items, item{p.Masked(), p})
		}
	}
	slices.SortFunc(items, func(x, y item) int {
		if c := x.masked.Addr().Compare(y.masked.Addr()); c != 0 {
			return c // Compare orders IPv4 before IPv6
		}
		return x.masked.Bits() - y.masked.Bits()
	})
	for i := 1; i < len(items); i++ {
		prev, cur := items[i-1], items[i]
		if prev.masked.Addr().Is4() == cur.masked.Addr().Is4() && prev.masked.Contains(cur.masked.Addr()) {
			return prev.orig, cur.orig, true
		}
	}
	return netip.Prefix{}, netip.Prefix{}, false
}
