package tunnel

import (
	"encoding/binary"
	"testing"

	"github.com/gmtun/gmtun/ciphers"
)

// FuzzReceive sends arbitrary datagrams to a device with an established
// session: data packets (optionally carrying the live receiver index, so
// the input reaches the suite), handshake messages of every type and
// length, and junk. A datagram from the network must never panic the
// device or stop it; after the inputs, traffic must still flow.
func FuzzReceive(f *testing.F) {
	f.Add([]byte{}, true)
	f.Add(make([]byte, 15), true)
	f.Add(rawData(0, 0, 32+16), true)
	f.Add(rawData(0, 1<<40, 1+16), true)
	f.Add(rawData(0, ^uint64(0), 32+16), true)
	for _, typ := range []byte{0x11, 0x12, 0x13, 0x15} {
		msg := make([]byte, handshakeSize(typ))
		msg[0], msg[1] = typ, ProtocolVersion
		f.Add(msg, false)
		f.Add(msg[:len(msg)-1], false)
	}

	a, b := newPair(f, pairOptions{suites: []ciphers.SuiteID{ciphers.SM4GCM}})
	sendExpect(f, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 64)})
	index := a.peer.sendKP.Load().remoteIndex
	seq := uint64(2)

	f.Fuzz(func(t *testing.T, pkt []byte, liveIndex bool) {
		if liveIndex && len(pkt) >= ciphers.HeaderSize && pkt[0] == MessageDataType {
			binary.LittleEndian.PutUint32(pkt[4:8], index)
		}
		if err := a.raw.Send([][]byte{pkt}, b.raw.LocalEndpoint()); err != nil {
			t.Fatal(err)
		}
		// Every so often, real traffic must still get through (a forged
		// handshake may legitimately replace the session, so send from
		// the side whose keys the fuzzer cannot touch).
		if seq%64 == 0 {
			sendExpect(t, b, a, [][]byte{ipPacket(addrB4, addrA4, seq, 100)})
		}
		seq++
	})
}
