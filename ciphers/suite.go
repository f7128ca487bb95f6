// Package ciphers defines gmtun's data suites: how a vector of transport
// packets of one keypair and one direction is sealed or opened in place.
//
// This package is gmtun's internal seam between the tunnel and the cipher
// implementations; it is not a stable API for other programs (those import
// ciphers/sm4, ciphers/zuc and ciphers/ublock). The flow for one batch is:
//
//	tunnel: reserve counters c0..c0+n-1, write 16-byte headers, pad bodies
//	   │
//	   ▼
//	Key.Seal(pkts)  ── one interface call per batch ──►  suite code
//	   │                          (ciphers/internal/{sm4,zuc,ublock}: the
//	   │                           batch on the SIMD kernels' lanes, or the
//	   ▼                           constant-time generic code)
//	pkts[i] = header ‖ ciphertext ‖ tag
//
// and on receive Key.Open(pkts) returns a Mask of the packets whose tag
// verified; only those have been decrypted. docs/PROTOCOL.md, "Data
// packets", specifies each suite's construction byte for byte.
package ciphers

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// HeaderSize is the length of the data-packet header that every suite
// authenticates: type(1) ‖ version(1) ‖ reserved(2) ‖ receiver index(4, LE)
// ‖ counter(8, LE).
const HeaderSize = 16

// CounterOffset is the offset of the little-endian 64-bit packet counter in
// the header. Suites derive each packet's IV or nonce from it.
const CounterOffset = 8

// MaxBatch is the largest number of packets one Seal or Open call accepts.
const MaxBatch = 128

// MaxTagSize is the largest tag any suite appends.
const MaxTagSize = 16

// SuiteID names a data suite on the wire (handshake negotiation).
type SuiteID uint8

// The data suites. The numeric values are wire code points.
const (
	// SM4GCM is AEAD_SM4_GCM (RFC 8998) with a per-direction 12-byte salt.
	SM4GCM SuiteID = 0x01
	// ZUC256 is the ZUC-256 keystream (2018 initialization) with a 128-bit
	// ZUC-256 MAC over header ‖ ciphertext, independent keys.
	ZUC256 SuiteID = 0x02
	// ZUC128 is 3GPP 128-EEA3 with 128-EIA3 (32-bit tag) over header ‖
	// ciphertext, independent keys and an authentication-failure budget.
	ZUC128 SuiteID = 0x03
	// UBlockGCM is GCM (NIST SP 800-38D) over uBlock-128/128 with a
	// per-direction 12-byte salt, built exactly as SM4GCM. It is never a
	// default: only a configuration that names it offers or accepts it.
	UBlockGCM SuiteID = 0x04
)

// Suites lists every suite this build implements, in gmtun's preference
// order.
var Suites = [...]SuiteID{SM4GCM, ZUC256, ZUC128, UBlockGCM}

// DefaultSuites are the suites a peer accepts when its configuration names
// none: the suites with a 128-bit tag on the national standard ciphers
// SM4 and ZUC. zuc-128 (32-bit tag, a forgery budget) and ublock-gcm (a
// competition winner not yet a national standard) are never defaults; a
// configuration must name them.
var DefaultSuites = [...]SuiteID{SM4GCM, ZUC256}

// String returns the suite's configuration name ("sm4-gcm", "zuc-256",
// "zuc-128", "ublock-gcm").
func (id SuiteID) String() string {
	switch id {
	case SM4GCM:
		return "sm4-gcm"
	case ZUC256:
		return "zuc-256"
	case ZUC128:
		return "zuc-128"
	case UBlockGCM:
		return "ublock-gcm"
	}
	return fmt.Sprintf("suite(%#02x)", uint8(id))
}

// ParseSuite returns the suite with the given configuration name.
func ParseSuite(name string) (SuiteID, error) {
	for _, id := range Suites {
		if id.String() == name {
			return id, nil
		}
	}
	return 0, fmt.Errorf("ciphers: unknown suite %q (known: sm4-gcm, zuc-256, zuc-128, ublock-gcm)", name)
}

