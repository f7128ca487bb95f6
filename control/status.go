package control

import "time"

// Status is what `gmtun show` reports about one running interface. Its JSON
// field names are a stable interface (docs/OPERATIONS.md, "gmtun show"):
// fields may be added, never renamed or removed.
type Status struct {
	// Interface is the TUN interface name.
	Interface string `json:"interface"`
	// PublicKey is this side's static SM2 public key (base64).
	PublicKey string `json:"public_key"`
	// ListenPort is the bound UDP port.
	ListenPort uint16 `json:"listen_port"`
	// MTU is the tunnel MTU.
	MTU int `json:"mtu"`
	// FwMark is the firewall mark of the UDP sockets (0 = none).
	FwMark uint32 `json:"fwmark"`
	// Suites are the interface's data suites in preference order.
	Suites []string `json:"suites"`
	// Kernels says which implementation each cipher primitive runs.
	Kernels []Kernel `json:"kernels"`
	// DataPath is how the data plane processes batches: "run to
	// completion" (on the goroutine that read them) or "workers" (handed
	// to one crypto worker per CPU); see interface.run_to_completion.
	DataPath string `json:"data_path"`
	// CPUs is the number of CPUs the daemon may run on.
	CPUs int `json:"cpus"`
	// Offload describes the TUN and UDP offloads in use.
	Offload Offload `json:"offload"`
	// ConfigFile is the configuration file the daemon runs.
	ConfigFile string `json:"config_file"`
	// Started is when the daemon finished starting up.
	Started time.Time `json:"started"`
	// LastReload is when the configuration was last re-read (SIGHUP),
	// successfully or not; null if never.
	LastReload *time.Time `json:"last_reload"`
	// LastReloadError is the error of the latest reload, "" if it
	// succeeded or there was none.
	LastReloadError string `json:"last_reload_error,omitempty"`
	// PendingRestart lists the settings (e.g. "interface.listen_port")
	// whose value in the configuration file differs from the running one
	// as of the latest reload: only a restart applies them. Absent if none.
	PendingRestart []string `json:"pending_restart,omitempty"`
	// Peers are the configured peers in configuration order.
	Peers []Peer `json:"peers"`
	// Drops counts discarded packets by reason (see
	// tunnel.DropReasons for the keys); every reason is present.
	Drops map[string]uint64 `json:"drops"`
	// HandshakeInvalid counts rejected handshake messages by reason.
	HandshakeInvalid map[string]uint64 `json:"handshake_invalid"`
	// Seal and Open describe how full the crypto batches are.
	Seal Batches `json:"seal"`
	Open Batches `json:"open"`
	// Buffers says where the data plane's packet buffers are, for
	// diagnosing a stalled tunnel.
	Buffers Buffers `json:"buffers"`
	// ReceiveErrors counts failed (and retried) UDP receive calls.
	ReceiveErrors uint64 `json:"receive_errors"`
	// Goroutines is the daemon's goroutine count (runtime.NumGoroutine),
	// for spotting leaks over long runs.
	Goroutines int `json:"goroutines"`
}

// Buffers describes the packet buffer pool and the queues holding
// buffers. With no traffic, in_use is what the readers keep for their next
// read plus the staged packets; waiting > 0 with exhausted_ms growing and
// queues that do not move is a stalled data plane.
type Buffers struct {
	// Max is the cap; Allocated, Free and InUse count buffers.
	Max       int `json:"max"`
	Allocated int `json:"allocated"`
	Free      int `json:"free"`
	InUse     int `json:"in_use"`
	// Waiting is the number of readers blocked for a free buffer;
	// ExhaustedMillis how long at least one has been (0: none); Waits
	// counts every wait so far.
	Waiting         int    `json:"waiting"`
	ExhaustedMillis int64  `json:"exhausted_ms"`
	Waits           uint64 `json:"waits"`
	// Staged is the packets waiting for a keypair (all peers).
	Staged int `json:"staged"`
	// EncryptQueue and DecryptQueue are containers (batches) waiting for
	// the crypto workers; HandshakeQueue is messages.
	EncryptQueue   int `json:"encrypt_queue"`
	DecryptQueue   int `json:"decrypt_queue"`
	HandshakeQueue int `json:"handshake_queue"`
}

