package config

import (
	"math"

	"github.com/gmtun/gmtun/ciphers"
)

// Overhead is what gmtun adds to an inner packet on the underlay, IP
// header excluded: UDP header, transport header and the largest tag of any
// suite (bodies are padded to 16 bytes only up to the MTU, never beyond).
const Overhead = 8 + ciphers.HeaderSize + ciphers.MaxTagSize

// AutoMTU is the tunnel MTU for an underlay path MTU: pathMTU minus the
// IP header (IPv6's 40 bytes unless ipv4) and Overhead, clamped to
// MinMTU..MaxMTU.
func AutoMTU(pathMTU int, ipv4 bool) int {
	ip := 40
	if ipv4 {
		ip = 20
	}
	return min(max(pathMTU-ip-Overhead, MinMTU), MaxMTU)
}

// parseMTU reads interface.mtu: an integer, 0 for DefaultMTU, or "auto"
// (MTUAuto set; MTU holds DefaultMTU until the daemon derives it).
func parseMTU(s *section, ifc *Interface) error {
	if v, ok := s.m["mtu"].(string); ok {
		if v != "auto" {
			return s.errorf("mtu", "must be an integer or \"auto\", got %q", v)
		}
		ifc.MTU, ifc.MTUAuto = DefaultMTU, true
		return nil
	}
	mtu, _, err := s.integer("mtu", math.MinInt64, math.MaxInt64)
	if err != nil {
		return err
	}
	switch {
	case mtu == 0:
		ifc.MTU = DefaultMTU
	case mtu < MinMTU || mtu > MaxMTU:
		return s.errorf("mtu", "must be in %d..%d (%d is the IPv6 minimum) or 0 for the default %d, got %d",
			MinMTU, MaxMTU, MinMTU, DefaultMTU, mtu)
	default:
		ifc.MTU = int(mtu)
	}
	return nil
}
