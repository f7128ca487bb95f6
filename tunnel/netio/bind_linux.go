package netio

import "golang.org/x/sys/unix"

// probeUDPOffload checks UDP_SEGMENT and UDP_GRO on throw-away sockets of
// each family, with the same tests wireguard-go applies to its own sockets
// (conn/features_linux.go, conn/controlfns_linux.go).
func probeUDPOffload() UDPOffload {
	var o UDPOffload
	o.GSO4, o.GRO4 = probeFamily(unix.AF_INET)
	o.GSO6, o.GRO6 = probeFamily(unix.AF_INET6)
	return o
}

func probeFamily(family int) (gso, gro bool) {
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, false
	}
	defer unix.Close(fd)
	_, err = unix.GetsockoptInt(fd, unix.IPPROTO_UDP, unix.UDP_SEGMENT)
	gso = err == nil
	// Kernels before 5.12 cannot read UDP_GRO back; wireguard-go does not
	// enable it there, and the failed getsockopt reports it off here too.
	if unix.SetsockoptInt(fd, unix.IPPROTO_UDP, unix.UDP_GRO, 1) == nil {
		v, err := unix.GetsockoptInt(fd, unix.IPPROTO_UDP, unix.UDP_GRO)
		gro = err == nil && v == 1
	}
	return gso, gro
}
