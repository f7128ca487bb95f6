package tunnel

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
	"github.com/gmtun/gmtun/tunnel/netio/netiotest"
)

// screenBed is a Device reduced to its handshake receive path (no
// workers, no bind), so that what queueHandshake does is observable, and
// a legitimate peer x of it.
type screenBed struct {
	d     *Device
	clock *fakeClock
	x     *handshake.Local // a configured peer of d
	xp    *handshake.Peer  // d, as x's peer
	dp    *handshake.Peer  // x, as d's peer
	stray [][]byte         // valid-mac1 initiations from a stranger
	xEP   netio.Endpoint
}

func newScreenBed(t testing.TB) *screenBed {
	t.Helper()
	clock := newFakeClock()
	d := &Device{clock: clock, log: (&Logger{}).normalize(), hsInvalid: map[string]uint64{}, epoch: clock.Now()}
	d.indices.table = map[uint32]indexEntry{}
	var err error
	dk, xk := genKey(t), genKey(t)
	if d.local, err = handshake.NewLocal(handshake.Config{PrivateKey: dk, Indices: &d.indices}); err != nil {
		t.Fatal(err)
	}
	d.initHandshakeQueues()
	d.rate = handshake.NewRateLimiter(4096)
	b := &screenBed{d: d, clock: clock, xEP: netiotest.ChannelEndpoint(netip.MustParseAddrPort("198.18.0.1:51820"))}
	d.peerList = []*Peer{{endpoint: b.xEP}} // x's endpoint, as the tunnel knows it
	if b.x, err = handshake.NewLocal(handshake.Config{PrivateKey: xk, Indices: &indexTable{table: map[uint32]indexEntry{}}}); err != nil {
		t.Fatal(err)
	}
	if b.xp, err = b.x.AddPeer(handshake.PeerConfig{PublicKey: dk.Public()}); err != nil {
		t.Fatal(err)
	}
	if b.dp, err = d.local.AddPeer(handshake.PeerConfig{PublicKey: xk.Public()}); err != nil {
		t.Fatal(err)
	}
	stranger, err := handshake.NewLocal(handshake.Config{PrivateKey: genKey(t), Indices: &indexTable{table: map[uint32]indexEntry{}}})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := stranger.AddPeer(handshake.PeerConfig{PublicKey: dk.Public()})
	if err != nil {
		t.Fatal(err)
	}
	for range 16 {
		m, err := stranger.CreateInitiation(sp, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		b.stray = append(b.stray, m[:])
	}
	return b
}

func spoofed(i int) netio.Endpoint {
	return netiotest.ChannelEndpoint(netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 19, byte(i >> 8), byte(i)}), 4000))
}

// overload fills the open queue to the under-load mark with stranger
// initiations (accepted, since the device is not under load yet).
func (b *screenBed) overload(t testing.TB) {
	t.Helper()
	for i := 0; len(b.d.hsq.open.q)*8 < cap(b.d.hsq.open.q); i++ {
		b.d.queueHandshake(b.stray[i%len(b.stray)], spoofed(i))
	}
	if !b.d.underLoad(b.clock.Now()) {
		t.Fatal("not under load")
	}
}

func drops(d *Device, r dropReason) uint64 { return d.drops[r].Load() }

