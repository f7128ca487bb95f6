// Package config reads and validates gmtun's TOML configuration.
//
// Load decodes one file strictly: every key must be one of the documented
// keys, spelled with the documented case; values must have the documented
// type and range; secret files must be private to the daemon's user. The
// result is fully typed (netip prefixes and endpoints, parsed SM2 keys,
// ciphers.SuiteID lists, durations) so that the daemon never re-parses
// strings. Every problem is reported as an *Error naming file, line and
// key. docs/OPERATIONS.md is the reference for every key.
//
// A minimal file:
//
//	[interface]
//	name = "gm0"
//	private_key_file = "/etc/gmtun/gm0.key"
//	listen_port = 51900
//	address = ["198.19.0.1/24"]
//
//	[[peer]]
//	name = "site-b"
//	public_key = "…88 base64 characters…"
//	endpoint = "198.18.0.2:51900"
//	allowed_ips = ["198.19.0.2/32"]
package config

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
)

// Defaults applied when a key is absent.
const (
	// DefaultMTU is the tunnel MTU used when interface.mtu is absent or 0:
	// a 1500-byte underlay minus 80 bytes (IPv6 + UDP + gmtun header + tag).
	DefaultMTU = 1420
	// MinMTU is the smallest accepted tunnel MTU, the IPv6 minimum link
	// MTU (RFC 8200 §5), so that IPv6 can always run over the tunnel.
	MinMTU = 1280
	// MaxMTU is the largest accepted tunnel MTU.
	MaxMTU = 65535
	// DefaultID is the SM2 user ID (distinguishing identifier) used for
	// Z = SM3(ENTL ‖ ID ‖ a ‖ b ‖ xG ‖ yG ‖ xA ‖ yA) when none is
	// configured: the default of GM/T 0009-2012 §10.
	DefaultID = "1234567812345678"
	// MaxIDLen is the longest SM2 user ID in bytes: ENTL, its length in
	// bits, is a 16-bit field (GB/T 32918.2-2016 §5.5).
	MaxIDLen = 8191
	// PresharedKeySize is the length of a peer's optional preshared key.
	PresharedKeySize = 32
	// MaxPersistentKeepalive is the largest persistent_keepalive in seconds.
	MaxPersistentKeepalive = 65535
	// maxFileSize bounds the configuration file; maxSecretFileSize bounds
	// key files. Both are far above any legitimate size.
	maxFileSize       = 1 << 20
	maxSecretFileSize = 4096
)

// Config is a validated configuration. All fields are set (defaults
// applied); it is never modified by the package after Load returns.
type Config struct {
	// Path is the file the configuration was loaded from.
	Path string
	// Interface is the [interface] section.
	Interface Interface
	// Peers are the [[peer]] sections in file order.
	Peers []Peer
	// Warnings are problems that do not stop the daemon, such as a
	// world-readable configuration file. Callers should log them.
	Warnings []string
}