// Batches counts the batch seal or open calls of the data plane and how
// many packets they carried, so operators can see whether the kernels'
// lanes are kept full.
type Batches struct {
	// Calls is the number of batch calls; Packets the packets they took.
	Calls   uint64 `json:"calls"`
	Packets uint64 `json:"packets"`
	// PacketsPerCall is Packets / Calls (0 without calls).
	PacketsPerCall float64 `json:"packets_per_call"`
	// LanesPerKernelCall is the average number of lanes filled per call of
	// a 16-lane kernel (0 without calls).
	LanesPerKernelCall float64 `json:"lanes_per_kernel_call"`
	// Nanos is the wall-clock time spent inside the calls (nanoseconds,
	// preemption included); NanosPerPacket is Nanos / Packets (0 without
	// calls): the cryptography's cost per packet in the running tunnel.
	Nanos          uint64  `json:"nanoseconds"`
	NanosPerPacket float64 `json:"nanoseconds_per_packet"`
	// SampledPackets and SampledCPUNanos are the packets of the calls
	// whose thread CPU time was measured (one in 64) and that time;
	// CPUNanosPerPacket is their ratio (0 without samples): the cost
	// without the waits for a CPU, comparable with `gmtun bench`.
	SampledPackets    uint64  `json:"sampled_packets"`
	SampledCPUNanos   uint64  `json:"sampled_cpu_nanoseconds"`
	CPUNanosPerPacket float64 `json:"cpu_nanoseconds_per_packet"`
}

// Kernel is the implementation selected for one cipher primitive.
type Kernel struct {
	// Primitive names the primitive ("sm4", "ghash", "zuc", …).
	Primitive string `json:"primitive"`
	// Selected is the implementation in use ("AVX-512+GFNI", "generic").
	Selected string `json:"selected"`
	// Available lists what this CPU can run, fastest first.
	Available []string `json:"available"`
}

// Offload describes the offloads of the data plane.
type Offload struct {
	// TUNVNetHdr: the TUN device uses virtio-net headers (TSO split on
	// read, GRO on write).
	TUNVNetHdr bool `json:"tun_vnet_hdr"`
	// TUNTSO: TCP segmentation offload on the TUN device.
	TUNTSO bool `json:"tun_tso"`
	// TUNUSO: UDP segmentation offload on the TUN device (Linux ≥ 6.2).
	TUNUSO bool `json:"tun_uso"`
	// TUNQueues is the number of TUN queues.
	TUNQueues int `json:"tun_queues"`
	// UDPGSO4/6: sends use UDP_SEGMENT per address family.
	UDPGSO4 bool `json:"udp_gso4"`
	UDPGSO6 bool `json:"udp_gso6"`
	// UDPGRO4/6: receives use UDP_GRO per address family.
	UDPGRO4 bool `json:"udp_gro4"`
	UDPGRO6 bool `json:"udp_gro6"`
}

// Peer is one configured peer.
type Peer struct {
	// Name is the peer's configured name.
	Name string `json:"name"`
	// PublicKey is the peer's static SM2 public key (base64).
	PublicKey string `json:"public_key"`
	// Endpoint is the current UDP address (ip:port, [ipv6]:port), "" if
	// unknown.
	Endpoint string `json:"endpoint"`
	// AllowedIPs are the inner prefixes routed to the peer.
	AllowedIPs []string `json:"allowed_ips"`
	// Suite is the suite of the current session, "" if none.
	Suite string `json:"suite"`
	// LastHandshake is when the latest session was established; null if
	// never.
	LastHandshake *time.Time `json:"last_handshake"`
	// Handshakes counts the sessions established with the peer since it
	// was configured (rekeys included).
	Handshakes uint64 `json:"handshakes"`
	// InitiationRetransmits counts identical copies of our handshake
	// initiations re-sent for want of an answer. A peer that had already
	// answered the original answers a copy again (its
	// ResponseRetransmits) or refuses it (handshake_invalid,
	// stale_timestamp).
	InitiationRetransmits uint64 `json:"initiation_retransmits"`
	// ResponseRetransmits counts copies of the peer's initiations answered
	// again with the response already sent, whose first copy was lost.
	ResponseRetransmits uint64 `json:"response_retransmits"`
	// RxBytes, TxBytes, RxPackets and TxPackets count authenticated
	// datagrams received from and datagrams sent to the peer (outer
	// UDP payload bytes; handshakes and keepalives included).
	RxBytes   uint64 `json:"rx_bytes"`
	TxBytes   uint64 `json:"tx_bytes"`
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	// PersistentKeepalive is the keepalive interval in seconds (0 = off).
	PersistentKeepalive int `json:"persistent_keepalive"`
	// Roaming reports whether the endpoint follows the peer.
	Roaming bool `json:"roaming"`
	// InboundQueue and OutboundQueue are the batches waiting in the peer's
	// ordered receive and send queues; Staged the packets waiting for a
	// keypair (-1 if unknown at the moment).
	InboundQueue  int `json:"inbound_queue"`
	OutboundQueue int `json:"outbound_queue"`
	Staged        int `json:"staged"`
}
