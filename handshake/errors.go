package handshake

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gmtun/gmtun/ciphers"
)

// Error is a handshake failure with a stable reason code for logs and
// metrics. The package's sentinel errors are *Error values; functions wrap
// them with detail, so test with errors.Is and read the code with
// errors.As or Reason.
type Error struct {
	// Code is a short snake_case reason, stable across releases
	// (e.g. "mac1_bad", "stale_timestamp").
	Code string
	msg  string
}

func (e *Error) Error() string { return "handshake: " + e.msg }

// Reason returns the reason code of the first *Error in err's chain, or
// "other" if there is none.
func Reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return "other"
}

// Sentinel errors returned by the message processors. None of them is
// returned after any state was changed.
var (
	// ErrMessageLength: the message is not exactly the size of its type.
	ErrMessageLength = &Error{"length", "message has the wrong length for its type"}
	// ErrMessageHeader: wrong type, version or non-zero reserved bytes.
	ErrMessageHeader = &Error{"header", "bad message type, version or reserved bytes"}
	// ErrMAC1: mac1 does not verify (sender does not know our public key,
	// or the message was corrupted or reflected).
	ErrMAC1 = &Error{"mac1_bad", "invalid mac1"}
	// ErrInvalidPoint: an ephemeral public key is off the curve, has a
	// coordinate ≥ p or encodes the point at infinity (GB/T 32918.3 §6.1 B5/A6).
	ErrInvalidPoint = &Error{"bad_point", "ephemeral public key is not a valid curve point"}
	// ErrDecrypt: an encrypted handshake field did not authenticate.
	ErrDecrypt = &Error{"decrypt", "encrypted field failed authentication"}
	// ErrUnknownPeer: the initiator's identity is not a configured peer.
	ErrUnknownPeer = &Error{"unknown_static", "initiator is not a configured peer"}
	// ErrStaleTimestamp: the initiation's timestamp is not newer than the
	// last accepted one from that peer (replayed or reordered initiation).
	ErrStaleTimestamp = &Error{"stale_timestamp", "initiation timestamp not newer than the last accepted one (replay)"}
	// ErrInitiationFlood: the peer's initiations arrive faster than
	// HandshakeInitiationRate.
	ErrInitiationFlood = &Error{"initiation_flood", "initiations from this peer arrive too fast"}
	// ErrMalformedPayload: a decrypted field breaks its layout (bad offer,
	// reserved bits set, unknown status).
	ErrMalformedPayload = &Error{"malformed", "decrypted handshake payload is malformed"}
	// ErrUnknownIndex: the receiver index matches no pending handshake.
	ErrUnknownIndex = &Error{"unknown_index", "receiver index matches no pending handshake"}
	// ErrReflection: the peer echoed our own ephemeral key.
	ErrReflection = &Error{"reflection", "peer ephemeral equals our own (reflected message)"}
	// ErrConfirmMismatch: S_B or S_A (GB/T 32918.3 A9/B10) differ; the
	// peer computed another shared point — usually a wrong ID or key.
	ErrConfirmMismatch = &Error{"confirm_mismatch", "key confirmation failed: check the peer's ID and public key"}
	// ErrConfirmTag: S_A matched but the transcript tag did not (PSK or
	// transcript mismatch, or tampering).
	ErrConfirmTag = &Error{"confirm_tag", "confirmation tag mismatch: check the pre-shared key"}
	// ErrSelectDecrypt: the responder's suite selection did not
	// authenticate although S_B matched: the pre-shared keys differ, or the
	// response was tampered with.
	ErrSelectDecrypt = &Error{"select_decrypt", "suite selection failed authentication: check the pre-shared key"}
	// ErrSuiteNotOffered: the responder selected a suite we did not offer.
	ErrSuiteNotOffered = &Error{"suite_not_offered", "responder selected a suite that was not offered"}
	// ErrNoCommonSuite: authenticated refusal; see NoCommonSuiteError.
	ErrNoCommonSuite = &Error{"no_common_suite", "no common suite"}
	// ErrSuitesRefused: every suite allowed with the peer is refused for
	// now (Peer.RefuseSuite), so no initiation can be offered.
	ErrSuitesRefused = &Error{"suites_refused", "every allowed suite is refused for now (forgery budget back-off)"}
	// ErrHandshakeExpired: the pending handshake is too old to complete.
	ErrHandshakeExpired = &Error{"expired", "pending handshake expired"}
	// ErrKeyExchange: the SM2 key exchange produced the point at infinity
	// or failed otherwise (GB/T 32918.3 B6/A7).
	ErrKeyExchange = &Error{"kex_failed", "SM2 key exchange failed"}
	// ErrCookieReply: a cookie reply did not authenticate.
	ErrCookieReply = &Error{"cookie_bad", "cookie reply failed authentication"}
)

// NoCommonSuiteError is the authenticated refusal of a responder that
// allows none of the offered suites. errors.Is(err, ErrNoCommonSuite) holds.
type NoCommonSuiteError struct {
	// Offered is what we offered, in our preference order.
	Offered []ciphers.SuiteID
	// Allowed is what the responder allows for us, as it told us under
	// the handshake keys.
	Allowed []ciphers.SuiteID
}

func (e *NoCommonSuiteError) Error() string {
	return fmt.Sprintf("handshake: peer refused: no common suite (we offered %s; peer allows %s)",
		suiteList(e.Offered), suiteList(e.Allowed))
}

// Is makes errors.Is(err, ErrNoCommonSuite) true.
func (e *NoCommonSuiteError) Is(target error) bool { return target == ErrNoCommonSuite }

// Unwrap returns ErrNoCommonSuite, so Reason reports its code.
func (e *NoCommonSuiteError) Unwrap() error { return ErrNoCommonSuite }

// Hint says what an operator should check after a handshake failure that
// a configuration mismatch between the two sides causes, or "" for the
// other failures (those are attacks, corruption or races, counted but not
// explained). The daemon logs it with the peer's name.
func Hint(err error) string {
	switch Reason(err) {
	case ErrConfirmMismatch.Code:
		return "the two sides computed different keys: check that this side's [[peer]] public_key and id are the peer's public key and its [interface] id, and that the peer's [[peer]] entry for this side has our public key and id"
	case ErrSelectDecrypt.Code, ErrConfirmTag.Code:
		return "the pre-shared keys differ: both sides' preshared_key_file must hold the same key, or neither side may set one"
	case ErrNoCommonSuite.Code:
		return "the suites allowed with this peer on the two sides have none in common: give both sides' suites keys at least one common suite"
	}
	return ""
}

func suiteList(s []ciphers.SuiteID) string {
	if len(s) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, id := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(id.String())
	}
	return b.String()
}
