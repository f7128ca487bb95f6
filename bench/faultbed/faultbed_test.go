package faultbed

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"math/bits"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gmtun/gmtun/handshake"
)

func listen(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadBuffer(8 << 20)
	t.Cleanup(func() { c.Close() })
	return c
}

func addr(c *net.UDPConn) netip.AddrPort { return c.LocalAddr().(*net.UDPAddr).AddrPort() }

// TestRelayImpairs: over loopback, each datagram is lost, duplicated,
// corrupted in exactly one bit or held back, in the proportions asked, and
// the counters say which.
func TestRelayImpairs(t *testing.T) {
	siteA, siteB := listen(t), listen(t)
	relA, relB := listen(t), listen(t)
	imp := Impairment{Loss: 0.05, Dup: 0.05, Corrupt: 0.05, Reorder: 0.05, ReorderHold: 20 * time.Millisecond}
	r, err := NewRelay(Side{Conns: []*net.UDPConn{relA}, Peer: addr(siteA)}, Side{Conns: []*net.UDPConn{relB}, Peer: addr(siteB)}, imp, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const n = 4000
	for i := range n {
		p := make([]byte, 100)
		p[0] = dataType
		binary.BigEndian.PutUint32(p[4:], uint32(i))
		binary.BigEndian.PutUint32(p[8:], ^uint32(i)) // a flip in the number shows
		copy(p[12:], bytes.Repeat([]byte{0xa5}, 88))
		if _, err := siteA.WriteToUDPAddrPort(p, addr(relA)); err != nil {
			t.Fatal(err)
		}
		if i%64 == 0 {
			time.Sleep(time.Millisecond) // stay within the socket buffers
		}
	}
	var got, flipped, outOfOrder, dups int
	seen := map[uint32]bool{}
	last := -1
	buf := make([]byte, 2048)
	siteB.SetReadDeadline(time.Now().Add(2 * time.Second))
	for {
		m, err := siteB.Read(buf)
		if err != nil {
			break
		}
		got++
		if m != 100 {
			t.Fatalf("a datagram came out with %d bytes", m)
		}
		diff := bits.OnesCount8(buf[0]^dataType) + bits.OnesCount8(buf[1]|buf[2]|buf[3]) +
			bits.OnesCount32(binary.BigEndian.Uint32(buf[4:])^^binary.BigEndian.Uint32(buf[8:]))
		for i := 12; i < m; i++ {
			diff += bits.OnesCount8(buf[i] ^ 0xa5)
		}
		if diff > 1 {
			t.Fatalf("a datagram came out with %d bits changed", diff)
		}
		if diff == 1 {
			flipped++
			continue
		}
		seq := binary.BigEndian.Uint32(buf[4:])
		if seen[seq] {
			dups++
		}
		seen[seq] = true
		if int(seq) < last {
			outOfOrder++
		}
		last = max(last, int(seq))
	}
	c := r.Toward(1)
	t.Logf("relay %+v; received %d, flipped (body or type) %d, duplicates %d, out of order %d", c, got, flipped, dups, outOfOrder)
	if c.Received != n || uint64(got) != c.Forwarded || c.Forwarded != n-c.Lost+c.Duplicated {
		t.Errorf("counts: sent %d, relay %+v, site b got %d", n, c, got)
	}
	for name, v := range map[string]uint64{"lost": c.Lost, "duplicated": c.Duplicated, "corrupted": c.Corrupted, "reordered": c.Reordered} {
		if v < n*3/100 || v > n*7/100 {
			t.Errorf("%s %d of %d, want about 5 %%", name, v, n)
		}
	}
	if uint64(dups) != c.Duplicated || outOfOrder == 0 || uint64(flipped) != c.Corrupted {
		t.Errorf("duplicates %d (relay %d), out of order %d, flipped %d (relay %d)", dups, c.Duplicated, outOfOrder, flipped, c.Corrupted)
	}
	if r.Peer(0) != addr(siteA) {
		t.Errorf("relay learned site a at %v, want %v", r.Peer(0), addr(siteA))
	}
}

// TestRelayBlackholeAndRoam: a blackholed relay forwards nothing; a
// switched active socket sends from the other address.
func TestRelayBlackholeAndRoam(t *testing.T) {
	siteA, siteB := listen(t), listen(t)
	relA, relA2, relB := listen(t), listen(t), listen(t)
	r, err := NewRelay(Side{Conns: []*net.UDPConn{relA, relA2}, Peer: addr(siteA)}, Side{Conns: []*net.UDPConn{relB}, Peer: addr(siteB)}, Impairment{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetBlackhole(true)
	siteB.WriteToUDPAddrPort([]byte("x"), addr(relB))
	siteA.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := siteA.Read(make([]byte, 10)); err == nil {
		t.Fatal("a blackholed relay forwarded a datagram")
	}
	r.SetBlackhole(false)
	r.SetActive(0, 1)
	siteB.WriteToUDPAddrPort([]byte("y"), addr(relB))
	siteA.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, from, err := siteA.ReadFromUDPAddrPort(make([]byte, 10))
	if err != nil || from != addr(relA2) {
		t.Fatalf("after SetActive(0, 1): from %v (%v), want %v", from, err, addr(relA2))
	}
	// The relay counts a datagram after its write returns, which can be
	// after site a has read it: wait for the count.
	c := r.Toward(0)
	for deadline := time.Now().Add(time.Second); c.Forwarded == 0 && time.Now().Before(deadline); c = r.Toward(0) {
		time.Sleep(time.Millisecond)
	}
	if c.Blackholed != 1 || c.Forwarded != 1 {
		t.Errorf("counters %+v", c)
	}
}

func TestSpoofedSourcesDistinct(t *testing.T) {
	seen := make(map[netip.Addr]bool, SpoofedSources)
	hi := netip.MustParsePrefix("198.18.0.0/15")
	for i := range SpoofedSources {
		a := SpoofedSource(i)
		if !hi.Contains(a) || netip.MustParsePrefix("198.18.0.0/20").Contains(a) || netip.MustParsePrefix("198.19.0.0/20").Contains(a) {
			t.Fatalf("source %d is %v: outside 198.18.0.0/15 or in a bed's /20", i, a)
		}
		seen[a] = true
	}
	if len(seen) < 100000 || len(seen) != SpoofedSources {
		t.Errorf("%d distinct sources", len(seen))
	}
}

// TestInitiationsHaveValidMAC1: the flood's initiations pass the target's
// mac1 screen (handshake.Local.Screen), so the target must work on them;
// a flipped bit does not.
func TestInitiationsHaveValidMAC1(t *testing.T) {
	priv, err := handshake.GeneratePrivateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	target, err := handshake.NewLocal(handshake.Config{PrivateKey: priv, Indices: &counterIndices{}})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := MakeInitiations(priv.Public().String(), 4)
	if err != nil {
		t.Fatal(err)
	}
	src := netip.MustParseAddrPort("198.18.20.1:1000")
	now := time.Now()
	for _, m := range msgs {
		if len(m) != handshake.MessageInitiationSize || m[0] != handshake.MessageInitiationType {
			t.Fatalf("initiation of %d bytes, type %#x", len(m), m[0])
		}
		if v := target.Screen(m, src, false, now); v == handshake.VerdictDrop {
			t.Errorf("the target drops the flood's initiation at the mac1 screen: %v", v)
		}
		bad := bytes.Clone(m)
		bad[20] ^= 1
		if v := target.Screen(bad, src, false, now); v != handshake.VerdictDrop {
			t.Errorf("an initiation with a broken mac1 passed the screen: %v", v)
		}
	}
	if bytes.Equal(msgs[0], msgs[1]) {
		t.Error("the initiations are not distinct")
	}
}

func TestBuildHeaders(t *testing.T) {
	p := make([]byte, 28+5)
	buildHeaders(p, [4]byte{198, 18, 20, 1}, [4]byte{198, 18, 2, 2}, 1234, 51820, 5)
	if p[0] != 0x45 || p[9] != 17 || binary.BigEndian.Uint16(p[2:]) != 33 || binary.BigEndian.Uint16(p[24:]) != 13 ||
		binary.BigEndian.Uint16(p[22:]) != 51820 || !bytes.Equal(p[12:16], []byte{198, 18, 20, 1}) {
		t.Errorf("headers % x", p[:28])
	}
}

func TestPayloadDistinct(t *testing.T) {
	if !bytes.Equal(Payload(7), Payload(7)) || bytes.Equal(Payload(7)[8:], Payload(8)[8:]) {
		t.Error("payloads are not a function of their sequence number")
	}
	if binary.BigEndian.Uint64(Payload(99)) != 99 {
		t.Error("payload does not start with its sequence number")
	}
}
