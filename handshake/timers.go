package handshake

import (
	"time"

	"github.com/gmtun/gmtun/ciphers"
)

// Timer constants, WireGuard's values (whitepaper §6.1; wireguard-go
// device/constants.go), used unchanged by gmtun (docs/PROTOCOL.md, "Timers").
const (
	// RekeyAfterTime: the initiator of a keypair starts a new handshake
	// when it sends with a keypair this old (timers_default.go; a test
	// build may shorten it, see timers_short.go).
	RekeyAfterTime = rekeyAfterTime
	// RejectAfterTime: a keypair this old is used neither to send nor to
	// receive.
	RejectAfterTime = rejectAfterTime
	// RekeyAttemptTime: give up retrying a handshake after this long.
	RekeyAttemptTime = 90 * time.Second
	// RekeyTimeout: retransmit an unanswered initiation after this long
	// (plus up to MaxRekeyJitter).
	RekeyTimeout = 5 * time.Second
	// MaxRekeyJitter bounds the random delay added to RekeyTimeout.
	MaxRekeyJitter = 334 * time.Millisecond
	// KeepaliveTimeout: send a keepalive after receiving data if nothing
	// was sent for this long.
	KeepaliveTimeout = 10 * time.Second
	// CookieRefreshTime: the responder's cookie secret and a received
	// cookie live this long.
	CookieRefreshTime = 120 * time.Second
	// HandshakeInitiationRate is the minimum interval between two
	// initiations consumed from one peer (50 per second).
	HandshakeInitiationRate = time.Second / 50
	// ZeroKeysAfter: wipe every keypair of a peer when no handshake has
	// completed for this long (3 × RejectAfterTime).
	ZeroKeysAfter = 3 * RejectAfterTime
	// MaxHandshakeAttempts is RekeyAttemptTime / RekeyTimeout.
	MaxHandshakeAttempts = int(RekeyAttemptTime / RekeyTimeout)
)

// receiveRekeyAge is when the initiator of a keypair rekeys on receive so
// the new keypair is ready before RejectAfterTime (165 s).
const receiveRekeyAge = RejectAfterTime - KeepaliveTimeout - RekeyTimeout

// ShouldRekeyOnSend reports whether sending with a keypair of the given
// age and usage (packets and bytes already sent under its send key) must
// trigger a new handshake: after RekeyAfterTime (initiator of the keypair
// only, which avoids both sides rekeying at once), or after the suite's
// message or byte rekey limits (either side).
func ShouldRekeyOnSend(p ciphers.Params, isInitiator bool, age time.Duration, sentMessages, sentBytes uint64) bool {
	if sentMessages >= p.RekeyAfterMessages {
		return true
	}
	if p.RekeyAfterBytes != 0 && sentBytes >= p.RekeyAfterBytes {
		return true
	}
	return isInitiator && age >= RekeyAfterTime
}

// ShouldRekeyOnReceive reports whether receiving on a keypair of this age
// must trigger a new handshake: the initiator of the keypair rekeys at
// RejectAfterTime − KeepaliveTimeout − RekeyTimeout if the traffic was
// one-way so far.
func ShouldRekeyOnReceive(isInitiator bool, age time.Duration) bool {
	return isInitiator && age >= receiveRekeyAge
}

// SendExpired reports whether a keypair may no longer send: it is
// RejectAfterTime old, or sending one more packet of n bytes would exceed
// the suite's message or byte reject limits.
func SendExpired(p ciphers.Params, age time.Duration, sentMessages, sentBytes uint64, n int) bool {
	if age >= RejectAfterTime || sentMessages >= p.RejectAfterMessages {
		return true
	}
	return p.RejectAfterBytes != 0 && sentBytes+uint64(n) > p.RejectAfterBytes
}

// ReceiveExpired reports whether a keypair may no longer receive: it is
// RejectAfterTime old or its receive key used up its integrity budget.
func ReceiveExpired(p ciphers.Params, age time.Duration, authFailures uint64) bool {
	return age >= RejectAfterTime || AuthFailureExceeded(p, authFailures)
}

// AuthFailureExceeded reports whether a receive key has seen as many
// failed authentications as the suite allows (its integrity limit, as in
// RFC 9001 §6.6: 2^10 for zuc-128's 32-bit tag). The tunnel then discards
// the keypair and starts a new handshake.
func AuthFailureExceeded(p ciphers.Params, authFailures uint64) bool {
	return authFailures >= p.MaxAuthFailures
}

