package tunnel

import (
	"io"
	"net/netip"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
)

// Config configures a Device. Only PrivateKey is required.
type Config struct {
	// PrivateKey is the device's static SM2 key.
	PrivateKey *handshake.PrivateKey
	// ID is the local SM2 user identity; empty means handshake.DefaultID.
	ID string
	// Suites are the data suites allowed by default, in preference order;
	// a peer without its own Suites uses these. Empty means
	// ciphers.DefaultSuites (never zuc-128).
	Suites []ciphers.SuiteID
	// ListenPort is the UDP port Up binds; 0 lets the bind choose.
	ListenPort uint16
	// MTU is the largest inner packet; 0 means the MTU of the first TUN
	// queue. Bodies are padded to a multiple of 16 bytes but never beyond
	// the MTU, so an outer datagram carries at most 16 + MTU + tag bytes
	// of UDP payload.
	MTU int
	// Peers is the initial peer set (see Device.SetPeers).
	Peers []PeerConfig
	// Logger receives the device's log lines; nil discards them.
	Logger *Logger
	// Clock is the time source of timers, keypair ages and handshakes;
	// nil means the system clock. Tests pass a fake clock.
	Clock Clock
	// Rand is the randomness source of the handshake (ephemeral keys,
	// cookie secrets); nil means crypto/rand.
	Rand io.Reader
	// MaxBuffers caps the packet buffers of the device (each
	// BufferSize bytes, allocated on demand and then kept for reuse).
	// 0 means DefaultMaxBuffers; smaller values are raised to what the
	// readers need to make progress.
	MaxBuffers int
	// TickInterval is the period of the timer walk; 0 means
	// DefaultTickInterval.
	TickInterval time.Duration
	// RunToCompletion processes each batch on the goroutine that read it,
	// with no hand-off: a TUN reader (or the handshake routine flushing
	// staged packets) seals a peer's packets and sends them under the
	// peer's send lock, and a UDP receiver opens a peer's packets and
	// writes them to the TUN under the peer's receive lock. The encryption
	// and decryption workers and the per-peer sequential routines are then
	// not started. One peer's traffic in one direction takes at most one
	// core at a time; without it (the default), the workers seal and open
	// one peer's batches on several cores in parallel, at the cost of two
	// hand-offs per batch.
	RunToCompletion bool
}

// PeerConfig is one remote gateway.
type PeerConfig struct {
	// Name identifies the peer in logs and Stats; it may change across
	// SetPeers calls without resetting the session.
	Name string
	// PublicKey is the peer's static SM2 key; it identifies the peer.
	PublicKey *handshake.PublicKey
	// ID is the peer's SM2 user identity; empty means handshake.DefaultID.
	ID string
	// PSK is the optional pre-shared key mixed into the key schedule.
	PSK *[32]byte
	// Endpoint is the peer's UDP address; the zero value means unknown
	// until the peer sends an authenticated handshake.
	Endpoint netip.AddrPort
	// AllowedIPs are the inner prefixes routed to the peer and accepted
	// from it. They must be canonical and overlap no other peer's.
	AllowedIPs []netip.Prefix
	// PersistentKeepalive sends a keepalive whenever no authenticated
	// packet went either way for this long; 0 disables it.
	PersistentKeepalive time.Duration
	// Roaming lets the endpoint follow the source address of the latest
	// authenticated packet (data or handshake). When false, a configured
	// Endpoint is never changed, and a peer without one learns its
	// address from authenticated handshake messages only.
	Roaming bool
	// Suites are the suites offered to and accepted from this peer in
	// preference order; empty means Config.Suites.
	Suites []ciphers.SuiteID
}

// Clock is the device's time source.
type Clock interface {
	// Now returns the current time. It must not go backwards by more
	// than the timers can tolerate (a wall clock with a monotonic
	// reading, as time.Now returns, is right).
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Defaults.
const (
	// DefaultMaxBuffers is the default cap on packet buffers
	// (DefaultMaxBuffers × BufferSize ≈ 256 MiB at most, allocated only
	// under load).
	DefaultMaxBuffers = 4096
	// DefaultTickInterval is the default period of the timer walk.
	DefaultTickInterval = 200 * time.Millisecond
)

// Queue sizes, after wireguard-go's queueconstants_default.go. Queues carry
// containers of up to ciphers.MaxBatch packets, except where noted.
const (
	// QueueOutboundSize bounds each peer's ordered send queue and the
	// device's encryption queue.
	QueueOutboundSize = 1024
	// QueueInboundSize bounds each peer's ordered receive queue and the
	// device's decryption queue.
	QueueInboundSize = 1024
	// While no answer came, the same initiation is sent again every
	// FastRetransmitInterval, at most MaxFastRetransmits times, before the
	// fresh initiation of handshake.RetryTimeout: loss recovery within the
	// 5 s rekey timeout, which matters under a flood that drops datagrams.
	FastRetransmitInterval = 1250 * time.Millisecond
	MaxFastRetransmits     = 2
	// QueueHandshakeSize is the number of handshake messages (not
	// containers) waiting for a handshake worker; more are dropped.
	QueueHandshakeSize = 1024
	// MaxStagedPackets is the number of packets a peer holds while it has
	// no usable keypair; older ones are dropped first.
	MaxStagedPackets = 128
)
