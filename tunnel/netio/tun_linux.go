package netio

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

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
	if d.offload.VNetHdr {
		for _, q := range d.queues {
			if err := q.(*tunQueue).initOffload(d.offload.USO); err != nil {
				return nil, errors.Join(fmt.Errorf("netio: TUN %q: %w", d.name, err), d.Close())
			}
		}
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
// MTU query and, with IFF_VNET_HDR, gmtun's own batched Read and Write
// (see offload.go): Read drains every packet the kernel has queued (up to
// the batch) with non-blocking read(2)s instead of returning one
// super-packet per call, and Write coalesces a flow's packets with
// writev(2) straight from the callers' buffers instead of copying them
// into the first one.
type tunQueue struct {
	tun.Device
	ctl  int // AF_UNIX socket in the device's network namespace
	name string

	rc  syscall.RawConn // nil without IFF_VNET_HDR: wireguard-go's Read/Write
	uso bool            // the kernel accepted USO: UDP flows coalesce too

	readMu   sync.Mutex // guards the read state below
	rbuf     []byte     // one read(2): virtio header + up to 64 KiB
	pending  int        // bytes of rbuf not yet handed out (0: none)
	readFn   func(fd uintptr) bool
	rdBufs   [][]byte
	rdSizes  []int
	rdOffset int
	rdN      int
	rdErr    error

	writeMu  sync.Mutex // guards the write state below
	co       coalescer
	iovs     [][]byte
	iov      []unix.Iovec
	writeFn  func(fd uintptr) bool
	wrBufs   [][]byte
	wrOffset int
	wrPos    int
	wrTotal  int
	wrErr    error
}

func (q *tunQueue) initOffload(uso bool) error {
	rc, err := q.Device.File().SyscallConn()
	if err != nil {
		return err
	}
	q.rc, q.uso = rc, uso
	q.rbuf = make([]byte, vnetHdrLen+MaxSegmentSize)
	q.iovs = make([][]byte, 0, maxCoalesce)
	q.iov = make([]unix.Iovec, maxCoalesce)
	q.readFn, q.writeFn = q.readLoop, q.writeLoop
	return nil
}

// Read fills bufs with the packets the kernel has queued, splitting
// super-packets into segments; it blocks only while nothing is queued. A
// super-packet that does not fit into the remaining buffers is kept for
// the next call, unless it does not fit into an empty batch either: then
// the segments that fit are returned with tun.ErrTooManySegments and the
// rest is dropped. Malformed virtio headers (a kernel bug) drop the packet.
func (q *tunQueue) Read(bufs [][]byte, sizes []int, offset int) (int, error) {
	if q.rc == nil {
		return q.Device.Read(bufs, sizes, offset)
	}
	q.readMu.Lock()
	defer q.readMu.Unlock()
	q.rdBufs, q.rdSizes, q.rdOffset, q.rdN, q.rdErr = bufs, sizes, offset, 0, nil
	err := q.rc.Read(q.readFn)
	n, rerr := q.rdN, q.rdErr
	q.rdBufs, q.rdSizes, q.rdErr = nil, nil, nil
	if err != nil || errors.Is(rerr, unix.EBADFD) {
		return n, os.ErrClosed
	}
	return n, rerr
}

// readLoop is Read's callback for RawConn.Read (a method value stored
// once, so that a Read allocates nothing): it reads until the batch is
// full or nothing is queued, and reports false (wait for readability)
// only while the batch is empty.
func (q *tunQueue) readLoop(fd uintptr) bool {
	bufs, sizes, offset := q.rdBufs, q.rdSizes, q.rdOffset
	for q.rdN < len(bufs) {
		n := q.rdN
		if q.pending == 0 {
			m, err := unix.Read(int(fd), q.rbuf)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return n > 0
			case err != nil:
				q.rdErr = err
				return true
			case m <= vnetHdrLen:
				continue
			}
			q.pending = m
		}
		k, full := q.split(bufs[n:], sizes[n:], offset, n == 0)
		if full {
			return true
		}
		if k < 0 {
			q.rdN -= k
			q.rdErr = tun.ErrTooManySegments
			return true
		}
		q.rdN += k
	}
	return true
}

