package config

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// maxIfaceNameLen is IFNAMSIZ − 1: Linux interface names are at most 15
// bytes plus the terminating NUL.
const maxIfaceNameLen = 15

// checkIfaceName applies the rules of the Linux kernel's dev_valid_name
// (net/core/dev.c) and, in addition, allows only printable ASCII.
func checkIfaceName(name string) error {
	switch {
	case name == "":
		return errors.New("it is empty")
	case len(name) > maxIfaceNameLen:
		return fmt.Errorf("it is %d bytes long; the limit is %d", len(name), maxIfaceNameLen)
	case name == "." || name == "..":
		return fmt.Errorf("%q is reserved", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '/' || c == ':' || c == ' ':
			return fmt.Errorf("it contains %q; interface names cannot contain '/', ':' or spaces", c)
		case c < 0x21 || c > 0x7e:
			return fmt.Errorf("it contains byte %#02x; only printable ASCII is allowed", c)
		}
	}
	return nil
}

// maxPeerNameLen bounds peer names, which appear in every peer log line.
const maxPeerNameLen = 32

// checkPeerName allows 1–32 bytes of ASCII letters, digits, '.', '_' and
// '-', so that names need no quoting in logs and `gmtun show` output.
func checkPeerName(name string) error {
	if name == "" {
		return errors.New("it is empty")
	}
	if len(name) > maxPeerNameLen {
		return fmt.Errorf("it is %d bytes long; the limit is %d", len(name), maxPeerNameLen)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(isBareKeyByte(c) || c == '.') {
			return fmt.Errorf("it contains %q; use only letters, digits, '.', '_' and '-'", c)
		}
	}
	return nil
}

// parsePrefix parses s as a CIDR prefix in canonical text form.
func parsePrefix(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		if !strings.Contains(s, "/") {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR prefix (address/length)", s)
		}
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR prefix: %v", s, strings.TrimPrefix(err.Error(), "netip.ParsePrefix("+fmt.Sprintf("%q", s)+"): "))
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("%q is an IPv4-mapped IPv6 prefix; write the IPv4 prefix", s)
	}
	if p.String() != s {
		return netip.Prefix{}, fmt.Errorf("%q is not in canonical form; write %q", s, p.String())
	}
	return p, nil
}

// parseAddress parses an interface address: a canonical prefix whose
// address is a unicast host address (host bits may be set).
func parseAddress(s string) (netip.Prefix, error) {
	p, err := parsePrefix(s)
	if err != nil {
		return p, err
	}
	if a := p.Addr(); a.IsUnspecified() || a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return netip.Prefix{}, fmt.Errorf("%s is not a unicast address", a)
	}
	return p, nil
}

// parseAllowedIP parses an allowed_ips element: a canonical prefix with
// no host bits set.
func parseAllowedIP(s string) (netip.Prefix, error) {
	p, err := parsePrefix(s)
	if err != nil {
		return p, err
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, fmt.Errorf("%q has host bits set; write %q", s, m.String())
	}
	return p, nil
}

// parseEndpoint parses a peer endpoint. Only IP literals are accepted:
// resolving names at load time would make `gmtun check` and reloads depend
// on DNS, and re-resolution belongs in the daemon, not in the parser.
func parseEndpoint(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q is not IP:port; host names are not resolved, so write an IP literal (IPv6 as [addr]:port)", s)
	}
	a := ap.Addr()
	switch {
	case ap.Port() == 0:
		return netip.AddrPort{}, fmt.Errorf("%q has port 0", s)
	case a.IsUnspecified() || a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return netip.AddrPort{}, fmt.Errorf("%s is not a unicast address", a)
	}
	if a.Is4In6() {
		ap = netip.AddrPortFrom(a.Unmap(), ap.Port())
	}
	return ap, nil
}

// ownedPrefix is an allowed_ips prefix with its place in the file.
type ownedPrefix struct {
	p    netip.Prefix
	peer int // index into the peer list
	elem int // 1-based position in that peer's allowed_ips
	seq  int // position in file order, over all peers
}

// checkOverlaps rejects two allowed_ips prefixes that share any address,
// within one peer or across peers; cryptokey routing needs every inner
// address to map to at most one peer.
//
// Two CIDR prefixes overlap exactly when one contains the other. After
// sorting by (first address, prefix length), if P contains Q then every
// prefix between them starts inside P and so lies in P; hence if any pair
// overlaps, some adjacent pair does, and O(n log n) suffices. Of the
// overlapping adjacent pairs, the one whose later member comes first in
// the file is reported, at that later member.
func (p *parseState) checkOverlaps(peers []Peer) error {
	var all []ownedPrefix
	for i := range peers {
		for j, pfx := range peers[i].AllowedIPs {
			all = append(all, ownedPrefix{p: pfx, peer: i, elem: j + 1, seq: len(all)})
		}
	}
	slices.SortFunc(all, func(a, b ownedPrefix) int {
		return cmp.Or(a.p.Addr().Compare(b.p.Addr()), cmp.Compare(a.p.Bits(), b.p.Bits()), cmp.Compare(a.seq, b.seq))
	})
	var bad *[2]ownedPrefix
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if !a.p.Overlaps(b.p) {
			continue
		}
		if a.seq > b.seq {
			a, b = b, a
		}
		if bad == nil || b.seq < bad[1].seq {
			bad = &[2]ownedPrefix{a, b}
		}
	}
	if bad == nil {
		return nil
	}
	first, second := bad[0], bad[1]
	s := &section{p: p, prefix: "peer", lines: p.peerLines[second.peer], header: p.peerHeaders[second.peer],
		peer: peers[second.peer].Name}
	verb := "overlaps"
	if first.p == second.p {
		verb = "repeats"
	}
	if first.peer == second.peer {
		return s.errorf("allowed_ips", "element %d: %s %s element %d, %s", second.elem, second.p, verb, first.elem, first.p)
	}
	return s.errorf("allowed_ips", "element %d: %s %s %s of peer %q (line %d)", second.elem, second.p, verb, first.p,
		peers[first.peer].Name, peers[first.peer].Line)
}
