// Package cryptobench measures gmtun's data suites the way the tunnel uses
// them: whole transport packets (docs/PROTOCOL.md, "Data packets") sealed
// or opened in batches through the public ciphers.Key API, timed in the
// CPU time of the measuring thread, next to per-packet anchors measured in
// the same process (gmsm's equivalent construction of each suite, and Go's
// AES-128-GCM for sm4-gcm; ublock-gcm, which gmsm lacks, has only the
// AES-128-GCM anchor).
//
// It backs `gmtun bench`. A run covers a grid of suite × tier × packet
// size × batch size. Each tier (a set of kernels, chosen with the GODEBUG
// cpu.* masks that kernels/cpu honours) runs in a fresh child process of
// the same binary, which reports ciphers.Tiers() so the table shows what
// actually ran; tiers that resolve to the same kernels are measured once.
//
//	parent (Run)                        child (ServeChild, one per tier)
//	 ├─ probe every tier ──────────────► print ciphers.Tiers(), exit
//	 ├─ drop tiers with equal kernels
//	 └─ measure each tier ─────────────► for each cell: progress line,
//	        collect JSON lines ◄───────     calibrate, count × timed runs,
//	        ratios vs anchors                result line (median)
//
// What one timed step does, per cell:
//
//   - gmtun seal: write the 16-byte header of every packet of the batch
//     (type 0x14, version 1, receiver index, consecutive little-endian
//     counters, exactly as the tunnel's sender assigns them), re-slice each
//     buffer to header ‖ body and call Key.Seal once for the batch. The
//     body is the inner packet size rounded up to 16 bytes (the tunnel's
//     mandatory padding) and each buffer has capacity for the tag. Bodies
//     are sealed in place and not reset: the previous step's ciphertext is
//     the next step's plaintext, which costs nothing and changes no timing
//     of constant-time code.
//   - gmtun open: restore the batch from a sealed copy (one memmove per
//     packet, counted in the time; a few per cent at 1420 bytes) and call
//     Key.Open once; every packet must verify.
//   - anchors (batch 1): the same packet sealed or opened with gmsm's or
//     Go's public API, including each suite's per-packet set-up (for the
//     ZUC suites, a new gmsm cipher and MAC object per packet: that is
//     their per-packet IV load).
//
// MB/s counts inner-packet bytes (the size column, not the padding,
// header or tag) per second of thread CPU time; ns/pkt is thread CPU time
// per packet. Each cell reports the median of several timed runs, each at
// least a minimum CPU time long.
package cryptobench