// ShouldZeroKeys reports whether a peer's keypairs must be wiped because no
// handshake completed for ZeroKeysAfter.
func ShouldZeroKeys(lastHandshake, now time.Time) bool {
	return !lastHandshake.IsZero() && now.Sub(lastHandshake) >= ZeroKeysAfter
}

// RetryTimeout returns when to retransmit an initiation: RekeyTimeout plus
// jitter in [0, MaxRekeyJitter), from one random byte pair the caller
// supplies (the package never reads a clock or a global RNG).
func RetryTimeout(jitter uint16) time.Duration {
	return RekeyTimeout + time.Duration(uint64(jitter)*uint64(MaxRekeyJitter)>>16)
}

// GiveUpHandshake reports whether a handshake first attempted at first has
// been retried long enough (RekeyAttemptTime).
func GiveUpHandshake(first, now time.Time) bool {
	return now.Sub(first) >= RekeyAttemptTime
}

// slot is one keypair position.
type slot[T comparable] struct {
	v       T
	ok      bool
	created time.Time
}

// Keypairs is the previous/current/next keypair state machine of one peer
// (wireguard-go device/keypair.go, noise-protocol.go BeginSymmetricSession
// and ReceivedWithKeypair). T is the tunnel's keypair handle (e.g. a
// pointer). Not safe for concurrent use: the tunnel guards it.
//
//   - An initiator installs a confirmed keypair as current; the old current
//     (or an unconfirmed next) becomes previous, and older ones are dropped.
//   - A responder installs an unconfirmed keypair as next; it must not send
//     with it. Receiving on it (Confirm, or ConfirmedByData) promotes it:
//     current → previous, next → current.
//
// Simultaneous initiation therefore ends with each side's own-initiated
// keypair current and the other's in next until data arrives on it; every
// packet is decrypted by the keypair its receiver index names.
type Keypairs[T comparable] struct {
	previous, current, next slot[T]
}

// Current returns the keypair to send with.
func (k *Keypairs[T]) Current() (T, bool) { return k.current.v, k.current.ok }

// Previous returns the keypair kept for late packets.
func (k *Keypairs[T]) Previous() (T, bool) { return k.previous.v, k.previous.ok }

// Next returns the unconfirmed keypair from our latest response.
func (k *Keypairs[T]) Next() (T, bool) { return k.next.v, k.next.ok }

// CurrentCreated returns when the current keypair was installed.
func (k *Keypairs[T]) CurrentCreated() time.Time { return k.current.created }

func (s *slot[T]) take(dropped []T) []T {
	if s.ok {
		dropped = append(dropped, s.v)
	}
	*s = slot[T]{}
	return dropped
}

// Install adds a new keypair from a completed handshake and returns the
// keypairs that fell out (wipe them and free their indices).
func (k *Keypairs[T]) Install(v T, isInitiator bool, now time.Time) (dropped []T) {
	n := slot[T]{v: v, ok: true, created: now}
	if isInitiator {
		if k.next.ok {
			dropped = k.previous.take(dropped)
			dropped = k.current.take(dropped)
			k.previous, k.next = k.next, slot[T]{}
		} else {
			dropped = k.previous.take(dropped)
			k.previous = k.current
		}
		k.current = n
		return dropped
	}
	dropped = k.next.take(dropped)
	dropped = k.previous.take(dropped)
	k.next = n
	return dropped
}

// Confirm promotes v if it is the next keypair (a data packet or a 0x13
// confirmed it) and returns what fell out and whether it was promoted.
func (k *Keypairs[T]) Confirm(v T) (dropped []T, promoted bool) {
	if !k.next.ok || k.next.v != v {
		return nil, false
	}
	dropped = k.previous.take(dropped)
	k.previous = k.current
	k.current, k.next = k.next, slot[T]{}
	return dropped, true
}

// Expire drops every keypair that is RejectAfterTime old at now.
func (k *Keypairs[T]) Expire(now time.Time) (dropped []T) {
	for _, s := range []*slot[T]{&k.previous, &k.current, &k.next} {
		if s.ok && now.Sub(s.created) >= RejectAfterTime {
			dropped = s.take(dropped)
		}
	}
	return dropped
}

// Clear drops every keypair (ZeroKeysAfter, peer removal, key change).
func (k *Keypairs[T]) Clear() (dropped []T) {
	dropped = k.previous.take(dropped)
	dropped = k.current.take(dropped)
	return k.next.take(dropped)
}
