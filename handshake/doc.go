// Package handshake implements gmtun's handshake: the SM2 key exchange of
// GB/T 32918.3-2016 with mandatory confirmation (S_B, S_A), wrapped in a
// Noise-IK-like envelope (identity hiding, static-static authentication of
// the first message), an SM3-KDF key schedule bound to the transcript and an
// optional pre-shared key, authenticated suite negotiation, mac1/mac2
// cookies against floods, and the timer and keypair-slot rules the tunnel
// drives. docs/PROTOCOL.md specifies the wire format byte for byte;
// testdata/transcript.json is a known-answer run.
//
// The package never touches sockets or clocks: the tunnel passes messages,
// source addresses and `now` in, and gets messages and key material out.
// Randomness comes from Config.Rand and receiver indices from
// Config.Indices, so tests and the KAT run deterministically.
//
// Flow (I = initiator, R = responder; every arrow is one UDP datagram):
//
//	tunnel I                               tunnel R
//	   │ CreateInitiation(peer, now)           │
//	   ├──── 0x11 initiation (188 B) ─────────►│ Screen: length, mac1, [mac2 if under load]
//	   │                                       │   VerdictCookie ─► CreateCookieReply
//	   │◄─── 0x15 cookie reply (64 B) ─────────┤   (only under load, no mac2)
//	   │ ConsumeCookieReply, retry later       │ RateLimiter.Allow (under load)
//	   │                                       │ ConsumeInitiation (EC work)
//	   │◄─── 0x12 response (164 B) ────────────┤   → Keys (unconfirmed: next slot)
//	   │ Screen; ConsumeResponse               │
//	   │   checks S_B, opens suite selection   │
//	   │   → Keys (current slot), confirm      │
//	   ├──── 0x13 confirm (72 B) ─────────────►│ Screen; ConsumeConfirm checks S_A, tag
//	   │                                       │   → same Keys: promote next → current
//	   ├──── 0x14 data ───────────────────────►│ (or: first authentic data packet →
//	   │                                       │  Peer.ConfirmedByData, promote)
//
// Everything received is checked in order of cost: exact length and header,
// then mac1 (HMAC-SM3 keyed by our public key, ~1–3 µs), then the index or
// identity, and only then elliptic-curve work (~190 µs per side). A
// rejected message returns a *Error sentinel (see Reason for log codes) and
// changes no state. Authenticated refusals (no common suite) are reported
// to the initiator as *NoCommonSuiteError with both suite lists.
//
// Concurrency: Local and Peer methods are safe for concurrent use by many
// handshake workers; Keypairs and the Keys values are not synchronized.
//
// Secrets: intermediate keys and shared secrets are zeroed after use where
// Go allows; the one-message SM4-GCM keys and their schedules live on the
// stack and are wiped (ciphers/sm4 SealOnce/OpenOnce). Go cannot wipe
// gmsm's ecdh.PrivateKey (ephemeral scalars), and the garbage collector may
// copy memory; this is a documented limit, as in wireguard-go.
package handshake
