// Package netiotest provides in-memory implementations of the netio seams
// (a channel-backed TUN and a pair of channel-backed binds) so the data
// plane can be tested without root, sockets or a kernel TUN device.
//
// Unlike wireguard-go's tuntest and bindtest, both fakes move whole batches
// (up to their configured BatchSize) per call, so batch-handling code in the
// device is exercised. They copy every packet and allocate; they are for
// tests, not benchmarks of the I/O path.
package netiotest

import (
	"errors"
	"os"
	"sync"

	"github.com/gmtun/gmtun/tunnel/netio"
)

// ChannelTUN is an in-memory TUN queue. Packets sent on Outbound are what
// the host routes into the tunnel: the device reads them with Read. Packets
// the device writes with Write appear on Inbound.
type ChannelTUN struct {
	// Outbound carries packets from the host into the device's Read.
	Outbound chan []byte
	// Inbound carries packets the device wrote towards the host.
	Inbound chan []byte

	batch, mtu int
	name       string
	closed     chan struct{}
	closeOnce  sync.Once
}

var _ netio.TUN = (*ChannelTUN)(nil)

var errShortBuffer = errors.New("netiotest: packet larger than read buffer")

// NewChannelTUN returns a TUN with the given batch size (at least 1) and
// MTU. Both channels are buffered with 1024 slots.
func NewChannelTUN(name string, batch, mtu int) *ChannelTUN {
	return &ChannelTUN{
		Outbound: make(chan []byte, 1024),
		Inbound:  make(chan []byte, 1024),
		batch:    max(batch, 1),
		mtu:      mtu,
		name:     name,
		closed:   make(chan struct{}),
	}
}

// Read blocks until at least one packet is queued on Outbound, then takes
// as many more as are immediately available, up to len(bufs) and
// BatchSize. It returns os.ErrClosed after Close.
func (c *ChannelTUN) Read(bufs [][]byte, sizes []int, offset int) (int, error) {
	limit := min(len(bufs), c.batch)
	n := 0
	for n < limit {
		var pkt []byte
		if n == 0 {
			select {
			case <-c.closed:
				return 0, os.ErrClosed
			default:
			}
			select {
			case <-c.closed:
				return 0, os.ErrClosed
			case pkt = <-c.Outbound:
			}
		} else {
			select {
			case pkt = <-c.Outbound:
			default:
				return n, nil
			}
		}
		if len(pkt) > len(bufs[n])-offset {
			return n, errShortBuffer
		}
		sizes[n] = copy(bufs[n][offset:], pkt)
		n++
	}
	return n, nil
}

// Write copies each bufs[i][offset:] onto Inbound and returns the number of
// packets written. It blocks while Inbound is full and returns os.ErrClosed
// after Close.
func (c *ChannelTUN) Write(bufs [][]byte, offset int) (int, error) {
	for i, b := range bufs {
		pkt := append([]byte(nil), b[offset:]...)
		select {
		case <-c.closed:
			return i, os.ErrClosed
		default:
		}
		select {
		case <-c.closed:
			return i, os.ErrClosed
		case c.Inbound <- pkt:
		}
	}
	return len(bufs), nil
}

// BatchSize returns the batch size given to NewChannelTUN.
func (c *ChannelTUN) BatchSize() int { return c.batch }

// MTU returns the MTU given to NewChannelTUN.
func (c *ChannelTUN) MTU() (int, error) { return c.mtu, nil }

// Name returns the name given to NewChannelTUN.
func (c *ChannelTUN) Name() (string, error) { return c.name, nil }

// Close makes pending and later Reads and Writes return os.ErrClosed. The
// channels stay open so a test can still drain Inbound.
func (c *ChannelTUN) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}
