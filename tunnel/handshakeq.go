package tunnel

import (
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// The handshake queues. Every message is screened on the receive goroutine
// (length, header, mac1 and, under load, mac2) before it takes a slot, and
// the workers serve the queues in strict priority: prio, proven, open
// (initiations accepted while not under load, QueueHandshakeSize of them),
// cookie.
const (
	// hsPrioSize: 0x12, 0x13, 0x15 (they complete handshakes already
	// paid for, or unlock ours) and cookie requests from configured
	// peers' endpoints.
	hsPrioSize = 256
	// hsProvenSize: 0x11 with a valid mac2, under load, after the
	// per-source token bucket.
	hsProvenSize = 512
	// hsCookieSize: 0x11 (and 0x12) without a valid mac2 under load,
	// to be answered by a cookie reply only.
	hsCookieSize = 256
)

// Cookie replies are bounded device-wide (GCRA token buckets, no
// per-source state): each answers one received message of at least 164
// bytes with 64 bytes, and at most cookieReplyRate of them leave per
// second (burst cookieReplyBurst), so the device cannot amplify a
// reflected flood in packets or bytes. Requests from the current endpoint
// of a configured peer have a bucket of their own, so a flood from
// spoofed sources cannot starve the peers' cookies (a flood spoofing a
// peer's own endpoint only sends that peer cookie replies).
//
// The device-wide rate is a CPU budget for strangers: a reply costs about
// 15 µs of CPU, most of it the kernel's send path (perf under a 100k/s
// flood, 2-vCPU AMD EPYC, docs/RELIABILITY.md), so 4096/s is about 6 % of
// one core; 16384/s took a quarter of it from the data plane. Only an
// initiator that is neither a peer's known endpoint nor holding a session
// (its authenticated data would move the endpoint) competes with a flood
// for these replies.
const (
	cookieReplyRate      = 1 << 12
	cookieReplyBurst     = 1 << 8
	peerCookieReplyRate  = 1 << 10
	peerCookieReplyBurst = 1 << 6
	// mac2CheckRate bounds the mac2 checks (two HMAC-SM3, ~4 µs) of
	// initiations from sources that are not a configured peer's
	// endpoint, under load. A stranger holds a valid cookie only if it
	// received one of our cookie replies, at most cookieReplyRate a
	// second, and re-sends about once per reply, so twice that rate
	// leaves room for every genuine one while a flood of made-up mac2
	// costs at most ~3 % of a core.
	mac2CheckRate      = 2 * cookieReplyRate
	mac2CheckBurst     = 2 * cookieReplyBurst
	peerMAC2CheckRate  = 2 * peerCookieReplyRate
	peerMAC2CheckBurst = 2 * peerCookieReplyBurst
	// peerEndpointsRefresh: how stale the snapshot of peer endpoints
	// may get while under load.
	peerEndpointsRefresh = 250 * time.Millisecond
	// cookieRetryInterval: a peer re-sends its initiation at once on a
	// valid cookie reply (with mac2 now), at most this often.
	cookieRetryInterval = time.Second
)

// Kinds of queued handshake messages.
const (
	hsKindProcess    uint8 = iota // a handshake message to process
	hsKindCookie                  // answer with a cookie reply only
	hsKindPeerCookie              // the same, charged to the peers' bucket
)

// hsRing is a bounded queue of handshake messages with its free list; a
// fixed set of cap(q) messages circulates, so putting never allocates and
// never blocks.
type hsRing struct {
	q, free chan *hsMessage
}

func newHSRing(n int) hsRing {
	r := hsRing{q: make(chan *hsMessage, n), free: make(chan *hsMessage, n)}
	for range n {
		r.free <- new(hsMessage)
	}
	return r
}

// put copies pkt into the queue, or reports false when it is full.
func (r *hsRing) put(pkt []byte, ep netio.Endpoint, kind uint8) bool {
	select {
	case m := <-r.free:
		m.n = copy(m.buf[:], pkt)
		m.ep, m.kind = ep, kind
		r.q <- m // never blocks: there are only cap(q) messages
		return true
	default:
		return false
	}
}

// gcra is a lock-free token bucket (generic cell rate algorithm) over the
// device's nanosecond clock: tat is the theoretical arrival time.
type gcra struct {
	tat atomic.Int64
}

func (b *gcra) take(now int64, rate, burst int64) bool {
	interval := int64(time.Second) / rate
	for {
		tat := b.tat.Load()
		t := max(tat, now)
		if t-now >= burst*interval {
			return false
		}
		if b.tat.CompareAndSwap(tat, t+interval) {
			return true
		}
	}
}

// empty reports whether take would refuse at now, without taking.
func (b *gcra) empty(now int64, rate, burst int64) bool {
	interval := int64(time.Second) / rate
	return max(b.tat.Load(), now)-now >= burst*interval
}

// hsQueues holds the handshake queues, the cookie-reply buckets and the
// snapshot of peer endpoints.
type hsQueues struct {
	open                  hsRing
	prio, proven, cookie  hsRing
	cookieBkt, peerCookie gcra
	mac2Bkt, peerMAC2     gcra // mac2 checks of strangers, of peers' endpoints
	peerEPs               atomic.Pointer[map[netip.AddrPort]struct{}]
	peerEPsAt             atomic.Int64
}

// initHandshakeQueues makes the queues.
func (d *Device) initHandshakeQueues() {
	d.hsq.open = newHSRing(QueueHandshakeSize)
	d.hsq.prio = newHSRing(hsPrioSize)
	d.hsq.proven = newHSRing(hsProvenSize)
	d.hsq.cookie = newHSRing(hsCookieSize)
}

// closeHandshakeQueues ends the handshake workers; the readers are done.
func (d *Device) closeHandshakeQueues() {
	close(d.hsq.prio.q)
	close(d.hsq.proven.q)
	close(d.hsq.open.q)
	close(d.hsq.cookie.q)
}

// handshakeQueued returns the number of messages waiting in all queues.
func (d *Device) handshakeQueued() int {
	q := &d.hsq
	return len(q.prio.q) + len(q.proven.q) + len(q.open.q) + len(q.cookie.q)
}

// nextHandshake returns the next message in priority order, blocking
// until there is one; ok is false once the queues are closed.
func (d *Device) nextHandshake() (m *hsMessage, r *hsRing, ok bool) {
	q := &d.hsq
	select {
	case m, ok = <-q.prio.q:
		return m, &q.prio, ok
	default:
	}
	select {
	case m, ok = <-q.prio.q:
		return m, &q.prio, ok
	case m, ok = <-q.proven.q:
		return m, &q.proven, ok
	default:
	}
	select {
	case m, ok = <-q.prio.q:
		return m, &q.prio, ok
	case m, ok = <-q.proven.q:
		return m, &q.proven, ok
	case m, ok = <-q.open.q:
		return m, &q.open, ok
	default:
	}
	select {
	case m, ok = <-q.prio.q:
		return m, &q.prio, ok
	case m, ok = <-q.proven.q:
		return m, &q.proven, ok
	case m, ok = <-q.open.q:
		return m, &q.open, ok
	case m, ok = <-q.cookie.q:
		return m, &q.cookie, ok
	}
}

// cookieBucketEmpty reports whether a cookie reply to an initiation from
// a configured peer's endpoint (peerEP) or from any other source would be
// refused by its bound at t.
func (q *hsQueues) cookieBucketEmpty(peerEP bool, t int64) bool {
	if peerEP {
		return q.peerCookie.empty(t, peerCookieReplyRate, peerCookieReplyBurst)
	}
	return q.cookieBkt.empty(t, cookieReplyRate, cookieReplyBurst)
}

// takeMAC2Check takes a token for checking the mac2 of an initiation from
// a configured peer's endpoint (peerEP) or from any other source, under
// load, and reports whether there was one.
func (q *hsQueues) takeMAC2Check(peerEP bool, t int64) bool {
	if peerEP {
		return q.peerMAC2.take(t, peerMAC2CheckRate, peerMAC2CheckBurst)
	}
	return q.mac2Bkt.take(t, mac2CheckRate, mac2CheckBurst)
}

// queueCookieReply queues msg (screened VerdictCookie) for a cookie reply
// within its bound: the peers' bucket and the priority queue for a
// configured peer's endpoint (peerEP), the device-wide bucket and the
// cookie queue for any other source. The message is counted once:
// answered (handshake_cookie), refused by the bound, or no room.
func (d *Device) queueCookieReply(msg []byte, ep netio.Endpoint, peerEP bool, t int64) {
	q := &d.hsq
	r, kind := &q.cookie, hsKindCookie
	var ok bool
	if peerEP {
		r, kind = &q.prio, hsKindPeerCookie
		ok = q.peerCookie.take(t, peerCookieReplyRate, peerCookieReplyBurst)
	} else {
		ok = q.cookieBkt.take(t, cookieReplyRate, cookieReplyBurst)
	}
	switch {
	case !ok:
		d.drop(dropCookieLimited, 1)
	case !r.put(msg, ep, kind):
		d.drop(dropHandshakeQueueFull, 1)
	default:
		d.drop(dropHandshakeCookie, 1)
	}
}

// underLoad reports whether mac2 is required: the open or the proven
// queue is at least 1/8 full (LoadDetector keeps the state for a second).
func (d *Device) underLoad(now time.Time) bool {
	q := &d.hsq
	queued := max(len(q.open.q), len(q.proven.q)*cap(q.open.q)/cap(q.proven.q))
	return d.load.UnderLoad(queued, cap(q.open.q), now)
}

// isPeerEndpoint reports whether src is the current endpoint of a
// configured peer, from a snapshot refreshed at most every
// peerEndpointsRefresh (only while under load: it is asked only then).
func (d *Device) isPeerEndpoint(src netip.AddrPort, t int64) bool {
	q := &d.hsq
	at := q.peerEPsAt.Load()
	if (q.peerEPs.Load() == nil || t-at >= int64(peerEndpointsRefresh)) && q.peerEPsAt.CompareAndSwap(at, t) {
		if d.peersMu.TryRLock() {
			m := make(map[netip.AddrPort]struct{}, len(d.peerList))
			for _, p := range d.peerList {
				if ep := p.getEndpoint(); ep != nil {
					m[unmapAddrPort(endpointAddrPort(ep))] = struct{}{}
				}
			}
			d.peersMu.RUnlock()
			q.peerEPs.Store(&m)
		}
	}
	m := q.peerEPs.Load()
	if m == nil {
		return false
	}
	_, ok := (*m)[unmapAddrPort(src)]
	return ok
}

func unmapAddrPort(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// cookieReplyBuf is a handshake worker's output buffer for cookie
// replies, so that answering a flood allocates nothing.
type cookieReplyBuf struct {
	msg  [handshake.MessageCookieReplySize]byte
	bufs [1][]byte
}

// sendCookieReply answers msg from ep with a cookie reply (its token was
// taken when it was queued), built in out. Failures are counted, not
// logged: the source is usually spoofed.
func (d *Device) sendCookieReply(out *cookieReplyBuf, msg []byte, ep netio.Endpoint) {
	now := d.clock.Now()
	var err error
	out.msg, err = d.local.CreateCookieReply(msg, endpointAddrPort(ep), now)
	if err == nil {
		out.bufs[0] = out.msg[:]
		err = sendResult(d.bind.Send(out.bufs[:], ep))
	}
	if err != nil {
		d.drop(dropSendError, 1)
	}
}

// retryOnCookie re-sends p's initiation at once after a valid cookie
// reply, so the retry carries mac2 instead of waiting for REKEY_TIMEOUT;
// at most once per cookieRetryInterval per peer, and only while a
// handshake of ours is in progress.
func (p *Peer) retryOnCookie(now time.Time) {
	p.hsMu.Lock()
	ok := p.hsInProgress && (p.hsCookieAt.IsZero() || now.Sub(p.hsCookieAt) >= cookieRetryInterval || now.Before(p.hsCookieAt))
	if ok {
		p.hsCookieAt = now
	}
	p.hsMu.Unlock()
	if ok {
		p.initiateHandshake(true)
	}
}
