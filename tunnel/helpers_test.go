package tunnel

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
	"github.com/gmtun/gmtun/tunnel/netio/netiotest"
)

// fakeClock is a Clock the test steps by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Inner addresses of the two sides.
var (
	addrA4 = netip.MustParseAddr("10.0.1.1")
	addrB4 = netip.MustParseAddr("10.0.2.1")
	addrA6 = netip.MustParseAddr("fd00:1::1")
	addrB6 = netip.MustParseAddr("fd00:2::1")
	netA   = []netip.Prefix{netip.MustParsePrefix("10.0.1.0/24"), netip.MustParsePrefix("fd00:1::/64")}
	netB   = []netip.Prefix{netip.MustParsePrefix("10.0.2.0/24"), netip.MustParsePrefix("fd00:2::/64")}
)

// ipPacket builds a valid IPv4 or IPv6 UDP packet whose payload starts with
// seq (big-endian) followed by payloadLen-8 pattern bytes.
func ipPacket(src, dst netip.Addr, seq uint64, payloadLen int) []byte {
	payloadLen = max(payloadLen, 8)
	udpLen := 8 + payloadLen
	var pkt []byte
	var udp []byte
	if src.Is4() {
		pkt = make([]byte, 20+udpLen)
		pkt[0] = 0x45
		binary.BigEndian.PutUint16(pkt[2:], uint16(len(pkt)))
		pkt[8] = 64
		pkt[9] = 17
		s, d := src.As4(), dst.As4()
		copy(pkt[12:16], s[:])
		copy(pkt[16:20], d[:])
		var sum uint32
		for i := 0; i < 20; i += 2 {
			sum += uint32(binary.BigEndian.Uint16(pkt[i:]))
		}
		for sum > 0xffff {
			sum = sum>>16 + sum&0xffff
		}
		binary.BigEndian.PutUint16(pkt[10:], ^uint16(sum))
		udp = pkt[20:]
	} else {
		pkt = make([]byte, 40+udpLen)
		pkt[0] = 0x60
		binary.BigEndian.PutUint16(pkt[4:], uint16(udpLen))
		pkt[6] = 17
		pkt[7] = 64
		s, d := src.As16(), dst.As16()
		copy(pkt[8:24], s[:])
		copy(pkt[24:40], d[:])
		udp = pkt[40:]
	}
	binary.BigEndian.PutUint16(udp[0:], 40000)
	binary.BigEndian.PutUint16(udp[2:], 40001)
	binary.BigEndian.PutUint16(udp[4:], uint16(udpLen))
	payload := udp[8:]
	binary.BigEndian.PutUint64(payload, seq)
	for i := 8; i < len(payload); i++ {
		payload[i] = byte(seq) ^ byte(i)
	}
	return pkt
}

// packetSeq returns the sequence number ipPacket put in pkt.
func packetSeq(t testing.TB, pkt []byte) uint64 {
	t.Helper()
	off := 28
	if pkt[0]>>4 == 6 {
		off = 48
	}
	if len(pkt) < off+8 {
		t.Fatalf("received packet of %d bytes is too short", len(pkt))
	}
	return binary.BigEndian.Uint64(pkt[off:])
}

// side is one device of a test pair.
type side struct {
	dev  *Device
	tun  *netiotest.ChannelTUN
	bind netio.Bind
	raw  *netiotest.ChannelBind
	key  *handshake.PrivateKey
	peer *Peer // the device's only peer
}

type pairOptions struct {
	suites      []ciphers.SuiteID
	clock       Clock
	wrapA       func(*netiotest.ChannelBind) netio.Bind
	wrapB       func(*netiotest.ChannelBind) netio.Bind
	keepalive   time.Duration
	roamingOff  bool
	noEndpointB bool // B does not know A's endpoint (A must initiate)
	inline      bool // Config.RunToCompletion on both devices
	logf        func(string, ...any)
}