// peerGetsCookie sends an initiation of the configured peer x from its
// endpoint and reports whether it was queued (ahead) for a cookie reply.
func (b *screenBed) peerGetsCookie(t *testing.T) bool {
	t.Helper()
	m, err := b.x.CreateInitiation(b.xp, b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	prio := len(b.d.hsq.prio.q)
	b.d.queueHandshake(m[:], b.xEP)
	return len(b.d.hsq.prio.q) == prio+1
}

// screenDrops names the screening counters (statsString needs a full
// device).
func screenDrops(d *Device) string {
	return fmt.Sprintf("mac1 %d, cookie %d, cookie_limited %d, queue_full %d", drops(d, dropHandshakeMAC1),
		drops(d, dropHandshakeCookie), drops(d, dropCookieLimited), drops(d, dropHandshakeQueueFull))
}

// TestHandshakeScreenAndPriority: the receive path drops bad mac1, sends
// initiations without mac2 under load to the cookie queue only, proven
// initiations ahead of the others, and 0x12/0x13/0x15 to the priority
// queue even under load; the workers take them in that order.
func TestHandshakeScreenAndPriority(t *testing.T) {
	b := newScreenBed(t)
	d := b.d
	now := b.clock.Now()

	bad := append([]byte(nil), b.stray[0]...)
	bad[handshake.MessageInitiationOffsetMAC1] ^= 1
	d.queueHandshake(bad, spoofed(1))
	if drops(d, dropHandshakeMAC1) != 1 || d.handshakeQueued() != 0 {
		t.Fatalf("bad mac1 not dropped on the receive path: %s", statsString(d))
	}
	b.overload(t)
	open := len(d.hsq.open.q)

	// Under load: a stranger's initiation gets a cookie reply only.
	d.queueHandshake(b.stray[1], spoofed(7))
	if len(d.hsq.open.q) != open || len(d.hsq.cookie.q) != 1 || drops(d, dropHandshakeCookie) != 1 {
		t.Fatalf("unproven initiation under load not sent to the cookie queue: open %d→%d cookie %d",
			open, len(d.hsq.open.q), len(d.hsq.cookie.q))
	}
	// The peer's initiation from its endpoint: a cookie reply, ahead.
	m1, err := b.x.CreateInitiation(b.xp, now)
	if err != nil {
		t.Fatal(err)
	}
	d.queueHandshake(m1[:], b.xEP)
	if len(d.hsq.cookie.q) != 1 || len(d.hsq.prio.q) != 1 {
		t.Fatal("peer initiation without mac2 not queued for a cookie reply ahead of the others")
	}
	// With the cookie, its retry is proven by mac2.
	cr, err := d.local.CreateCookieReply(m1[:], endpointAddrPort(b.xEP), now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.x.ConsumeCookieReply(cr[:], now); err != nil {
		t.Fatal(err)
	}
	m1b, err := b.x.CreateInitiation(b.xp, now)
	if err != nil {
		t.Fatal(err)
	}
	d.queueHandshake(m1b[:], b.xEP)
	if len(d.hsq.proven.q) != 1 {
		t.Fatalf("mac2-proven initiation not in the proven queue: %s", statsString(d))
	}
	// A response to our initiation and a confirm: priority, under load.
	di, err := d.local.CreateInitiation(b.dp, now)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := b.x.ConsumeInitiation(di[:], now)
	if err != nil {
		t.Fatal(err)
	}
	d.queueHandshake(rr.Response[:], b.xEP)
	d.queueHandshake(cr[:], b.xEP) // a 0x15 to us
	prio := len(d.hsq.prio.q)
	if prio < 2 {
		t.Fatalf("0x12/0x15 not in the priority queue (prio %d): %s", prio, statsString(d))
	}

	// The workers' order: priority, proven, open, cookie.
	var order []string
	for d.handshakeQueued() > 0 {
		m, r, ok := d.nextHandshake()
		if !ok {
			t.Fatal("closed")
		}
		switch r {
		case &d.hsq.prio:
			order = append(order, "prio")
		case &d.hsq.proven:
			order = append(order, "proven")
		case &d.hsq.open:
			order = append(order, "open")
		case &d.hsq.cookie:
			order = append(order, "cookie")
		}
		r.free <- m
	}
	rank := map[string]int{"prio": 0, "proven": 1, "open": 2, "cookie": 3}
	for i := 1; i < len(order); i++ {
		if rank[order[i]] < rank[order[i-1]] {
			t.Fatalf("served %s after %s (order %v)", order[i], order[i-1], order)
		}
	}
	if order[0] != "prio" || order[prio] != "proven" || order[len(order)-1] != "cookie" {
		t.Fatalf("order %v", order)
	}
}

// TestPriorityQueueNotFloodable: 0x12 with a valid mac1, 0x13 and 0x15
// that name no handshake of ours in progress are dropped on the receive
// path, so a flood of them cannot push the genuine ones out of the
// priority queue.
func TestPriorityQueueNotFloodable(t *testing.T) {
	b := newScreenBed(t)
	d := b.d
	di1, err := d.local.CreateInitiation(b.dp, b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	rr1, err := b.x.ConsumeInitiation(di1[:], b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(time.Second)
	di2, err := d.local.CreateInitiation(b.dp, b.clock.Now()) // di1's index is no longer pending
	if err != nil {
		t.Fatal(err)
	}
	b.overload(t)
	garbage15 := make([]byte, handshake.MessageCookieReplySize)
	garbage15[0], garbage15[1] = handshake.MessageCookieReplyType, handshake.ProtocolVersion
	garbage13 := make([]byte, handshake.MessageConfirmSize)
	garbage13[0], garbage13[1] = handshake.MessageConfirmType, handshake.ProtocolVersion
	for i := range 4 * hsPrioSize {
		d.queueHandshake(rr1.Response[:], spoofed(i)) // valid mac1, stale index
		binary.LittleEndian.PutUint32(garbage15[handshake.MessageCookieReplyOffsetReceiver:], uint32(i))
		d.queueHandshake(garbage15, spoofed(i))
		d.queueHandshake(garbage13, spoofed(i)) // bad mac1
	}
	if n := len(d.hsq.prio.q); n != 0 {
		t.Fatalf("%d messages naming no handshake of ours took priority slots", n)
	}
	if n := d.hsInvalid["unknown_index"]; n != 8*hsPrioSize {
		t.Fatalf("unknown_index counted %d, want %d", n, 8*hsPrioSize)
	}
	rr2, err := b.x.ConsumeInitiation(di2[:], b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	d.queueHandshake(rr2.Response[:], b.xEP)
	if len(d.hsq.prio.q) != 1 {
		t.Fatal("the genuine response was not queued")
	}
}

// TestCookieRepliesBounded: under a flood of valid-mac1 initiations from
// 65536 spoofed sources, cookie replies stay within the device-wide bound
// (no per-source state), and a configured peer's endpoint still gets one.
func TestCookieRepliesBounded(t *testing.T) {
	b := newScreenBed(t)
	d := b.d
	b.overload(t)
	for i := range 1 << 16 {
		d.queueHandshake(b.stray[i%len(b.stray)], spoofed(i))
	}
	granted := uint64(1<<16) - drops(d, dropCookieLimited)
	if granted > cookieReplyBurst { // the fake clock stands still: only the burst
		t.Fatalf("%d cookie replies granted, bound %d", granted, cookieReplyBurst)
	}
	if n := d.rate.GC(b.clock.Now()); n != 0 {
		t.Fatalf("spoofed sources entered the per-source table (%d)", n)
	}
	if !b.peerGetsCookie(t) {
		t.Fatal("the peer's endpoint got no cookie reply under a spoofed flood")
	}
	if handshake.MessageCookieReplySize > handshake.MessageResponseSize {
		t.Fatal("a cookie reply is larger than what it answers")
	}
}

// TestFloodBeyondBoundSkipsMAC1: under load, an initiation without mac2
// that the cookie-reply bound has no token for is dropped before its mac1
// is checked (a bad mac1 is then counted as refused by the bound, not as
// a bad mac1); while tokens remain, mac1 is checked first and a bad one
// spends no token; an initiation carrying a mac2 is always checked.
func TestFloodBeyondBoundSkipsMAC1(t *testing.T) {
	b := newScreenBed(t)
	d := b.d
	b.overload(t)
	badMAC1 := append([]byte(nil), b.stray[0]...)
	badMAC1[handshake.MessageInitiationOffsetMAC1] ^= 1

	// Tokens left: mac1 is checked and the bad one takes no token.
	tat := d.hsq.cookieBkt.tat.Load()
	d.queueHandshake(badMAC1, spoofed(1))
	if drops(d, dropHandshakeMAC1) != 1 || d.hsq.cookieBkt.tat.Load() != tat {
		t.Fatalf("with tokens left, a bad mac1 was not checked first or spent a token: %s", screenDrops(d))
	}
	// Spend the burst (the fake clock stands still).
	for i := range cookieReplyBurst {
		d.queueHandshake(b.stray[i%len(b.stray)], spoofed(i))
	}
	if !d.hsq.cookieBucketEmpty(false, d.since(b.clock.Now())) {
		t.Fatal("the burst did not empty the device-wide bucket")
	}
	mac1, limited := drops(d, dropHandshakeMAC1), drops(d, dropCookieLimited)
	d.queueHandshake(badMAC1, spoofed(2))
	if drops(d, dropHandshakeMAC1) != mac1 || drops(d, dropCookieLimited) != limited+1 {
		t.Fatalf("beyond the bound, a no-mac2 initiation's mac1 was checked: %s", screenDrops(d))
	}
	// A nonzero mac2 is still checked, mac1 first.
	withMAC2 := append([]byte(nil), badMAC1...)
	withMAC2[handshake.MessageInitiationOffsetMAC2] = 1
	d.queueHandshake(withMAC2, spoofed(3))
	if drops(d, dropHandshakeMAC1) != mac1+1 {
		t.Fatalf("an initiation carrying mac2 skipped its mac1 check: %s", screenDrops(d))
	}
	// The configured peer's endpoint has its own bucket: still answered.
	if !b.peerGetsCookie(t) {
		t.Fatal("the peer's endpoint got no cookie reply once the device-wide bucket was empty")
	}
}

// TestMAC2ChecksBounded: under load, strangers' mac2 are checked at most
// mac2CheckBurst times at a standing clock; beyond that a stranger's
// initiation with a made-up mac2 is answered like one without a cookie
// (a cookie reply while the reply bound allows), while a configured
// peer's endpoint keeps having its mac2 checked and proven.
func TestMAC2ChecksBounded(t *testing.T) {
	b := newScreenBed(t)
	d := b.d
	b.overload(t)
	madeUp := append([]byte(nil), b.stray[0]...)
	for i := range 16 {
		madeUp[handshake.MessageInitiationOffsetMAC2+i] = byte(i + 1)
	}
	for i := range mac2CheckBurst {
		d.queueHandshake(madeUp, spoofed(i))
	}
	tat := d.hsq.mac2Bkt.tat.Load()
	d.hsq.cookieBkt.tat.Store(0) // cookie replies available again
	for len(d.hsq.cookie.q) > 0 {
		d.hsq.cookie.free <- <-d.hsq.cookie.q
	}
	d.queueHandshake(madeUp, spoofed(1<<12))
	if d.hsq.mac2Bkt.tat.Load() != tat {
		t.Fatal("a mac2 check was granted beyond the bound")
	}
	if len(d.hsq.cookie.q) != 1 {
		t.Fatalf("beyond the mac2 bound, a stranger's initiation was not answered like one without a cookie (cookie queue %d, limited %d)",
			len(d.hsq.cookie.q), drops(d, dropCookieLimited))
	}
	limited := drops(d, dropCookieLimited)
	for range 2 * cookieReplyBurst {
		d.queueHandshake(madeUp, spoofed(5))
	}
	if drops(d, dropCookieLimited) == limited {
		t.Fatal("beyond both bounds, nothing was refused")
	}
	// The peer's endpoint: its mac2 is still checked, and it is proven.
	m1, err := b.x.CreateInitiation(b.xp, b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	cr, err := d.local.CreateCookieReply(m1[:], endpointAddrPort(b.xEP), b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.x.ConsumeCookieReply(cr[:], b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	m2, err := b.x.CreateInitiation(b.xp, b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	proven := len(d.hsq.proven.q)
	d.queueHandshake(m2[:], b.xEP)
	if len(d.hsq.proven.q) != proven+1 {
		t.Fatalf("the peer's mac2 was not checked once strangers' checks were spent (proven queue %d)", len(d.hsq.proven.q))
	}
}

// BenchmarkClassifyHandshakeDrop is the receive-path CPU per dropped
// flood message, through Device.classify: garbage (bad mac1, not under
// load), and valid-mac1 initiations from spoofed sources under load beyond
// the cookie-reply and mac2-check bounds, with a zero or a made-up mac2. Single-threaded, so ns/op is CPU ns per message.
func BenchmarkClassifyHandshakeDrop(bm *testing.B) {
	b := newScreenBed(bm)
	d := b.d
	garbage := make([]byte, handshake.MessageInitiationSize)
	for i := range garbage {
		garbage[i] = byte(i * 7)
	}
	garbage[0], garbage[1], garbage[2], garbage[3] = handshake.MessageInitiationType, handshake.ProtocolVersion, 0, 0
	eps := make([]netio.Endpoint, 1<<16)
	for i := range eps {
		eps[i] = spoofed(i)
	}
	run := func(name string, msg func(i int) []byte, reason dropReason) {
		bm.Run(name, func(bm *testing.B) {
			before := drops(d, reason)
			var st classifyState
			bm.ReportAllocs()
			i := 0
			for bm.Loop() {
				d.classify(msg(i), eps[i&(len(eps)-1)], &st)
				i++
			}
			if got := drops(d, reason) - before; got != uint64(i) {
				bm.Fatalf("%d of %d messages counted as %s", got, i, dropNames[reason])
			}
		})
	}
	// Not under load: every message costs its mac1.
	run("garbage", func(int) []byte { return garbage }, dropHandshakeMAC1)
	b.overload(bm)
	for range 2 * max(cookieReplyBurst, mac2CheckBurst) { // spend the bursts: what follows is dropped
		d.queueHandshake(b.stray[0], spoofed(0))
		d.queueHandshake(garbage, spoofed(0))
	}
	run("valid-mac1-initiation", func(i int) []byte { return b.stray[i%len(b.stray)] }, dropCookieLimited)
	// A made-up nonzero mac2 would cost two more HMAC-SM3 to check;
	// beyond the bound of strangers' mac2 checks it costs like none.
	withMAC2 := append([]byte(nil), b.stray[2]...)
	for i := range 16 {
		withMAC2[handshake.MessageInitiationOffsetMAC2+i] = byte(i + 1)
	}
	run("valid-mac1-garbage-mac2", func(int) []byte { return withMAC2 }, dropCookieLimited)
	// A cookie reply (no mac1) naming no handshake of ours.
	garbage15 := make([]byte, handshake.MessageCookieReplySize)
	garbage15[0], garbage15[1] = handshake.MessageCookieReplyType, handshake.ProtocolVersion
	run("unknown-index-cookie-reply", func(int) []byte { return garbage15 }, dropHandshakeInvalid)
}

// TestClassifyHandshakeDropDoesNotAllocate: the drop paths the benchmark
// measures allocate nothing.
func TestClassifyHandshakeDropDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race (sync.Pool drops items)")
	}
	b := newScreenBed(t)
	d := b.d
	b.overload(t)
	for range 2 * cookieReplyBurst {
		d.queueHandshake(b.stray[0], spoofed(0))
	}
	garbage := append([]byte(nil), b.stray[0]...)
	garbage[handshake.MessageInitiationOffsetMAC1] ^= 1
	ep := spoofed(3)
	var st classifyState
	garbage15 := make([]byte, handshake.MessageCookieReplySize)
	garbage15[0], garbage15[1] = handshake.MessageCookieReplyType, handshake.ProtocolVersion
	for name, m := range map[string][]byte{"garbage": garbage, "valid mac1": b.stray[1], "unknown-index 0x15": garbage15} {
		if a := testing.AllocsPerRun(500, func() { d.classify(m, ep, &st) }); a != 0 {
			t.Errorf("%s: %v allocations per dropped message", name, a)
		}
	}
}
