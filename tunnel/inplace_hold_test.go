package tunnel

import (
	"bytes"
	"sync"
	"testing"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/tunnel/netio"
	"github.com/gmtun/gmtun/tunnel/netio/netiotest"
)

// holdCheckingBind is a packingBind whose receive functions check the part
// of the netio.InPlaceReceiveFunc contract the Linux bind relies on to
// hold GRO messages that do not fit for the next call: a buffer none of
// whose datagrams were returned comes back in the next call at the same
// index, untouched. After each call it marks such buffers (as a held
// message would sit there) and checks the marks in the next call.
type holdCheckingBind struct {
	*netiotest.ChannelBind
	t *testing.T

	mu      sync.Mutex
	checked int // buffers found intact
}

const holdMark = "held message bytes"

func (b *holdCheckingBind) OpenInPlace(port uint16) ([]netio.InPlaceReceiveFunc, uint16, error) {
	fns, actual, err := b.ChannelBind.Open(port)
	if err != nil {
		return nil, 0, err
	}
	var out []netio.InPlaceReceiveFunc
	for _, inner := range packReceive(fns, 64) {
		var marked []int         // buffer indexes marked by the previous call
		var markedAt []*byte     // and their first bytes
		used := make([]bool, 64) // per buffer index, whether a datagram was returned
		out = append(out, func(bufs, pkts [][]byte, owner []int, eps []netio.Endpoint) (int, error) {
			for i, idx := range marked {
				if idx >= len(bufs) || &bufs[idx][0] != markedAt[i] || !bytes.HasPrefix(bufs[idx], []byte(holdMark)) {
					b.t.Errorf("buffer %d without returned datagrams was not passed back untouched", idx)
					continue
				}
				b.mu.Lock()
				b.checked++
				b.mu.Unlock()
			}
			marked, markedAt = marked[:0], markedAt[:0]
			n, err := inner(bufs, pkts, owner, eps)
			if err != nil || n == 0 {
				return n, err
			}
			clear(used)
			for _, o := range owner[:n] {
				used[o] = true
			}
			for idx := range bufs {
				if !used[idx] {
					copy(bufs[idx], holdMark)
					marked, markedAt = append(marked, idx), append(markedAt, &bufs[idx][0])
				}
			}
			return n, nil
		})
	}
	return out, actual, nil
}

// TestInPlaceBuffersPassedBack runs traffic through the device's in-place
// receive path with holdCheckingBind on the receiving side.
func TestInPlaceBuffersPassedBack(t *testing.T) {
	goroutineLeakCheck(t)
	var hb *holdCheckingBind
	a, b := newPair(t, pairOptions{
		suites: []ciphers.SuiteID{ciphers.SM4GCM},
		wrapB: func(c *netiotest.ChannelBind) netio.Bind {
			hb = &holdCheckingBind{ChannelBind: c, t: t}
			return hb
		},
	})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 99999, 64)})
	for round := range 3 {
		sendExpect(t, a, b, mixedPackets(addrA4, addrB4, addrA6, addrB6, 300, uint64(round*1000)))
	}
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if hb.checked == 0 {
		t.Fatal("no call left a buffer without datagrams: nothing was checked")
	}
	t.Logf("%d buffers came back untouched", hb.checked)
}
