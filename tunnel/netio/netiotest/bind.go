package netiotest

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/gmtun/gmtun/tunnel/netio"
)

// ChannelEndpoint is the address of a ChannelBind.
type ChannelEndpoint netip.AddrPort

var _ netio.Endpoint = ChannelEndpoint{}

// ClearSrc does nothing: channel endpoints have no source address.
func (e ChannelEndpoint) ClearSrc() {}

// SrcToString returns "".
func (e ChannelEndpoint) SrcToString() string { return "" }

// DstToString returns the address as ip:port.
func (e ChannelEndpoint) DstToString() string { return netip.AddrPort(e).String() }

// DstToBytes returns the address in binary form (for cookie MACs).
func (e ChannelEndpoint) DstToBytes() []byte {
	b, _ := netip.AddrPort(e).MarshalBinary()
	return b
}

// DstIP returns the address.
func (e ChannelEndpoint) DstIP() netip.Addr { return netip.AddrPort(e).Addr() }

// Addr and Port return the address, as UDPEndpoint's do (the tunnel reads
// a source without formatting it).
func (e ChannelEndpoint) Addr() netip.Addr { return netip.AddrPort(e).Addr() }

// Port returns the port.
func (e ChannelEndpoint) Port() uint16 { return netip.AddrPort(e).Port() }

// SrcIP returns the zero Addr.
func (e ChannelEndpoint) SrcIP() netip.Addr { return netip.Addr{} }

type datagram struct {
	from ChannelEndpoint
	data []byte
}

// ChannelBind is one end of an in-memory datagram link made by
// NewChannelBinds. It implements netio.Bind.
type ChannelBind struct {
	local ChannelEndpoint
	batch int
	rx    chan datagram
	peer  *ChannelBind

	mu     sync.Mutex
	closed chan struct{} // nil while not open
}

var _ netio.Bind = (*ChannelBind)(nil)

// Errors returned by ChannelBind.
var (
	ErrWrongEndpoint = errors.New("netiotest: datagram sent to an unknown endpoint")
	ErrNotOpen       = errors.New("netiotest: bind is not open")
)

// NewChannelBinds returns two connected binds: datagrams one sends to the
// other's address arrive on the other's ReceiveFunc. Their addresses are
// 198.18.0.1:51820 and 198.18.0.2:51820; batch is the BatchSize of both.
func NewChannelBinds(batch int) (a, b *ChannelBind) {
	a = &ChannelBind{local: ChannelEndpoint(netip.MustParseAddrPort("198.18.0.1:51820"))}
	b = &ChannelBind{local: ChannelEndpoint(netip.MustParseAddrPort("198.18.0.2:51820"))}
	for _, x := range []*ChannelBind{a, b} {
		x.batch = max(batch, 1)
		x.rx = make(chan datagram, 8192)
	}
	a.peer, b.peer = b, a
	return a, b
}

// LocalEndpoint returns this bind's own address, the endpoint the other
// bind sends to.
func (c *ChannelBind) LocalEndpoint() ChannelEndpoint { return c.local }

// Open starts the bind. The port argument is ignored; the returned port is
// the bind's fixed one. There is one ReceiveFunc.
func (c *ChannelBind) Open(port uint16) ([]netio.ReceiveFunc, uint16, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed != nil {
		return nil, 0, fmt.Errorf("netiotest: bind already open")
	}
	closed := make(chan struct{})
	c.closed = closed
	return []netio.ReceiveFunc{c.receiveFunc(closed)}, netip.AddrPort(c.local).Port(), nil
}

func (c *ChannelBind) receiveFunc(closed chan struct{}) netio.ReceiveFunc {
	return func(bufs [][]byte, sizes []int, eps []netio.Endpoint) (int, error) {
		limit := min(len(bufs), c.batch)
		n := 0
		for n < limit {
			var d datagram
			if n == 0 {
				select {
				case <-closed:
					return 0, net.ErrClosed
				case d = <-c.rx:
				}
			} else {
				select {
				case d = <-c.rx:
				default:
					return n, nil
				}
			}
			if len(d.data) > len(bufs[n]) {
				continue // truncated datagrams are dropped, as with recvmmsg into a short buffer
			}
			sizes[n] = copy(bufs[n], d.data)
			eps[n] = d.from
			n++
		}
		return n, nil
	}
}

// Close stops the bind: its ReceiveFuncs return net.ErrClosed. It may be
// opened again.
func (c *ChannelBind) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed != nil {
		close(c.closed)
		c.closed = nil
	}
	return nil
}

// SetMark does nothing.
func (c *ChannelBind) SetMark(mark uint32) error { return nil }

// Send copies each buffer into a datagram for the peer bind. ep must be the
// peer's LocalEndpoint. Datagrams are dropped if the peer's queue is full,
// like UDP.
func (c *ChannelBind) Send(bufs [][]byte, ep netio.Endpoint) error {
	c.mu.Lock()
	open := c.closed != nil
	c.mu.Unlock()
	if !open {
		return ErrNotOpen
	}
	if e, ok := ep.(ChannelEndpoint); !ok || e != c.peer.local {
		return ErrWrongEndpoint
	}
	for _, b := range bufs {
		select {
		case c.peer.rx <- datagram{from: c.local, data: append([]byte(nil), b...)}:
		default: // queue full: drop
		}
	}
	return nil
}

// ParseEndpoint parses ip:port into a ChannelEndpoint.
func (c *ChannelBind) ParseEndpoint(s string) (netio.Endpoint, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return nil, fmt.Errorf("netiotest: %w", err)
	}
	return ChannelEndpoint(ap), nil
}

// Queued returns how many datagrams wait in c's receive queue, and its
// capacity (beyond it, Send to c drops, like a full UDP socket).
func (c *ChannelBind) Queued() (n, capacity int) { return len(c.rx), cap(c.rx) }

// BatchSize returns the batch size given to NewChannelBinds.
func (c *ChannelBind) BatchSize() int { return c.batch }
