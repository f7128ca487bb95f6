//go:build !linux

package netio

// probeUDPOffload reports no offloads: StdNetBind uses UDP GSO/GRO only on
// Linux.
func probeUDPOffload() UDPOffload { return UDPOffload{} }
