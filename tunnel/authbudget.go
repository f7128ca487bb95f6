package tunnel

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gmtun/gmtun/ciphers"
)

// The forgery budget of a suite with a short tag (zuc-128's 32-bit
// EIA3): every packet whose tag is checked and fails is a forgery attempt
// that would have succeeded with probability 2^-32. Two limits bound the
// attempts (docs/SECURITY.md):
//
//   - per keypair, ciphers.Params.MaxAuthFailures (2^10): the count is
//     reserved before the tags are checked (keypair.reserveAuth), so at
//     most that many forged tags are ever checked under one receive key,
//     however many packets are in flight; the keypair is then discarded
//     and a new handshake starts (rekey and continue);
//   - per peer, across keypairs and rekeys, a token bucket (GCRA) of
//     peerAuthBurst tokens refilled at peerAuthBurst per peerAuthWindow:
//     in any window of length T at most peerAuthBurst·(1 + T/window)
//     failed tags, so at most 2^12 per peer per 365 days and a forgery
//     probability of at most 2^12·2^-32 = 2^-20 per peer and year. When
//     the bucket runs dry the peer's zuc-128 keypairs are discarded and
//     zuc-128 is refused with that peer (handshake.Peer.RefuseSuite)
//     until the bucket holds peerAuthResume tokens again; a session
//     continues on another common suite if the configuration has one.
const (
	peerAuthBurst  = 1 << 11
	peerAuthWindow = 365 * 24 * time.Hour
	peerAuthTau    = int64(peerAuthWindow / peerAuthBurst) // ns per token, ≈ 4 h 17 min
	peerAuthResume = 2 * ciphers.MaxBatch
	// authReserveSpins bounds how long a decryption worker yields for
	// reservations that other workers hold (and will mostly return,
	// authentic packets cost nothing) before it takes what is left.
	authReserveSpins = 4096
)

// shortTag reports whether a suite's tag is short enough for the per-peer
// forgery budget to apply.
func shortTag(p ciphers.Params) bool { return p.TagSize < 16 }

// peerAuthBudget is a peer's forgery budget for short-tag suites. It
// outlives keypairs, and the peer itself when SetPeers replaces it.
type peerAuthBudget struct {
	// tat is the GCRA theoretical arrival time in device nanoseconds:
	// the bucket holds burst − (max(tat, now) − now)/τ tokens. A
	// reservation of k sets it to max(tat, now) + k·τ, a release of k
	// moves it back by k·τ.
	tat atomic.Int64
	// inflight counts reserved tokens not yet settled.
	inflight atomic.Int64
	// failures counts the failed tags charged, trips the times the
	// bucket ran dry, refusedUntil (device ns) the end of the current
	// refusal of short-tag suites.
	failures     atomic.Uint64
	trips        atomic.Uint64
	refusedUntil atomic.Int64
}

// reserve takes up to n tokens at device time now and returns how many it
// took. It yields while the shortage is only other workers' reservations.
func (b *peerAuthBudget) reserve(now int64, n int) int {
	for spin := 0; ; spin++ {
		old := b.tat.Load()
		t := max(old, now)
		avail := (now + peerAuthBurst*peerAuthTau - t) / peerAuthTau
		k := int64(n)
		if avail < k {
			if avail+b.inflight.Load() >= k && spin < authReserveSpins {
				runtime.Gosched()
				continue
			}
			k = max(avail, 0)
		}
		if k == 0 {
			return 0
		}
		if b.tat.CompareAndSwap(old, t+k*peerAuthTau) {
			b.inflight.Add(k)
			return int(k)
		}
	}
}

// settle ends a reservation of k tokens of which failed were spent on
// failed tags; the others go back to the bucket.
func (b *peerAuthBudget) settle(k, failed int) {
	if ok := k - failed; ok > 0 {
		b.tat.Add(-int64(ok) * peerAuthTau)
	}
	b.inflight.Add(-int64(k))
	if failed > 0 {
		b.failures.Add(uint64(failed))
	}
}

// readyAt returns the device time at which the bucket will hold want
// tokens again, if nothing more is spent.
func (b *peerAuthBudget) readyAt(want int64) int64 {
	return b.tat.Load() - (peerAuthBurst-want)*peerAuthTau
}

// epochTime converts device nanoseconds (Device.since) to a time.
func (d *Device) epochTime(ns int64) time.Time { return d.epoch.Add(time.Duration(ns)) }

// reserveAuth reserves up to n checks against the keypair's
// authentication-failure budget and returns how many it reserved: the
// reserved and the failed never exceed MaxAuthFailures together, so at
// most that many forged tags are checked under the receive key. It yields
// while the shortage is only other workers' reservations.
func (kp *keypair) reserveAuth(n int) int {
	limit := kp.params.MaxAuthFailures
	for spin := 0; ; spin++ {
		used := kp.authUsed.Load()
		if used >= limit {
			return 0
		}
		k := uint64(n)
		if avail := limit - used; k > avail {
			if kp.authFailures.Load()+k <= limit && spin < authReserveSpins {
				runtime.Gosched()
				continue
			}
			k = avail
		}
		if kp.authUsed.CompareAndSwap(used, used+k) {
			return int(k)
		}
	}
}

// settleAuth ends a reservation of k checks of which failed failed.
func (kp *keypair) settleAuth(k, failed int) {
	kp.authFailures.Add(uint64(failed))
	kp.authUsed.Add(-uint64(k - failed))
}

// openContainer verifies and decrypts the packets of c within the
// forgery budgets: the first c.verified packets were checked (c.mask says
// which authenticated), the rest were refused unchecked because a budget
// was spent (c.short) or the keypair was already discarded.
func (d *Device) openContainer(c *inContainer) {
	kp := c.kp
	c.verified, c.short, c.peerShort = 0, false, false
	if kp.dead.Load() {
		return
	}
	k := kp.reserveAuth(c.n)
	c.short = k < c.n
	b := kp.peerBudget
	if b != nil && k > 0 {
		pk := b.reserve(d.since(d.clock.Now()), k)
		if pk < k {
			kp.settleAuth(k-pk, 0)
			k, c.short, c.peerShort = pk, true, true
		}
	}
	if k == 0 {
		return
	}
	t := d.openBatches.start()
	c.mask = kp.recv.Open(c.pkts[:k])
	d.openBatches.done(t, k)
	failed := k - c.mask.Count()
	kp.settleAuth(k, failed)
	if b != nil {
		b.settle(k, failed)
	}
	c.verified = k
}

// acquire takes a reference to kp for a container; it fails once kp was
// retired and its last reference dropped (its keys are wiped).
func (kp *keypair) acquire() bool {
	for r := kp.refs.Load(); r > 0; r = kp.refs.Load() {
		if kp.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
	return false
}

// release drops a reference; the last one wipes the keys.
func (kp *keypair) release() {
	if kp.refs.Add(-1) == 0 {
		kp.send.Wipe()
		kp.recv.Wipe()
		kp.wiped.Store(true)
	}
}

// retire drops the peer's own reference once kp left the peer's keypair
// set (replaced, expired, cleared or never installed); the keys are wiped
// when the last container using them is released.
func (kp *keypair) retire() {
	if !kp.retired.Swap(true) {
		kp.release()
	}
}
