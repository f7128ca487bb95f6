package tunnel

import (
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/internal/threadcpu"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// dropReason names why a packet was discarded. Drops are counted, never
// logged per packet.
type dropReason int

const (
	dropNoRoute              dropReason = iota // no peer's AllowedIPs contain the destination
	dropStagedOverflow                         // staged while no keypair, then pushed out
	dropMalformedOutbound                      // TUN packet that is not IPv4/IPv6
	dropShortPacket                            // datagram shorter than its header (and tag)
	dropBadType                                // unknown type byte, or bad version/reserved
	dropUnknownIndex                           // receiver index names no keypair
	dropExpiredKeypair                         // keypair past its reject limits
	dropAuthFailed                             // tag did not verify
	dropAuthBudget                             // refused unchecked: the keypair's or the peer's forgery budget is spent
	dropReplay                                 // counter seen before or left the window
	dropDisallowedSource                       // inner source not in the peer's AllowedIPs
	dropMalformedInner                         // decrypted packet is not a valid IP packet
	dropNoBuffer                               // receive path found the buffer pool exhausted
	dropHandshakeQueueFull                     // handshake queue full
	dropHandshakeRateLimited                   // source over its token bucket while under load
	dropHandshakeCookie                        // answered with a cookie reply instead
	dropHandshakeInvalid                       // failed screening or processing (see HandshakeInvalid)
	dropHandshakeMAC1                          // bad mac1 or header, dropped on the receive path
	dropHandshakeLate                          // response or confirm of a handshake already complete (droppedLate)
	dropCookieLimited                          // cookie reply refused by the device-wide bound
	dropTUNWriteError                          // TUN write failed
	dropSendError                              // bind send or seal failed
	dropNoEndpoint                             // peer has no known endpoint
	dropLinkLocal                              // link-scoped packet (RS, MLD, …) the kernel sent with no route
	// The bind's own drops (netio.DropReporter), folded in by Stats.
	dropUDPTruncated   // datagram larger than the receive buffer
	dropUDPBadSource   // source address of an unknown family
	dropUDPEmpty       // zero-length datagram
	dropUDPGROOverflow // GRO segments that did not fit the receive slots
	dropUDPSocket      // dropped by the kernel at the socket (receive buffer full)
	numDropReasons
)

var dropNames = [numDropReasons]string{
	dropNoRoute:              "no_route",
	dropStagedOverflow:       "no_keypair_staged_overflow",
	dropMalformedOutbound:    "malformed_outbound",
	dropShortPacket:          "short_packet",
	dropBadType:              "bad_type",
	dropUnknownIndex:         "unknown_index",
	dropExpiredKeypair:       "expired_keypair",
	dropAuthFailed:           "auth_failed",
	dropAuthBudget:           "auth_budget",
	dropReplay:               "replay",
	dropDisallowedSource:     "disallowed_source",
	dropMalformedInner:       "malformed_inner",
	dropNoBuffer:             "no_buffer",
	dropHandshakeQueueFull:   "handshake_queue_full",
	dropHandshakeRateLimited: "handshake_rate_limited",
	dropHandshakeCookie:      "handshake_cookie",
	dropHandshakeInvalid:     "handshake_invalid",
	dropHandshakeMAC1:        "handshake_mac1",
	dropHandshakeLate:        "handshake_late",
	dropCookieLimited:        "handshake_cookie_limited",
	dropTUNWriteError:        "tun_write_error",
	dropSendError:            "send_error",
	dropNoEndpoint:           "no_endpoint",
	dropLinkLocal:            "link_local",
	dropUDPTruncated:         "udp_truncated",
	dropUDPBadSource:         "udp_bad_source",
	dropUDPEmpty:             "udp_empty",
	dropUDPGROOverflow:       "udp_gro_overflow",
	dropUDPSocket:            "udp_socket_full",
}

// DropReasons lists every key of Stats.Drops.
func DropReasons() []string { return append([]string(nil), dropNames[:]...) }

type dropCounters [numDropReasons]atomic.Uint64

func (d *Device) drop(r dropReason, n int) {
	if n > 0 {
		d.drops[r].Add(uint64(n))
	}
}

// Stats is a snapshot of the device for `gmtun show`: plain values only.
type Stats struct {
	// ListenPort is the bound UDP port (0 before Up).
	ListenPort uint16
	// MTU is the inner MTU.
	MTU int
	// Peers are the configured peers in configuration order.
	Peers []PeerStats
	// Drops counts discarded packets by reason (every key of DropReasons
	// is present).
	Drops map[string]uint64
	// HandshakeInvalid counts handshake messages that failed, by
	// handshake.Reason code (plus "screen" for messages Screen dropped and
	// "length" for wrong sizes).
	HandshakeInvalid map[string]uint64
	// Kernels describes the crypto kernels in use; the device leaves it
	// empty for the caller to fill.
	Kernels []string
	// Seal and Open describe how full the crypto batches are.
	Seal, Open BatchStats
	// Buffers says where the packet buffers are, for diagnosing stalls.
	Buffers BufferStats
	// ReceiveErrors counts failed receive calls on the bind (each is
	// retried; the reader never gives up before Close).
	ReceiveErrors uint64
}

// BufferStats describes the packet buffer pool and the queues that hold
// buffers. With no traffic InUse is what the readers keep for their next
// read (a vector per TUN queue and per receive function) plus the staged
// packets; Waiting > 0 while the queues do not move means a stall.
type BufferStats struct {
	// Max is the cap, Allocated the buffers allocated so far, Free those
	// on the free list and InUse = Allocated − Free.
	Max, Allocated, Free, InUse int
	// Waiting is the number of readers blocked for a free buffer now;
	// ExhaustedFor is how long at least one has been (0 if none). Waits
	// counts every wait so far.
	Waiting      int
	ExhaustedFor time.Duration
	Waits        uint64
	// Staged is the packets of all peers waiting for a keypair.
	Staged int
	// EncryptQueue, DecryptQueue and HandshakeQueue are the lengths of
	// the device queues (containers; messages for the handshake queue).
	EncryptQueue, DecryptQueue, HandshakeQueue int
}

// BatchStats counts the batch calls of one direction of the data suites
// (Key.Seal or Key.Open, one per container of packets).
type BatchStats struct {
	// Calls is the number of batch calls, Packets the packets they took.
	Calls, Packets uint64
	// Groups is the number of kernel-width groups the calls split into
	// (⌈packets/KernelLanes⌉ per call): the ZUC kernels take one group
	// per call, so Packets/Groups is the average number of lanes filled
	// per kernel call.
	Groups uint64
	// Nanos is the wall-clock time spent inside the calls, in
	// nanoseconds: the cryptography's cost in the running tunnel, time the
	// thread waited for a CPU or served interrupts included.
	Nanos uint64
	// SampledPackets and SampledCPUNanos are the packets of one call in
	// cpuSampleEvery and the calling thread's CPU time in those calls
	// (user + system, less the cost of reading it: threadcpu.ReadCost):
	// the cost without the waits, to set beside `gmtun bench`, which
	// measures thread CPU time too.
	SampledPackets, SampledCPUNanos uint64
}

// KernelLanes is the number of packets the multi-lane ZUC kernels take
// per call (ciphers.KernelLanes); BatchStats.Groups counts in units of it.
const KernelLanes = ciphers.KernelLanes

// PacketsPerCall returns the average batch size (0 without calls).
func (b BatchStats) PacketsPerCall() float64 {
	if b.Calls == 0 {
		return 0
	}
	return float64(b.Packets) / float64(b.Calls)
}

// NanosPerPacket returns the average wall-clock time inside the calls
// per packet (0 without calls).
func (b BatchStats) NanosPerPacket() float64 {
	if b.Packets == 0 {
		return 0
	}
	return float64(b.Nanos) / float64(b.Packets)
}

// CPUNanosPerPacket returns the average thread CPU time inside the
// sampled calls per packet (0 without samples).
func (b BatchStats) CPUNanosPerPacket() float64 {
	if b.SampledPackets == 0 {
		return 0
	}
	return float64(b.SampledCPUNanos) / float64(b.SampledPackets)
}

// LanesPerGroup returns the average number of lanes filled per
// KernelLanes-wide kernel call (0 without calls).
func (b BatchStats) LanesPerGroup() float64 {
	if b.Groups == 0 {
		return 0
	}
	return float64(b.Packets) / float64(b.Groups)
}

// batchCounters is the live form of BatchStats.
type batchCounters struct {
	calls, packets, groups, nanos   atomic.Uint64
	sampledPackets, sampledCPUNanos atomic.Uint64
}

// cpuSampleEvery is how often a batch call's thread CPU time is measured:
// reading it is a system call (≈ 1.4 µs twice per sampled call on the
// 2-vCPU AMD EPYC VM, against ≈ 40 µs for a call of 47 packets), so one
// call in 64 keeps the cost under 0.1 %.
const cpuSampleEvery = 64

// batchTimer is one batch call being timed (batchCounters.start).
type batchTimer struct {
	wall    time.Time
	cpu     time.Duration
	sampled bool
}

// start counts a batch call and starts its clocks: wall clock always, the
// thread's CPU time on every cpuSampleEvery-th call, with the goroutine
// locked to its thread until done.
func (c *batchCounters) start() batchTimer {
	t := batchTimer{sampled: c.calls.Add(1)%cpuSampleEvery == 0}
	if t.sampled {
		runtime.LockOSThread()
		t.cpu = threadcpu.Now()
	}
	t.wall = time.Now()
	return t
}

// done records the call started as t, which took n packets.
func (c *batchCounters) done(t batchTimer, n int) {
	wall := time.Since(t.wall)
	if t.sampled {
		cpu := threadcpu.Now() - t.cpu - threadcpu.ReadCost()
		runtime.UnlockOSThread()
		if t.cpu > 0 { // 0: the platform cannot tell
			cpu = max(cpu, 0)
			c.sampledPackets.Add(uint64(n))
			c.sampledCPUNanos.Add(uint64(cpu))
		}
	}
	c.packets.Add(uint64(n))
	c.groups.Add(uint64((n + KernelLanes - 1) / KernelLanes))
	c.nanos.Add(uint64(max(wall, 0)))
}

func (c *batchCounters) load() BatchStats {
	return BatchStats{Calls: c.calls.Load(), Packets: c.packets.Load(), Groups: c.groups.Load(), Nanos: c.nanos.Load(),
		SampledPackets: c.sampledPackets.Load(), SampledCPUNanos: c.sampledCPUNanos.Load()}
}

// PeerStats describes one peer.
type PeerStats struct {
	Name       string
	PublicKey  string
	Endpoint   netip.AddrPort // zero if unknown
	AllowedIPs []netip.Prefix
	// Suite is the suite of the current keypair; 0 if none.
	Suite ciphers.SuiteID
	// LastHandshake is when the latest keypair was installed (zero if
	// never).
	LastHandshake time.Time
	// Handshakes counts the sessions established with the peer (keypairs
	// installed, rekeys included) since the peer was configured.
	Handshakes uint64
	// InitiationRetransmits counts the identical copies of our
	// initiations re-sent while no answer came (FastRetransmitInterval).
	// A peer that had already answered the original answers a copy again
	// (its ResponseRetransmits) or refuses it as a replay (its
	// handshake_invalid, stale_timestamp).
	InitiationRetransmits uint64
	// ResponseRetransmits counts the copies of the peer's initiations
	// answered again with the response already sent (the first was lost);
	// a copy refused instead counts under handshake_invalid as
	// stale_timestamp.
	ResponseRetransmits uint64
	PersistentKeepalive time.Duration
	Roaming             bool
	// RxBytes and RxPackets count authenticated datagrams (keepalives
	// included) received from the peer; TxBytes and TxPackets count
	// datagrams sent to it, handshake messages included.
	RxBytes, TxBytes, RxPackets, TxPackets uint64
	// InboundQueue and OutboundQueue are the containers waiting in the
	// peer's ordered queues; Staged the packets waiting for a keypair
	// (-1 if the peer's send lock was busy for the snapshot).
	InboundQueue, OutboundQueue, Staged int
	// AuthFailuresCharged counts the failed tags charged to the peer's
	// forgery budget (short-tag suites: zuc-128), AuthBudgetTrips the
	// times it ran dry; while ShortTagRefusedUntil is in the future
	// zuc-128 is refused with the peer.
	AuthFailuresCharged, AuthBudgetTrips uint64
	ShortTagRefusedUntil                 time.Time
}

// Stats returns a snapshot of the device's counters and peers.
func (d *Device) Stats() Stats {
	s := Stats{
		ListenPort:       uint16(d.port.Load()),
		MTU:              d.mtu,
		Drops:            make(map[string]uint64, numDropReasons),
		HandshakeInvalid: make(map[string]uint64),
		Seal:             d.sealBatches.load(),
		Open:             d.openBatches.load(),
	}
	for i := range d.drops {
		s.Drops[dropNames[i]] = d.drops[i].Load()
	}
	if dr, ok := d.bind.(netio.DropReporter); ok {
		bd := dr.Drops()
		s.Drops[dropNames[dropUDPTruncated]] += bd.Truncated
		s.Drops[dropNames[dropUDPBadSource]] += bd.BadSource
		s.Drops[dropNames[dropUDPEmpty]] += bd.Empty
		s.Drops[dropNames[dropUDPGROOverflow]] += bd.GROOverflow
		s.Drops[dropNames[dropUDPSocket]] += bd.Socket
	}
	s.Buffers = d.bufferStats()
	s.ReceiveErrors = d.recvErrors.Load()
	d.hsInvalidMu.Lock()
	for k, v := range d.hsInvalid {
		s.HandshakeInvalid[k] = v
	}
	d.hsInvalidMu.Unlock()
	if n := d.drops[dropHandshakeMAC1].Load(); n != 0 {
		s.HandshakeInvalid["screen"] += n // counted lock-free on the receive path
	}
	d.peersMu.RLock()
	peers := append([]*Peer(nil), d.peerList...)
	d.peersMu.RUnlock()
	for _, p := range peers {
		s.Peers = append(s.Peers, p.stats())
	}
	return s
}

func (p *Peer) stats() PeerStats {
	p.mu.Lock()
	ps := PeerStats{
		Name:                p.name,
		PublicKey:           p.hs.PublicKey().String(),
		AllowedIPs:          append([]netip.Prefix(nil), p.allowedIPs...),
		PersistentKeepalive: p.keepalive,
		Roaming:             p.roaming,
	}
	if p.endpoint != nil {
		ps.Endpoint = endpointAddrPort(p.endpoint)
	}
	p.mu.Unlock()
	if kp := p.sendKP.Load(); kp != nil {
		ps.Suite = kp.suite
	}
	p.kpMu.Lock()
	ps.LastHandshake, ps.Handshakes = p.lastHandshake, p.handshakes
	p.kpMu.Unlock()
	p.hsMu.Lock()
	ps.InitiationRetransmits, ps.ResponseRetransmits = p.hsRetransmits, p.hsAnswered
	p.hsMu.Unlock()
	ps.RxBytes, ps.RxPackets = p.rxBytes.Load(), p.rxPackets.Load()
	ps.TxBytes, ps.TxPackets = p.txBytes.Load(), p.txPackets.Load()
	ps.InboundQueue, ps.OutboundQueue = len(p.inbound), len(p.outbound)
	ps.AuthFailuresCharged, ps.AuthBudgetTrips = p.authBudget.failures.Load(), p.authBudget.trips.Load()
	if u := p.authBudget.refusedUntil.Load(); u != 0 {
		ps.ShortTagRefusedUntil = p.device.epochTime(u)
	}
	if p.sendMu.TryLock() { // a stalled sender must not stall Stats
		ps.Staged = p.stagedPackets
		p.sendMu.Unlock()
	} else {
		ps.Staged = -1
	}
	return ps
}

// bufferStats returns the buffer pool and queue part of Stats.
func (d *Device) bufferStats() BufferStats {
	ps := d.buffers.stats()
	return BufferStats{
		Max: ps.max, Allocated: ps.allocated, Free: ps.free, InUse: ps.allocated - ps.free,
		Waiting: ps.waiting, ExhaustedFor: ps.exhaustedFor, Waits: ps.waits,
		Staged:       int(d.stagedTotal.Load()),
		EncryptQueue: len(d.encryptQueue), DecryptQueue: len(d.decryptQueue), HandshakeQueue: d.handshakeQueued(),
	}
}

// endpointAddrPort returns the destination of ep as an AddrPort, or the
// zero value if it cannot be parsed.
func endpointAddrPort(ep netio.Endpoint) netip.AddrPort {
	if a, ok := ep.(interface {
		Addr() netip.Addr
		Port() uint16
	}); ok {
		return netip.AddrPortFrom(a.Addr(), a.Port())
	}
	ap, _ := netip.ParseAddrPort(ep.DstToString())
	return ap
}