// Params are a suite's key sizes and usage limits per key (one keypair,
// one direction). docs/PROTOCOL.md justifies each limit.
type Params struct {
	EncKeySize int // bytes of encryption (or AEAD) key
	MACKeySize int // bytes of a separate MAC key; 0 for AEADs
	SaltSize   int // bytes of per-direction IV/nonce salt; 0 if none
	TagSize    int // bytes appended to each packet

	// MaxCounter is one more than the largest counter the IV space
	// admits; Seal and Open refuse counters at or above it.
	MaxCounter uint64
	// RekeyAfterMessages and RejectAfterMessages bound the packets sent
	// under one key: past the first a new handshake starts, at the second
	// the key is no longer used.
	RekeyAfterMessages, RejectAfterMessages uint64
	// RekeyAfterBytes and RejectAfterBytes bound the bytes sealed under one
	// key (0 = no byte limit).
	RekeyAfterBytes, RejectAfterBytes uint64
	// MaxAuthFailures is the number of packets that may fail
	// authentication under one receive key before it is discarded (the
	// integrity limit; it matters for zuc-128's 32-bit tag).
	MaxAuthFailures uint64
}

// Params returns the suite's sizes and limits. It panics on an unknown
// suite (a programming error: IDs come from ParseSuite or negotiation).
func (id SuiteID) Params() Params {
	const (
		wgRekeyMessages  = 1 << 60
		wgRejectMessages = 1<<64 - 1<<13 - 1
	)
	switch id {
	case SM4GCM, UBlockGCM:
		// Both are GCM over a 128-bit block with a 96-bit nonce: the same
		// limits (docs/PROTOCOL.md, sm4-gcm and ublock-gcm).
		return Params{
			EncKeySize: 16, SaltSize: 12, TagSize: 16,
			MaxCounter:         wgRejectMessages,
			RekeyAfterMessages: wgRekeyMessages, RejectAfterMessages: wgRejectMessages,
			RekeyAfterBytes: 1 << 38, RejectAfterBytes: 1 << 39,
			MaxAuthFailures: 1 << 36,
		}
	case ZUC256:
		return Params{
			EncKeySize: 32, MACKeySize: 32, SaltSize: 9, TagSize: 16,
			MaxCounter:         wgRejectMessages,
			RekeyAfterMessages: wgRekeyMessages, RejectAfterMessages: wgRejectMessages,
			MaxAuthFailures: 1 << 36,
		}
	case ZUC128:
		return Params{
			EncKeySize: 16, MACKeySize: 16, SaltSize: 0, TagSize: 4,
			MaxCounter:         1 << 37,
			RekeyAfterMessages: 1 << 36, RejectAfterMessages: 1<<37 - 1<<13 - 1,
			MaxAuthFailures: 1 << 10,
		}
	}
	panic("ciphers: Params of unknown suite " + id.String())
}

// DirectionKeys is the key material of one direction of a keypair, as
// derived by the handshake. Lengths must match the suite's Params.
type DirectionKeys struct {
	Enc  []byte
	MAC  []byte
	Salt []byte
	// Direction is 0 for initiator→responder and 1 for
	// responder→initiator (zuc-128 puts it in the EEA3/EIA3 IV).
	Direction uint8
}

