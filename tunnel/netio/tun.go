package netio

import (
	"errors"
	"sync"

	"golang.zx2c4.com/wireguard/tun"
)

// TUNEvent is a link event of a TUN device (up, down, MTU change), as
// reported by wireguard-go's tun package.
type TUNEvent = tun.Event

// TUNConfig describes the TUN device to open.
type TUNConfig struct {
	// Name is the interface name (at most 15 bytes). A name with a %d
	// verb, such as "gmtun%d", lets the kernel pick the number.
	Name string
	// MTU is set on the interface when it is created.
	MTU int
	// Queues is the number of queues; values above 1 open the device with
	// IFF_MULTI_QUEUE so that one reader per core can run in parallel.
	// The kernel spreads flows over queues by hash (tun_automq), so the
	// packets of one flow stay on one queue and in order.
	Queues int
}

// TUNDevice is an open TUN interface with one or more queues.
type TUNDevice struct {
	closeMu sync.Mutex
	closed  bool
	name    string
	queues  []TUN
	devs    []tun.Device
	offload TUNOffload
	release func() error // frees platform resources after the queues close
}

// Name returns the interface name chosen by the kernel.
func (d *TUNDevice) Name() string { return d.name }

// Queues returns the device's queues. Each queue is an independent TUN with
// its own read and write state; use one reader and one writer per queue.
func (d *TUNDevice) Queues() []TUN { return d.queues }

// Offload reports the negotiated offloads.
func (d *TUNDevice) Offload() TUNOffload { return d.offload }

// Events returns the link events of the device (from queue 0). The channel
// is closed when the device is closed.
func (d *TUNDevice) Events() <-chan TUNEvent { return d.devs[0].Events() }

// Close closes every queue; the kernel removes the interface, together with
// its addresses and routes, when the last queue is closed.
// Close is safe to call more than once and concurrently.
func (d *TUNDevice) Close() error {
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var errs []error
	for i := len(d.devs) - 1; i >= 0; i-- {
		errs = append(errs, d.devs[i].Close())
	}
	if d.release != nil {
		errs = append(errs, d.release())
	}
	return errors.Join(errs...)
}