// Interface is the local side: the [interface] section.
type Interface struct {
	// Name is the TUN interface name (interface.name, or the config
	// file's base name without ".toml" when absent): 1–15 bytes of
	// printable ASCII without '/', ':' or spaces.
	Name string
	// PrivateKeyFile is the resolved path the private key was read from.
	PrivateKeyFile string
	// PrivateKey is the static SM2 private key.
	PrivateKey *handshake.PrivateKey
	// ListenPort is the UDP port; 0 means an ephemeral port (only allowed
	// when every peer has an endpoint).
	ListenPort uint16
	// Addresses are the interface addresses with their prefix lengths
	// (host bits set, e.g. 198.19.0.1/24).
	Addresses []netip.Prefix
	// MTU is the tunnel MTU, MinMTU..MaxMTU (DefaultMTU when absent).
	MTU int
	// MTUAuto: mtu = "auto"; the daemon derives MTU from the underlay
	// (AutoMTU) when it starts. MTU is DefaultMTU until then.
	MTUAuto bool
	// Hooks are the pre_up, post_up, pre_down and post_down commands.
	Hooks Hooks
	// Suites are the data suites in preference order (default: all,
	// ciphers.Suites order).
	Suites []ciphers.SuiteID
	// ID is the SM2 user ID used for our Z value (default DefaultID).
	ID string
	// LogLevel is the minimum level logged (default slog.LevelInfo).
	LogLevel slog.Level
	// LogFormat is how log lines are written: "text" (key=value, the
	// default) or "json" (one JSON object per line).
	LogFormat string
	// Table selects the routing table for routes to allowed_ips.
	Table RouteTable
	// FwMark is the firewall mark set on the UDP socket (0 = none).
	FwMark uint32
	// FailClosed keeps an unreachable route for every peer's allowed_ips
	// in Table while gmtun runs (behind the routes into the interface), so
	// that while the link is down or gmtun is starting or stopping, traffic
	// for the remote sites is refused instead of leaving in clear through
	// another route. Default true; ignored with table = "off".
	FailClosed bool
	// RunToCompletion makes the data plane process each batch on the
	// goroutine that read it (tunnel.Config.RunToCompletion) instead of
	// handing it to crypto workers; RunToCompletionAuto (the default,
	// run_to_completion = "auto") leaves the choice to the daemon, which
	// makes it from the CPUs it may use (AutoRunToCompletion).
	RunToCompletion     bool
	RunToCompletionAuto bool
	// MetricsListen is where Prometheus metrics are served (metrics.go);
	// the zero value: none.
	MetricsListen MetricsListen
}

// RouteTable says where routes for the peers' allowed_ips are installed.
// The zero value is "auto": the main table.
type RouteTable struct {
	// Off means no routes are installed ("off").
	Off bool
	// ID is an explicit table number; 0 means "auto" unless Off is set.
	ID uint32
}

// Peer is one [[peer]] section.
type Peer struct {
	// Name identifies the peer in logs and `gmtun show`; unique.
	Name string
	// Line is the line of the peer's [[peer]] header, for diagnostics.
	Line int
	// PublicKey is the peer's static SM2 public key; unique, and not ours.
	PublicKey *handshake.PublicKey
	// ID is the peer's SM2 user ID (default DefaultID).
	ID string
	// PresharedKeyFile is the resolved path of the preshared key file, or
	// "" if none is configured.
	PresharedKeyFile string
	// PresharedKey is the optional 32-byte preshared key; nil if none.
	PresharedKey *[PresharedKeySize]byte
	// Endpoint is the peer's UDP address; the zero AddrPort (not
	// IsValid) when unset, in which case only the peer can initiate.
	Endpoint netip.AddrPort
	// EndpointName and EndpointPort are the endpoint when it is given as
	// a DNS name ("gw.example.net:51820"; Endpoint is then unset): the
	// daemon resolves it at start and again later. EndpointLine is the
	// line of the endpoint key, for errors about the name.
	EndpointName string
	EndpointPort uint16
	EndpointLine int
	// AllowedIPs are the inner prefixes routed to and accepted from the
	// peer. They are masked (no host bits) and overlap no other prefix of
	// any peer.
	AllowedIPs []netip.Prefix
	// PersistentKeepalive is the keepalive interval; 0 disables it.
	PersistentKeepalive time.Duration
	// Roaming reports whether the endpoint follows the source address of
	// authenticated packets (default true).
	Roaming bool
	// Suites are the suites offered to and accepted from this peer: the
	// peer's own suites key if set, else Interface.Suites.
	Suites []ciphers.SuiteID
}

// Load reads, decodes and validates the configuration file at path.
// Relative key file paths are resolved against the directory of path; a
// key file path of the form "credential:NAME" names the file NAME in
// $CREDENTIALS_DIRECTORY (systemd LoadCredential=). On failure the error is
// an *Error for the first problem found, in file order.
func Load(path string) (*Config, error) {
	return defaultLoader().load(path)
}
