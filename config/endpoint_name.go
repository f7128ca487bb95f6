package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// parseEndpointOrName parses a peer endpoint: an IP literal with a port
// (parseEndpoint), or a DNS name with a port ("gw.example.net:51820"),
// which is returned as name and port for the daemon to resolve. Names are
// not resolved here, so that `gmtun check` and reloads never wait for DNS;
// `gmtun up` resolves them at start and again later (docs/OPERATIONS.md,
// "Endpoints given as DNS names").
func parseEndpointOrName(s string) (ap netip.AddrPort, name string, port uint16, err error) {
	if _, perr := netip.ParseAddrPort(s); perr == nil {
		ap, err = parseEndpoint(s)
		return ap, "", 0, err
	}
	host, p, serr := net.SplitHostPort(s)
	if serr != nil || host == "" || p == "" {
		return netip.AddrPort{}, "", 0, fmt.Errorf("%q is not IP:port or NAME:port (IPv6 as [addr]:port)", s)
	}
	if strings.HasPrefix(s, "[") {
		return netip.AddrPort{}, "", 0, fmt.Errorf("%q: %q is not a valid host name: brackets hold an IPv6 address only", s, host)
	}
	if _, aerr := netip.ParseAddr(host); aerr == nil || strings.Contains(host, ":") {
		return netip.AddrPort{}, "", 0, fmt.Errorf("%q is not IP:port (IPv6 as [addr]:port)", s)
	}
	n, perr := strconv.ParseUint(p, 10, 16)
	if perr != nil || strconv.FormatUint(n, 10) != p {
		return netip.AddrPort{}, "", 0, fmt.Errorf("%q: port %q is not a number in 1..65535", s, p)
	}
	if n == 0 {
		return netip.AddrPort{}, "", 0, fmt.Errorf("%q has port 0", s)
	}
	if err := checkDNSName(host); err != nil {
		return netip.AddrPort{}, "", 0, fmt.Errorf("%q: %q is not a valid host name: %v", s, host, err)
	}
	return netip.AddrPort{}, strings.TrimSuffix(host, "."), uint16(n), nil
}

// checkDNSName accepts a host name of RFC 1123 labels: 1–63 letters,
// digits and hyphens, not starting or ending with a hyphen, 253 bytes at
// most, an optional final dot, and a last label that is not all digits
// (so that a mistyped IPv4 address is not taken for a name).
func checkDNSName(h string) error {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return fmt.Errorf("a host name has 1..253 bytes")
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("each dot-separated label has 1..63 bytes")
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("label %q starts or ends with '-'", l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("it contains %q; use letters, digits, '-' and '.'", c)
			}
		}
	}
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" {
		return fmt.Errorf("its last label %q is all digits (an IP address needs all four parts and a port)", last)
	}
	return nil
}
