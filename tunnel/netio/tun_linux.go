package netio

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
	"golang.zx2c4.com/wireguard/tun"
)

const (
	tunClonePath = "/dev/net/tun"
	// TUNSETOFFLOAD flag sets, as wireguard-go's tun package negotiates
	// them (tun/tun_linux.go initFromFlags).
	tunTCPOffloads = unix.TUN_F_CSUM | unix.TUN_F_TSO4 | unix.TUN_F_TSO6
	tunUDPOffloads = unix.TUN_F_USO4 | unix.TUN_F_USO6
	maxQueues      = 256 // MAX_TAP_QUEUES in drivers/net/tun.c
)

// OpenTUN creates the TUN interface cfg.Name with IFF_VNET_HDR and
// TUNSETOFFLOAD (TSO4/TSO6/CSUM, plus USO4/USO6 where the kernel accepts
// them), using wireguard-go's tun package for the offload machinery (GSO
// split on read, GRO coalescing on write).
//
// With cfg.Queues > 1 every queue is a separate /dev/net/tun file attached
// with IFF_MULTI_QUEUE. Offloads are a property of the interface, so each
// queue negotiates the same set; queue 0 also carries the link events and
// sets the MTU.
func OpenTUN(cfg TUNConfig) (*TUNDevice, error) {
	n := max(cfg.Queues, 1)
	if n > maxQueues {
		return nil, fmt.Errorf("netio: %d TUN queues exceed the kernel limit of %d", n, maxQueues)
	}
	flags := uint16(unix.IFF_TUN | unix.IFF_NO_PI | unix.IFF_VNET_HDR)
	if n > 1 {
		flags |= unix.IFF_MULTI_QUEUE
	}
	// wireguard-go's MTU() asks by name through a socket created in the
	// calling thread's network namespace, which is wrong when the device
	// was created in another one. Keep a socket from the creating
	// namespace for the queries instead.
	ctl, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("netio: control socket: %w", err)
	}
	d := &TUNDevice{name: cfg.Name, release: func() error { return unix.Close(ctl) }}
	for i := 0; i < n; i++ {
		dev, name, err := openQueue(d.name, flags, i == 0, cfg.MTU)
		if err != nil {
			err = fmt.Errorf("netio: open TUN %q queue %d: %w", cfg.Name, i, err)
			return nil, errors.Join(err, d.Close())
		}
		d.name = name // the first queue resolves a %d pattern
		d.devs = append(d.devs, dev)
		d.queues = append(d.queues, &tunQueue{Device: dev, ctl: ctl, name: name})
	}
	d.offload = TUNOffload{
		VNetHdr: d.devs[0].BatchSize() > 1,
		USO:     probeUSO(d.devs[0]),
		Queues:  n,
	}
	return d, nil
}

func openQueue(name string, flags uint16, first bool, mtu int) (tun.Device, string, error) {
	fd, err := unix.Open(tunClonePath, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", err
	}
	ifr, err := unix.NewIfreq(name)
	if err == nil {
		ifr.SetUint16(flags)
		err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
	}
	if err == nil {
		// The fd goes to the netpoller, which needs it non-blocking
		// first (as tun.CreateTUN does).
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		unix.Close(fd)
		return nil, "", err
	}
	if !first {
		// On failure the fd already belongs to an unreachable os.File
		// inside wireguard-go, whose finalizer closes it; closing it
		// here as well could close a reused descriptor.
		return tun.CreateUnmonitoredTUNFromFD(fd)
	}
	f := os.NewFile(uintptr(fd), tunClonePath)
	dev, err := tun.CreateTUNFromFile(f, mtu)
	if err != nil {
		f.Close()
		return nil, "", err
	}
	if name, err = dev.Name(); err != nil {
		dev.Close()
		return nil, "", err
	}
	return dev, name, nil
}

// tunQueue is one queue: wireguard-go's device with a namespace-correct
// MTU query.
type tunQueue struct {
	tun.Device
	ctl  int // AF_UNIX socket in the device's network namespace
	name string
}

// MTU returns the interface MTU (SIOCGIFMTU, netdevice(7)).
func (q *tunQueue) MTU() (int, error) {
	ifr, err := unix.NewIfreq(q.name)
	if err == nil {
		err = unix.IoctlIfreq(q.ctl, unix.SIOCGIFMTU, ifr)
	}
	if err != nil {
		return 0, fmt.Errorf("netio: MTU of %s: %w", q.name, err)
	}
	return int(int32(ifr.Uint32())), nil
}

// probeUSO reports whether the kernel accepts UDP segmentation offload on
// the device. It repeats the exact TUNSETOFFLOAD call wireguard-go made
// when it opened the queue, so it changes nothing; there is no ioctl to read
// the offload flags back.
func probeUSO(dev tun.Device) bool {
	if dev.BatchSize() <= 1 {
		return false
	}
	sc, err := dev.File().SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	if err := sc.Control(func(fd uintptr) {
		ok = unix.IoctlSetInt(int(fd), unix.TUNSETOFFLOAD, tunTCPOffloads|tunUDPOffloads) == nil
	}); err != nil {
		return false
	}
	return ok
}
