package config

// KeyDoc documents one configuration key. Keys is the single source of
// the key tables: docs/OPERATIONS.md's tables must hold exactly
// KeyDoc.MarkdownRow for every key (TestKeyDocsMatchOperations), and
// gmtun.toml(5) is generated from it (`gmtun man 5`), so neither can drift
// from the schema the loader enforces (TestKeyDocsMatchSchema).
type KeyDoc struct {
	// Section is "interface" or "peer".
	Section string
	// Name is the key exactly as it must be spelled.
	Name string
	// Type is the TOML type in words ("string", "array of strings", …).
	Type string
	// Default is what an absent key means, or "required" (Markdown).
	Default string
	// Doc is what the key does and how it is validated: one paragraph of
	// Markdown (inline code, links) without a '|'.
	Doc string
}

// Keys documents every configuration key, [interface] keys first; within
// a section the order is the documentation's (related keys together).
var Keys = []KeyDoc{
	{Section: "interface", Name: "name", Type: "string", Default: "the file name without `.toml`",
		Doc: "Linux interface name: 1–15 bytes of printable ASCII, no `/`, `:` or space, not `.` or `..`"},
	{Section: "interface", Name: "private_key_file", Type: "string", Default: "required",
		Doc: "path of a file written by `gmtun genkey` (one base64 line) or a PEM SM2 private key (PKCS#8 from `openssl genpkey` or `gmtun genkey --pem`, or SEC 1); see [Key files](#key-files)"},
	{Section: "interface", Name: "listen_port", Type: "integer", Default: "none: an ephemeral port",
		Doc: "1..65535. Required when any peer has no `endpoint` (that peer must be able to reach this side)"},
	{Section: "interface", Name: "address", Type: "array of strings", Default: "`[]`",
		Doc: "CIDR prefixes in canonical form (`198.19.0.1/24`, `2001:db8::1/64`; lower-case IPv6, no IPv4-mapped IPv6); the address is the interface's own and may have host bits; unicast only; no address twice"},
	{Section: "interface", Name: "mtu", Type: "integer or string", Default: "1420",
		Doc: "1280..65535, 0 for the default, or `\"auto\"`. 1280 is the IPv6 minimum link MTU; 1420 is a 1500-byte underlay minus 80 bytes of IPv6, UDP and gmtun overhead. `\"auto\"`: at start, the MTU of the route to the peers' endpoints (the smallest; the default route's device without endpoints) minus the IP header (20 or 40 bytes) and 40 bytes of UDP, gmtun header and the largest tag, at least 1280; see [Automatic MTU](#automatic-mtu)"},
	{Section: "interface", Name: "pre_up", Type: "array of arrays of strings", Default: "`[]`",
		Doc: "commands run before the TUN interface is created, in order, each an argv list without a shell (`[[\"/usr/sbin/nft\", \"-f\", \"/etc/gmtun/%i.nft\"]]`); the program an absolute path; `%i` is replaced by the interface name; at most 32; each must finish within 10 s. A failure aborts the start; see [Hooks](#hooks)"},
	{Section: "interface", Name: "post_up", Type: "array of arrays of strings", Default: "`[]`",
		Doc: "commands run once the interface is up and routed, before `READY=1`; same form as `pre_up`. A failure aborts the start and undoes it"},
	{Section: "interface", Name: "pre_down", Type: "array of arrays of strings", Default: "`[]`",
		Doc: "commands run on a clean stop (after a successful start) before the routes and addresses are removed; same form as `pre_up`; a failure is logged"},
	{Section: "interface", Name: "post_down", Type: "array of arrays of strings", Default: "`[]`",
		Doc: "commands run on a clean stop once the interface is gone; same form as `pre_up`; a failure is logged"},
	{Section: "interface", Name: "suites", Type: "array of strings", Default: "`[\"sm4-gcm\", \"zuc-256\"]`",
		Doc: "data suites in preference order; at least one; each known (`sm4-gcm`, `zuc-256`, `zuc-128`, `ublock-gcm`, lower case); no repeats. `zuc-128` (32-bit tag) and `ublock-gcm` are accepted only where a configuration names them"},
	{Section: "interface", Name: "id", Type: "string", Default: "`\"1234567812345678\"`",
		Doc: "this side's SM2 user ID (the default of GM/T 0009-2012); 1..8191 bytes. The peers' configurations must name the same value in their `[[peer]] id`"},
	{Section: "interface", Name: "log_level", Type: "string", Default: "`\"info\"`",
		Doc: "`\"debug\"`, `\"info\"`, `\"warn\"` or `\"error\"`"},
	{Section: "interface", Name: "log_format", Type: "string", Default: "`\"text\"`",
		Doc: "`\"text\"` (key=value lines) or `\"json\"` (one JSON object per line, for journald or Loki); see [Logging](#logging)"},
	{Section: "interface", Name: "table", Type: "string or integer", Default: "`\"auto\"`",
		Doc: "where routes to the peers' `allowed_ips` go: `\"auto\"` (main table), `\"off\"` (no routes), or a table number 1..4294967295 other than 255 (`local`)"},
	{Section: "interface", Name: "fwmark", Type: "integer", Default: "0 (none)",
		Doc: "0..4294967295, the firewall mark of the UDP socket"},
	{Section: "interface", Name: "fail_closed", Type: "boolean", Default: "`true`",
		Doc: "keep `unreachable` routes for every peer's `allowed_ips` while the tunnel cannot carry them (link down, starting, stopping, crashed), so that traffic for the remote sites never leaves in clear through another route; removed on a clean stop; ignored with `table = \"off\"` (see `gmtun up`)"},
	{Section: "interface", Name: "run_to_completion", Type: "boolean or string", Default: "`\"auto\"`",
		Doc: "`true`: each batch of packets is sealed and sent, or opened and delivered, by the goroutine that read it, with no hand-off; one peer's traffic in one direction then runs on one core at a time. `false`: batches go to crypto workers on every core, so one peer can use several, at the cost of two hand-offs per batch. `\"auto\"`: `true` when the daemon may run on at most 2 CPUs (its affinity, as `taskset` or systemd's `CPUAffinity=` set it), `false` otherwise: on 2 vCPUs `true` carried more packets per second for less CPU, and one TCP stream as fast or faster (docs/BENCHMARKS.md); from 3 CPUs on, `false` lets one peer's sealing and opening use several cores; `gmtun show` prints the choice. A change needs a restart"},
	{Section: "interface", Name: "metrics_listen", Type: "string", Default: "none (no metrics)",
		Doc: "where to serve Prometheus metrics (`gmtun_*`, text format, path `/metrics`): `IP:port` (`\"127.0.0.1:9586\"`, `\"[::1]:9586\"`; an IP literal) or `unix:/absolute/path`; see [Metrics](#metrics). A change needs a restart"},
	{Section: "peer", Name: "name", Type: "string", Default: "required",
		Doc: "1–32 bytes of letters, digits, `.`, `_`, `-`; unique among the peers. Used in logs and `gmtun show`"},
	{Section: "peer", Name: "public_key", Type: "string", Default: "required",
		Doc: "the peer's `gmtun pubkey` output: 88 characters of canonical base64 of a valid SM2 point, or a PEM `PUBLIC KEY` block (SubjectPublicKeyInfo from `openssl pkey -pubout` or `gmtun pubkey --pem`) in a TOML multi-line string (`\"\"\"…\"\"\"`). Not this side's own key; not the key of another peer. The example placeholder `\"<…>\"` is rejected with a hint"},
	{Section: "peer", Name: "endpoint", Type: "string", Default: "none",
		Doc: "`IP:port`, `[IPv6]:port` or `NAME:port` with a DNS name (`gw-b.example.net:51820`). `check` and reloads do not resolve names; `gmtun up` resolves them at start and again while it runs, see [Endpoints given as DNS names](#endpoints-given-as-dns-names). Port 1..65535; unicast address. Without an endpoint this side only responds and learns the peer's address from its first authenticated handshake"},
	{Section: "peer", Name: "allowed_ips", Type: "array of strings", Default: "`[]`",
		Doc: "inner prefixes routed to this peer and accepted from it. Canonical CIDR form without host bits (`198.19.0.0/24`, not `198.19.0.2/24`). No prefix may overlap another, within this peer or with any other peer's, since each inner address must belong to at most one peer. `0.0.0.0/0` and `::/0` are allowed"},
	{Section: "peer", Name: "persistent_keepalive", Type: "integer", Default: "0 (off)",
		Doc: "seconds, 0..65535. 25 keeps a NAT mapping open"},
	{Section: "peer", Name: "preshared_key_file", Type: "string", Default: "none",
		Doc: "path of a file written by `gmtun genpsk` (one line, base64 of 32 bytes); the same contents on both sides. Same file rules as the private key"},
	{Section: "peer", Name: "id", Type: "string", Default: "`\"1234567812345678\"`",
		Doc: "the peer's SM2 user ID; must equal the peer's own `[interface] id`. 1..8191 bytes"},
	{Section: "peer", Name: "roaming", Type: "boolean", Default: "`true`",
		Doc: "follow the peer to the source address of its authenticated packets; `false` pins the configured endpoint"},
	{Section: "peer", Name: "suites", Type: "array of strings", Default: "the interface's `suites`",
		Doc: "the suites offered to and accepted from this peer, in preference order; same rules as `[interface] suites`"},
}

// MarkdownRow is k's row in the key table of docs/OPERATIONS.md.
func (k KeyDoc) MarkdownRow() string {
	return "| `" + k.Name + "` | " + k.Type + " | " + k.Default + " | " + k.Doc + " |"
}

// SectionKeys returns the documented keys of section ("interface" or
// "peer") in order.
func SectionKeys(section string) []KeyDoc {
	var out []KeyDoc
	for _, k := range Keys {
		if k.Section == section {
			out = append(out, k)
		}
	}
	return out
}

// SectionHeader is the TOML header of section: "[interface]" or "[[peer]]".
func SectionHeader(section string) string {
	if section == "peer" {
		return "[[peer]]"
	}
	return "[" + section + "]"
}
