package config

import (
	"net/netip"
	"strings"
)

// MetricsListen is where the Prometheus metrics are served
// (interface.metrics_listen); the zero value means no metrics.
type MetricsListen struct {
	// Network is "tcp" or "unix" ("" when off).
	Network string
	// Address is IP:port for tcp, the socket's absolute path for unix.
	Address string
}

// Enabled reports whether metrics are served.
func (l MetricsListen) Enabled() bool { return l.Network != "" }

// String returns the value as written in the configuration ("" when off).
func (l MetricsListen) String() string {
	if l.Network == "unix" {
		return "unix:" + l.Address
	}
	return l.Address
}

// maxUnixPath is the longest socket path: sun_path holds 108 bytes with
// the terminating NUL.
const maxUnixPath = 107

// parseMetricsListen reads interface.metrics_listen: "IP:port" (IPv6 as
// "[addr]:port"; an IP literal, port 1..65535) or "unix:/absolute/path".
func parseMetricsListen(s *section) (MetricsListen, error) {
	v, ok, err := s.str("metrics_listen")
	if err != nil || !ok {
		return MetricsListen{}, err
	}
	if path, ok := strings.CutPrefix(v, "unix:"); ok {
		switch {
		case !strings.HasPrefix(path, "/") || strings.ContainsRune(path, 0):
			return MetricsListen{}, s.errorf("metrics_listen", "%q: a unix socket needs an absolute path (unix:/run/gmtun/NAME.metrics)", v)
		case len(path) > maxUnixPath:
			return MetricsListen{}, s.errorf("metrics_listen", "%q: the socket path is %d bytes; a unix socket path is at most %d", v, len(path), maxUnixPath)
		}
		return MetricsListen{Network: "unix", Address: path}, nil
	}
	ap, err := netip.ParseAddrPort(v)
	if err != nil {
		return MetricsListen{}, s.errorf("metrics_listen", "%q is not IP:port (IPv6 as [addr]:port; no host names) or unix:/path", v)
	}
	a := ap.Addr()
	switch {
	case ap.Port() == 0:
		return MetricsListen{}, s.errorf("metrics_listen", "%q has port 0; give the port to scrape (9586 in the examples)", v)
	case a.Zone() != "" || a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return MetricsListen{}, s.errorf("metrics_listen", "%s is not a unicast address without zone", a)
	}
	if a.Is4In6() {
		ap = netip.AddrPortFrom(a.Unmap(), ap.Port())
	}
	return MetricsListen{Network: "tcp", Address: ap.String()}, nil
}