// Key seals or opens batches of packets for one suite, one keypair and one
// direction. A Key holds only its immutable key schedule: it is safe for
// concurrent use by many workers, and Seal/Open never allocate.
//
// Each packet buffer pkts[i] is header ‖ body, where the header is
// HeaderSize bytes and carries the packet's counter at CounterOffset.
// Seal requires cap(pkts[i]) ≥ len(pkts[i]) + TagSize and re-slices
// pkts[i] to header ‖ ciphertext ‖ tag. Open takes header ‖ ciphertext ‖
// tag; for each packet whose tag verifies it decrypts in place, re-slices
// pkts[i] to header ‖ plaintext and sets its bit in the returned Mask.
// Packets that fail are left as they arrived: no plaintext is released.
// Buffers must not overlap one another.
type Key interface {
	// Suite reports which suite the key belongs to.
	Suite() SuiteID
	// Seal encrypts and authenticates every packet of pkts in place. It
	// returns an error, having modified nothing, if len(pkts) > MaxBatch,
	// a buffer is shorter than the header or lacks room for the tag, or a
	// counter is at or above the suite's MaxCounter.
	Seal(pkts [][]byte) error
	// Open verifies and decrypts in place the packets that authenticate.
	// Packets that are too short, carry a counter at or above MaxCounter,
	// or fail verification get a clear bit. len(pkts) must be ≤ MaxBatch.
	Open(pkts [][]byte) Mask
	// Wipe overwrites the key schedule (round keys, GHASH powers, ZUC
	// keys, salt) with zeros. Afterwards Seal fails and Open accepts
	// nothing. The caller guarantees that no Seal or Open of the key runs
	// concurrently with or after Wipe (the tunnel reference-counts its
	// keypairs and wipes the last reference).
	Wipe()
}

// Mask is a set of packet positions 0..MaxBatch-1.
type Mask [MaxBatch / 64]uint64

// Set adds position i to the mask.
func (m *Mask) Set(i int) { m[i>>6] |= 1 << (uint(i) & 63) }

// Has reports whether position i is in the mask.
func (m *Mask) Has(i int) bool { return m[i>>6]&(1<<(uint(i)&63)) != 0 }

// Count returns the number of positions in the mask.
func (m *Mask) Count() int {
	n := 0
	for _, w := range m {
		n += bits.OnesCount64(w)
	}
	return n
}

// Counter returns the counter stored in a packet header. The caller
// guarantees len(pkt) ≥ HeaderSize.
func Counter(pkt []byte) uint64 {
	return binary.LittleEndian.Uint64(pkt[CounterOffset : CounterOffset+8])
}

// Errors returned by Seal and NewKey.
var (
	errBatchTooLarge = errors.New("ciphers: batch larger than MaxBatch")
	errShortPacket   = errors.New("ciphers: packet shorter than the header or without room for the tag")
	errCounterLimit  = errors.New("ciphers: counter at or above the suite's limit")
	errWiped         = errors.New("ciphers: key was wiped")
)

// checkSeal validates a Seal batch before any packet is touched.
func checkSeal(pkts [][]byte, p *Params) error {
	if len(pkts) > MaxBatch {
		return errBatchTooLarge
	}
	for _, pkt := range pkts {
		if len(pkt) < HeaderSize || cap(pkt)-len(pkt) < p.TagSize {
			return errShortPacket
		}
		if Counter(pkt) >= p.MaxCounter {
			return errCounterLimit
		}
	}
	return nil
}

// NewKey returns the Key of suite id for one direction. It copies the key
// material; the caller may wipe k afterwards.
func NewKey(id SuiteID, k DirectionKeys) (Key, error) {
	switch id {
	case SM4GCM, ZUC256, ZUC128, UBlockGCM:
	default:
		return nil, fmt.Errorf("ciphers: unknown suite %#02x", uint8(id))
	}
	p := id.Params()
	if len(k.Enc) != p.EncKeySize || len(k.MAC) != p.MACKeySize || len(k.Salt) != p.SaltSize {
		return nil, fmt.Errorf("ciphers: %s needs %d-byte encryption key, %d-byte MAC key and %d-byte salt; got %d, %d, %d",
			id, p.EncKeySize, p.MACKeySize, p.SaltSize, len(k.Enc), len(k.MAC), len(k.Salt))
	}
	if k.Direction > 1 {
		return nil, fmt.Errorf("ciphers: direction must be 0 or 1, got %d", k.Direction)
	}
	switch id {
	case SM4GCM:
		return newSM4GCMKey(k)
	case ZUC256:
		return newZUC256Key(k)
	case UBlockGCM:
		return newUBlockGCMKey(k)
	default:
		return newZUC128Key(k)
	}
}
