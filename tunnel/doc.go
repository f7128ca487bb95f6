// Package tunnel is gmtun's data plane: the Device that ties the TUN
// queues, the UDP bind, the handshake (package handshake) and the data
// suites (package ciphers) together. Its shape follows wireguard-go's
// device package: batch-first queues of containers, parallel crypto
// workers between sequential per-peer stages, pooled buffers, and named
// Routine* goroutines.
//
// # Outbound flow
//
//	TUN queue q ──read vector at offset 16──► RoutineReadFromTUN(q)
//	   for each packet: destination → AllowedIPs (longest prefix) → peer
//	   group per peer into one container (≤ 128 packets, never waits for more)
//	      │
//	      ▼  peer.stagePackets (bounded: MaxStagedPackets, drop oldest)
//	peer.sendStaged  [under peer.sendMu: counter order == queue order]
//	   no usable keypair → start handshake, packets stay staged
//	   else: counters c0 = Add(n) − n (one atomic add per container),
//	         write headers, zero-pad bodies to a multiple of 16,
//	         lock container, push it to BOTH queues:
//	      ├──► peer.outbound (ordered, per peer)
//	      └──► device.encryptQueue ──► RoutineEncryption × NumCPU
//	                                     Key.Seal(container) once; Unlock
//	peer.RoutineSequentialSender: Lock each container in FIFO order (waits
//	   for its worker) → bind.Send(vector, endpoint) once → release buffers
//
// # Inbound flow
//
//	InPlaceReceiveFunc ──vector──► RoutineReceiveInPlace (one per func;
//	  netio.StdBind on Linux, or any copying bind behind netio.InPlace):
//	  GRO-coalesced datagrams stay in the buffer the kernel filled; the
//	  buffer goes to the last of its peer's containers, so it is freed only
//	  after every packet in it was processed
//	   type 0x14: version/reserved, receiver index → keypair, exact length
//	              (body a multiple of 16 + the suite's tag), keypair not
//	              expired → group per keypair into containers
//	   0x11/0x12/0x13/0x15: exact size → copy into the bounded handshake
//	              queue (drop when full)
//	      │ lock container, push to BOTH queues:
//	      ├──► peer.inbound (ordered)
//	      └──► device.decryptQueue ──► RoutineDecryption × NumCPU
//	                                     mask = Key.Open(container); Unlock
//	peer.RoutineSequentialReceiver: Lock each container in FIFO order; for
//	   each packet whose tag verified: replay window (RFC 6479, updated only
//	   now, after authentication) → keepalive? count only : length from the
//	   inner IPv4/IPv6 header (padding stripped) → inner source must route
//	   back to this peer → one tun.Write(vector) per container.
//	   Any authenticated packet: roaming endpoint update, confirms a
//	   responder's keypair, timers.
//
// # Handshakes
//
//	receive path: Local.Screen (exact length, header, mac1; under load —
//	   open or proven queue ≥ 1/8 full, LoadDetector — also mac2 on 0x11),
//	   no allocation, before any queue (handshake.go, handshakeq.go):
//	   bad mac1 → drop; 0x11 without mac2 under load → stateless cookie
//	   reply (device-wide bound) only; proven 0x11 → per-source bucket.
//	priority queue (0x12, 0x13, 0x15, peers' cookies) ► proven 0x11 ►
//	   open 0x11 ► cookie replies ──► RoutineHandshake × ⌈NumCPU/2⌉
//	   0x11 → a byte-identical copy of the 0x11 last answered for a peer
//	          (handshake_copies.go): the same 0x12 again, from the same
//	          source while unconfirmed, at most twice; else refused as a
//	          replay, no EC work
//	        → ConsumeInitiation → install keypair as "next" (unconfirmed:
//	          never used to send) → remember 0x11 and 0x12 → send 0x12
//	   0x12 → ConsumeResponse → install as "current" → send 0x13 → flush
//	          staged packets (a second 0x12 for that keypair: ignored)
//	   0x13 → ConsumeConfirm → promote "next" → flush staged packets
//	   0x15 → ConsumeCookieReply (later messages carry mac2)
//
// Keypair slots (previous/current/next) are handshake.Keypairs; receiver
// indices come from the device's index table, which implements
// handshake.IndexAllocator and maps each index to its peer and keypair.
//
// # Timers
//
// One goroutine (RoutineTimers) walks the peers every tick against the
// injected Clock: initiation retransmission after RetryTimeout (with
// jitter) and giving up after RekeyAttemptTime, keypair expiry after
// RejectAfterTime and zeroing after ZeroKeysAfter, a new handshake when
// data sent got no answer for KeepaliveTimeout+RekeyTimeout, a passive
// keepalive KeepaliveTimeout after receiving data when nothing was sent,
// and the persistent keepalive. Rekeys on time, messages and bytes are
// decided on the send path by handshake.ShouldRekeyOnSend and on the
// receive path by ShouldRekeyOnReceive. With no traffic and no persistent
// keepalive the device sends nothing.
//
// # Buffers and allocation
//
// Every packet buffer is BufferSize bytes (64 KiB segments: a UDP GRO read
// fills up to 64 KiB, and other TUN implementations may coalesce into the
// first buffer of a vector) and comes from a capped free list
// (Config.MaxBuffers): the steady state allocates nothing per packet. The
// free list is LIFO and the Linux netio paths never write past the packet
// they carry (TUN coalescing uses writev, UDP GSO uses iovecs), so only the
// pages actually used become resident: RSS stays far below
// MaxBuffers × BufferSize.
//
// # Batch statistics
//
// Stats.Seal and Stats.Open count the crypto batch calls, their packets
// and their KernelLanes-wide groups, so that `gmtun show` can report the
// average batch and the lanes filled per multi-lane kernel call.
//
// Readers wait for a free buffer (backpressure); the staging queues, the
// only place packets wait for something other than the pipeline itself (a
// handshake), may hold at most a quarter of the pool. Stats.Buffers shows
// the pool and the queue lengths; if readers wait for stallReportAfter
// while no buffer comes back, RoutineTimers logs the state as a stall
// (and, once, every goroutine's stack at verbose level).
//
// Packets from the network never cause a panic, an allocation or a log
// line; every drop is counted by reason in Stats.
package tunnel
