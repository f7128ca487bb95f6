package tunnel

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
)

func mixedPackets(src4, dst4, src6, dst6 netip.Addr, n int, base uint64) [][]byte {
	var pkts [][]byte
	for i := range n {
		seq := base + uint64(i)
		size := []int{8, 100, 500, 1372, 33}[i%5]
		if i%2 == 0 {
			pkts = append(pkts, ipPacket(src4, dst4, seq, size))
		} else {
			pkts = append(pkts, ipPacket(src6, dst6, seq, size))
		}
	}
	return pkts
}

func TestTwoDevicesEverySuite(t *testing.T) {
	for _, suite := range ciphers.Suites {
		t.Run(suite.String(), func(t *testing.T) {
			goroutineLeakCheck(t)
			a, b := newPair(t, pairOptions{suites: []ciphers.SuiteID{suite}})
			// The first packet triggers the handshake.
			sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 99999, 64)})
			sendExpect(t, a, b, mixedPackets(addrA4, addrB4, addrA6, addrB6, 300, 0))
			sendExpect(t, b, a, mixedPackets(addrB4, addrA4, addrB6, addrA6, 300, 1000))
			for _, s := range []*side{a, b} {
				st := s.dev.Stats()
				if len(st.Peers) != 1 || st.Peers[0].Suite != suite {
					t.Fatalf("stats peers = %+v, want one peer on %v", st.Peers, suite)
				}
				if st.Peers[0].RxPackets < 300 || st.Peers[0].TxPackets < 300 || st.Peers[0].LastHandshake.IsZero() {
					t.Errorf("peer stats %+v: want ≥ 300 packets each way and a handshake time", st.Peers[0])
				}
				// Every data packet went through exactly one Seal on
				// one side and one Open on the other (keepalives and
				// the handshake's first packet add a few).
				for _, b := range []BatchStats{st.Seal, st.Open} {
					if b.Packets < 300 || b.Calls == 0 || b.Calls > b.Packets ||
						b.Groups < (b.Packets+KernelLanes-1)/KernelLanes || b.Groups > b.Packets ||
						b.LanesPerGroup() > KernelLanes || b.PacketsPerCall() < 1 ||
						b.Nanos == 0 || b.NanosPerPacket() > float64(time.Second) {
						t.Errorf("batch stats %+v", b)
					}
				}
				if d := unexpectedDrops(st); len(d) != 0 {
					t.Errorf("drops %v, want none (handshake failures: %v)", d, st.HandshakeInvalid)
				}
			}
		})
	}
}

var _ = fmt.Sprint
