package tunnel

import (
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/tunnel/netio"
	"github.com/gmtun/gmtun/tunnel/netio/netiotest"
)

// packingBind turns a ChannelBind into a netio.InPlaceBind that packs up
// to perBuf consecutive datagrams into one buffer, the way UDP GRO does,
// so that the device's in-place receive path (shared buffers, ownership
// by the last container) runs without sockets.
type packingBind struct {
	*netiotest.ChannelBind
	perBuf int
	opened bool
}

func (b *packingBind) OpenInPlace(port uint16) ([]netio.InPlaceReceiveFunc, uint16, error) {
	fns, actual, err := b.ChannelBind.Open(port)
	if err != nil {
		return nil, 0, err
	}
	b.opened = true
	return packReceive(fns, b.perBuf), actual, nil
}

// packReceive turns ReceiveFuncs into InPlaceReceiveFuncs that pack up to
// perBuf consecutive datagrams into one buffer (see packingBind).
func packReceive(fns []netio.ReceiveFunc, perBuf int) []netio.InPlaceReceiveFunc {
	var out []netio.InPlaceReceiveFunc
	for _, fn := range fns {
		tmp := make([][]byte, ciphers.MaxBatch)
		for i := range tmp {
			tmp[i] = make([]byte, netio.MaxSegmentSize)
		}
		sizes := make([]int, len(tmp))
		eps := make([]netio.Endpoint, len(tmp))
		out = append(out, func(bufs, pkts [][]byte, owner []int, peps []netio.Endpoint) (int, error) {
			want := min(len(tmp), len(bufs)*perBuf, len(pkts))
			n, err := fn(tmp[:want], sizes, eps)
			if err != nil {
				return 0, err
			}
			k, slot, used := 0, 0, 0
			for i := range n {
				if used > 0 && (used+sizes[i] > len(bufs[slot]) || k%perBuf == 0) {
					slot, used = slot+1, 0
				}
				if slot == len(bufs) || k == len(pkts) {
					panic("packingBind: more datagrams than room") // want bounds it
				}
				copy(bufs[slot][used:], tmp[i][:sizes[i]])
				end := used + sizes[i]
				pkts[k], owner[k], peps[k] = bufs[slot][used:end:end], slot, eps[i]
				used = end
				k++
			}
			return k, nil
		})
	}
	return out
}

// TestInPlaceReceive runs the two-device exchange of every suite with
// both sides receiving through the in-place path, several datagrams per
// buffer.
func TestInPlaceReceive(t *testing.T) {
	for _, suite := range ciphers.Suites {
		t.Run(suite.String(), func(t *testing.T) {
			goroutineLeakCheck(t)
			var pa, pb *packingBind
			a, b := newPair(t, pairOptions{
				suites: []ciphers.SuiteID{suite},
				wrapA:  func(c *netiotest.ChannelBind) netio.Bind { pa = &packingBind{ChannelBind: c, perBuf: 7}; return pa },
				wrapB:  func(c *netiotest.ChannelBind) netio.Bind { pb = &packingBind{ChannelBind: c, perBuf: 64}; return pb },
			})
			if !pa.opened || !pb.opened {
				t.Fatal("the device did not open the in-place receive functions")
			}
			sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 99999, 64)})
			for round := range 3 {
				sendExpect(t, a, b, mixedPackets(addrA4, addrB4, addrA6, addrB6, 300, uint64(round*1000)))
				sendExpect(t, b, a, mixedPackets(addrB4, addrA4, addrB6, addrA6, 300, uint64(round*1000+500)))
			}
			for _, s := range []*side{a, b} {
				if d := unexpectedDrops(s.dev.Stats()); len(d) != 0 {
					t.Errorf("drops %v, want none", d)
				}
			}
		})
	}
}

// TestCopyOut: packets of a reader slot shared between peers each get a
// buffer of their own with the same bytes; other slots' packets are left
// alone.
func TestCopyOut(t *testing.T) {
	d := &Device{buffers: newBufferPool(16)}
	slot := new(buffer)
	for i := range slot {
		slot[i] = byte(i * 7)
	}
	other := new(buffer)
	c1, c2 := new(inContainer), new(inContainer)
	c1.pkts[0], c1.owner[0] = slot[0:100:100], 3
	c1.pkts[1], c1.owner[1] = other[0:50:50], 4
	c2.pkts[0], c2.owner[0] = slot[100:300:300], 3
	c1.n, c2.n = 2, 1
	if !d.copyOut([]*inContainer{c1, c2}, 3) {
		t.Fatal("copyOut reported a closed pool")
	}
	if c1.nbufs != 1 || c2.nbufs != 1 {
		t.Fatalf("owned buffers %d and %d, want 1 each", c1.nbufs, c2.nbufs)
	}
	for _, x := range []struct {
		got  []byte
		want []byte
		buf  *buffer
	}{{c1.pkts[0], slot[0:100], c1.bufs[0]}, {c2.pkts[0], slot[100:300], c2.bufs[0]}} {
		if string(x.got) != string(x.want) || &x.got[0] != &x.buf[0] || &x.got[0] == &x.want[0] {
			t.Fatal("a shared-slot packet was not copied into its own buffer")
		}
	}
	if &c1.pkts[1][0] != &other[0] {
		t.Fatal("a packet of another slot was copied")
	}
	// A closed pool stops the copy and says so.
	d.buffers.close()
	c3 := new(inContainer)
	c3.pkts[0], c3.owner[0], c3.n = slot[0:10:10], 5, 1
	if d.copyOut([]*inContainer{c3}, 5) {
		t.Fatal("copyOut succeeded on a closed pool")
	}
}

// TestEnqueueInboundVectorAllOrNone: containers of one peer from one
// in-place read share a buffer owned by the last of them. A peer closed
// while they are being enqueued must get all of them or none; before,
// the earlier ones could be queued and the owner then released, freeing
// a buffer that queued packets still pointed into.
func TestEnqueueInboundVectorAllOrNone(t *testing.T) {
	d := &Device{buffers: newBufferPool(4), decryptQueue: make(chan *inContainer, 4)}
	p := &Peer{device: d, inbound: make(chan *inContainer, 4)}
	kp := &keypair{peer: p}
	buf := d.buffers.get()
	first, last := new(inContainer), new(inContainer)
	first.kp, first.n, first.pkts[0] = kp, 1, buf[0:100:100]
	last.kp, last.n, last.pkts[0] = kp, 1, buf[100:200:200]
	last.bufs[0], last.nbufs = buf, 1 // the last one owns the shared buffer

	// Hold back the second container (its lock) until a concurrent
	// close of the peer had its chance.
	last.mu.Lock()
	done := make(chan struct{})
	go func() {
		d.enqueueInboundVector([]*inContainer{first, last})
		close(done)
	}()
	waitFor(t, "the first container queued", func() bool { return len(p.inbound) > 0 })
	closed := make(chan struct{})
	go func() {
		p.inMu.Lock()
		p.inClosed = true
		close(p.inbound)
		p.inMu.Unlock()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(100 * time.Millisecond):
	}
	last.mu.Unlock()
	<-done
	<-closed
	var queued []*inContainer
	for c := range p.inbound {
		queued = append(queued, c)
	}
	if st := d.buffers.stats(); len(queued) > 0 && st.free != 0 {
		t.Fatalf("%d container(s) queued while their shared buffer is back in the pool", len(queued))
	}
	if len(queued) != 0 && len(queued) != 2 {
		t.Fatalf("%d of 2 containers queued, want all or none", len(queued))
	}
}