// split hands out the pending packet into bufs. It returns the number of
// packets written, or full if they do not fit (and must wait for an empty
// batch); with first set (an empty batch) a packet that does not fit is
// truncated to len(bufs) segments and -len(bufs) is returned.
func (q *tunQueue) split(bufs [][]byte, sizes []int, offset int, first bool) (k int, full bool) {
	var h vnetHdr
	h.decode(q.rbuf)
	pkt := q.rbuf[vnetHdrLen:q.pending]
	segs, hdrLen, err := segmentCount(&h, pkt)
	largest := len(pkt)
	if segs > 1 {
		largest = min(largest, hdrLen+int(h.gsoSize))
	}
	if err != nil || largest > len(bufs[0])-offset {
		q.pending = 0 // malformed, or larger than the caller's buffers
		return 0, false
	}
	if segs > len(bufs) && !first {
		return 0, true
	}
	q.pending = 0
	if h.gsoType&^vnetGSOECN == vnetGSONone {
		out := bufs[0][offset : offset+len(pkt)]
		copy(out, pkt)
		if h.flags&vnetFlagNeedsCsum != 0 && completeChecksum(&h, out) != nil {
			return 0, false
		}
		sizes[0] = len(pkt)
		return 1, false
	}
	if segs > len(bufs) {
		splitInto(&h, pkt, len(bufs), hdrLen, bufs, sizes, offset)
		return -len(bufs), false
	}
	splitInto(&h, pkt, segs, hdrLen, bufs, sizes, offset)
	return segs, false
}

// Write writes the packets bufs[i][offset:], coalescing the segments of
// each TCP (and with USO, UDP) flow into GSO super-packets of up to 64
// segments, one writev(2) each. The bytes in front of each packet
// (offset >= TUNWriteHeadroom) receive its virtio header. It returns the
// bytes written, virtio headers included.
func (q *tunQueue) Write(bufs [][]byte, offset int) (int, error) {
	if q.rc == nil {
		return q.Device.Write(bufs, offset)
	}
	if offset < vnetHdrLen {
		return 0, fmt.Errorf("netio: TUN write offset %d below %d", offset, vnetHdrLen)
	}
	q.writeMu.Lock()
	defer q.writeMu.Unlock()
	q.co.plan(bufs, offset, q.uso)
	q.wrBufs, q.wrOffset, q.wrPos, q.wrTotal, q.wrErr = bufs, offset, 0, 0, nil
	err := q.rc.Write(q.writeFn)
	total, werr := q.wrTotal, q.wrErr
	q.wrBufs, q.wrErr = nil, nil
	if err != nil {
		return total, os.ErrClosed
	}
	return total, werr
}

// writeLoop is Write's callback for RawConn.Write (stored once, like
// readLoop): one writev per planned write, resuming after EAGAIN.
func (q *tunQueue) writeLoop(fd uintptr) bool {
	bufs, offset := q.wrBufs, q.wrOffset
	for q.wrPos < len(q.co.order) {
		i := q.co.order[q.wrPos]
		iovs := append(q.iovs[:0], bufs[i][offset-vnetHdrLen:])
		for m := q.co.next[i]; m >= 0; m = q.co.next[m] {
			iovs = append(iovs, bufs[m][offset+q.co.parsed[m].hdrLen:])
		}
		w, err := writev(int(fd), iovs, q.iov)
		clear(iovs)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return false
		case errors.Is(err, unix.EBADFD):
			q.wrErr = os.ErrClosed
			return true
		case err != nil:
			if q.wrErr == nil {
				q.wrErr = fmt.Errorf("netio: TUN write: %w", err)
			}
		default:
			q.wrTotal += w
		}
		q.wrPos++
	}
	return true
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