func genKey(t testing.TB) *handshake.PrivateKey {
	t.Helper()
	k, err := handshake.GeneratePrivateKey(crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// newPair builds two devices joined by in-memory binds and brings them up.
// Close is registered as a cleanup.
func newPair(t testing.TB, o pairOptions) (a, b *side) {
	t.Helper()
	rawA, rawB := netiotest.NewChannelBinds(ciphers.MaxBatch)
	a = &side{tun: netiotest.NewChannelTUN("tunA", ciphers.MaxBatch, 1420), raw: rawA, bind: rawA, key: genKey(t)}
	b = &side{tun: netiotest.NewChannelTUN("tunB", ciphers.MaxBatch, 1420), raw: rawB, bind: rawB, key: genKey(t)}
	if o.wrapA != nil {
		a.bind = o.wrapA(rawA)
	}
	if o.wrapB != nil {
		b.bind = o.wrapB(rawB)
	}
	clock := o.clock
	if clock == nil {
		clock = newFakeClock()
	}
	logger := &Logger{}
	if o.logf != nil {
		logger.Verbosef, logger.Errorf = o.logf, o.logf
	} else {
		logger.Errorf = func(f string, args ...any) { t.Logf("ERROR: "+f, args...) }
	}
	mk := func(self, other *side, name string, allowed []netip.Prefix, ep netip.AddrPort) {
		cfg := Config{
			PrivateKey: self.key, Suites: o.suites, Clock: clock, Logger: logger,
			RunToCompletion: o.inline,
			Peers: []PeerConfig{{
				Name: name, PublicKey: other.key.Public(), Endpoint: ep, AllowedIPs: allowed,
				PersistentKeepalive: o.keepalive, Roaming: !o.roamingOff,
			}},
		}
		dev, err := NewDevice(cfg, []netio.TUN{self.tun}, self.bind)
		if err != nil {
			t.Fatal(err)
		}
		if err := dev.Up(); err != nil {
			t.Fatal(err)
		}
		self.dev = dev
		self.peer = dev.peerList[0]
		t.Cleanup(func() {
			if err := dev.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	mk(a, b, "B", netB, netip.AddrPort(rawB.LocalEndpoint()))
	epA := netip.AddrPort(rawA.LocalEndpoint())
	if o.noEndpointB {
		epA = netip.AddrPort{}
	}
	mk(b, a, "A", netA, epA)
	return a, b
}

// send queues packets into from's TUN and checks that to's TUN delivers
// exactly them, in order.
func sendExpect(t testing.TB, from, to *side, pkts [][]byte) {
	t.Helper()
	go func() {
		for _, p := range pkts {
			from.tun.Outbound <- p
		}
	}()
	for i, want := range pkts {
		got := recvPacket(t, to)
		if string(got) != string(want) {
			t.Fatalf("packet %d: got %d bytes (seq %d), want %d bytes (seq %d)",
				i, len(got), packetSeq(t, got), len(want), packetSeq(t, want))
		}
	}
}

func recvPacket(t testing.TB, s *side) []byte {
	t.Helper()
	select {
	case p := <-s.tun.Inbound:
		return p
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for a packet; stats: %s", statsString(s.dev))
		return nil
	}
}

// unexpectedDrops returns the nonzero drops of st that a lossless run
// should not have: all but handshake_late up to one per session the
// peers established (the responder may open the initiator's first data
// before its confirm; more often with run to completion).
func unexpectedDrops(st Stats) map[string]uint64 {
	var sessions uint64
	for _, p := range st.Peers {
		sessions += p.Handshakes
	}
	out := map[string]uint64{}
	for k, v := range st.Drops {
		if v != 0 && (k != "handshake_late" || v > sessions) {
			out[k] = v
		}
	}
	return out
}

func statsString(d *Device) string {
	s := d.Stats()
	var b strings.Builder
	for k, v := range s.Drops {
		if v != 0 {
			fmt.Fprintf(&b, "%s=%d ", k, v)
		}
	}
	for k, v := range s.HandshakeInvalid {
		fmt.Fprintf(&b, "hs:%s=%d ", k, v)
	}
	for _, p := range s.Peers {
		fmt.Fprintf(&b, "[%s ep=%v suite=%v rx=%d/%d tx=%d/%d in=%d out=%d staged=%d]", p.Name, p.Endpoint, p.Suite,
			p.RxPackets, p.RxBytes, p.TxPackets, p.TxBytes, p.InboundQueue, p.OutboundQueue, p.Staged)
	}
	fmt.Fprintf(&b, " buffers=%+v recv_errors=%d", s.Buffers, s.ReceiveErrors)
	return b.String()
}

// waitFor polls cond for up to 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// goroutineLeakCheck fails the test if goroutines started during the test
// are still running at cleanup (after later-registered cleanups such as
// device Close ran).
func goroutineLeakCheck(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Fatalf("goroutine leak: %d before, %d after:\n%s", before, runtime.NumGoroutine(), buf)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// impairedBind wraps a ChannelBind and reorders, drops and duplicates the
// data packets it sends, deterministically from a seed. Handshake messages
// pass unless dropType matches their type.
type impairedBind struct {
	*netiotest.ChannelBind
	mu                 sync.Mutex
	rng                *rand.Rand
	dropP, dupP        float64
	reorder            bool
	dropType           byte
	dropNextOf         byte // drop the next dropNextN datagrams of this type
	dropNextN          int
	tamperNext         int // flip a body bit in the next n data packets
	sentData, droppedN int
	duplicatedN        int
	sent               [256]int // datagrams passed on, by type byte
	// onSend, if set, sees every datagram given to Send, before any
	// impairment (under mu).
	onSend func(buf []byte)
}

func (b *impairedBind) sentOf(typ byte) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sent[typ]
}

func (b *impairedBind) set(f func(b *impairedBind)) {
	b.mu.Lock()
	f(b)
	b.mu.Unlock()
}

func impair(target **impairedBind) func(*netiotest.ChannelBind) netio.Bind {
	return func(c *netiotest.ChannelBind) netio.Bind {
		*target = &impairedBind{ChannelBind: c}
		return *target
	}
}

func (b *impairedBind) Send(bufs [][]byte, ep netio.Endpoint) error {
	b.mu.Lock()
	var out [][]byte
	for _, buf := range bufs {
		if b.onSend != nil {
			b.onSend(buf)
		}
		if len(buf) > 0 && b.dropType != 0 && buf[0] == b.dropType {
			continue
		}
		if len(buf) > 0 && b.dropNextN > 0 && buf[0] == b.dropNextOf {
			b.dropNextN--
			continue
		}
		if len(buf) == 0 || buf[0] != MessageDataType {
			out = append(out, buf)
			continue
		}
		b.sentData++
		if b.tamperNext > 0 && len(buf) > ciphers.HeaderSize {
			b.tamperNext--
			buf = append([]byte(nil), buf...)
			buf[ciphers.HeaderSize] ^= 1
		}
		if b.rng != nil && b.rng.Float64() < b.dropP {
			b.droppedN++
			continue
		}
		out = append(out, buf)
		if b.rng != nil && b.rng.Float64() < b.dupP {
			b.duplicatedN++
			out = append(out, buf)
		}
	}
	for _, o := range out {
		if len(o) > 0 {
			b.sent[o[0]]++
		}
	}
	if b.reorder && b.rng != nil {
		b.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	b.mu.Unlock()
	if len(out) == 0 {
		return nil
	}
	return b.ChannelBind.Send(out, ep)
}
