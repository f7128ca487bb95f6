// Package zuc holds gmtun's ZUC kernels: the multi-lane keystream kernels
// (one independent ZUC instance per lane, 16 lanes per call with AVX-512 in
// State16, 8 lanes with AVX2 in State8) and the carry-less-multiply MAC
// kernels of 128-EIA3 and ZUC-256-MAC. Each lane width has two kernel sets
// (Kernels16, Kernels8) that share the state, the rounds and the call
// shapes and differ only in S1: two GFNI affine instructions (GFNI16 with
// VBMI2's funnel shifts, GFNI8), or, for CPUs without GFNI, AESENCLAST
// (hardware SubBytes, i.e. inversion in the AES field) between two affine
// maps applied with VPSHUFB nibble tables (AESNI16: AVX-512 F/BW/VL/DQ and
// 128-bit AES-NI only, the Skylake-SP and Cascade Lake servers, with the
// funnel shifts as two shifts and a VPTERNLOGD; AESNI8); the caller names
// the set in every State16 and State8 call. Each lane has its own key
// and IV, so the EEA3 and EIA3 instances of a batch of packets (or the
// ZUC-256 keystream and ZUC-256-MAC instances) run in one call, and ZUC-128
// and ZUC-256 lanes may be mixed: both use 32 initialisation rounds and a
// discarded work round.
//
// GFNI16 runs all 16 lanes as one group in ZMM registers, with S0 as a
// 256-byte table held in four registers (two VPERMT2B and a blend on bit
// 7) and the LFSR in a 64-byte-aligned ring on the stack next to a ring of
// doubled cells: on the Zen 5 it was measured on, ZMM µops issue at the
// YMM rate, and one ZMM group runs a 16-lane round about 25 % faster than
// the two interleaved YMM groups of 8 lanes it replaced. AESNI16 keeps the
// two YMM groups and runs S1 as VEX AESENCLAST on the four XMM halves of
// the two groups, the EVEX form being VAES. kernels/_gen/zuc/x16.go
// explains the techniques and the measurements behind them.
//
// # Contract
//
// A state is a caller-owned structure of arrays (row j of the LFSR holds
// cell s_j of every lane, then R1, R2 and 16 scratch rows); keep one per
// worker and reuse it, it is not safe for concurrent use. A batch is:
//
//  1. LoadZUC128 / LoadZUC256 for every lane in use (GB/T 33133.1-2016
//     §3.5.1 key loading; ZUC-256 2018 §2.2 with the keystream or MAC-32/64/128
//     constant set d). Unused lanes compute on stale data harmlessly.
//  2. Init: the 33 non-output rounds, in lanes.
//  3. XORKeyStream (EEA3-style bytes: keystream words big-endian) or
//     KeyStream (32-bit words, e.g. for EIA3 / ZUC-256-MAC), for a common
//     length on all lanes; repeated calls continue the keystream, each call
//     consuming whole words.
//  4. Lanes that need more keystream than the common length take further
//     XORKeyStream or KeyStream calls (the lanes that are done compute
//     stale words harmlessly); ciphers/internal/zuc never finishes a lane
//     outside the kernels. Lane extracts a lane's state (LFSR, R1, R2), for
//     tests and for callers that want to continue one lane elsewhere.
//
// State16 also has one-call forms for batches whose state is not needed
// afterwards: LoadZUC128Lanes / LoadZUC256Lanes load all 16 lanes at once
// (on AVX-512 CPUs each in one vector kernel: each lane's cells built in a register,
// transposed into the rows, stored as 32-byte halves because the round
// kernels read the rows by halves and a half does not forward from a
// 64-byte store still in flight; with ZMM stores the next call ran ≈9 %
// slower; for ZUC-256 the key part of the cells is computed in Go, the IV
// fields by byte shuffles in the kernel: ≈205 → 85 ns per call),
// InitKeyStream runs Init and writes whole 16-word blocks of keystream, and
// InitXORKeyStream runs Init and XORs every lane up to its own length
// (masked loads and stores for the last partial block). Both consume the
// state; they skip the tail rounds, the separate Init call and the state
// round trips of the general sequence. On GFNI16 (Kernels16.Paired) the
// paired forms run two states in one call, as two interleaved ZMM groups
// whose R1/R2 recurrences hide each other's latency: InitXORKeyStreamPair
// (InitXORKeyStream on one state, InitKeyStream on the other: a batch's
// body encryption and MAC keystream) and InitKeyStreamPair (both as
// keystream, the first as bytes: an open keeps the body keystream until
// the tags have verified; it prefetches the messages as InitKeyStream
// does). About 1.3× the keystream per unit of time of two calls at 1420
// bytes per lane; the zuc-256 suite seals 1.2× faster.
//
// Buffer placement: the XOR kernels touch one 64-byte line per lane and
// block. Lane buffers whose addresses agree modulo 4 KiB (pooled buffers a
// multiple of 4 KiB apart) make all 16 lines of a block fall in one L1 set
// and alias in store-to-load disambiguation. InitXORKeyStream's whole
// blocks read the source lines of all 16 lanes before writing any (its
// masked last blocks: of each group of four lanes; XORKeyStream lane by
// lane), so no load of theirs waits on a falsely aliased store (≈2 % on
// the aliased layout), but 16 lines in one 12-way set still cost about
// 10 % of a seal, there and in the MAC kernels' reads (ciphers/internal/zuc
// BenchmarkPlacement). Staggering the buffers' offsets avoids it; the
// tunnel's buffer pool does.
//
// Prefetching: the 16-lane XOR kernels ask for the source lines of the
// next block of every lane (PREFETCHT0) at the top of each block, and
// InitKeyStream for the lines of the bytes its caller names (the MAC's
// messages), so that the lines arrive while one block of rounds (about
// 600 ns) runs. A packet the tunnel seals or opens was often written on
// the other core (the kernel's copy, or a reader on another CPU); without
// the prefetch each block's loads waited on a cross-core fetch that the
// rounds in flight could not cover (zuc-256 seal of such packets about 10 %
// slower: ciphers BenchmarkSealRemoteData). Prefetches never fault and
// read nothing secret; a lane's prefetch address depends only on its
// public buffer address and the block index.
//
// Constant time: no table lookups indexed by secrets in memory (S0 uses
// VPERMT2B or VPSHUFB permutes of registers, S1 two GFNI affine
// instructions or AESENCLAST between VPSHUFB nibble tables) and no
// secret-dependent branches. The kernels exist only
// for amd64 with the gc toolchain and without the purego tag; elsewhere this package is empty and callers use
// the generic ZUC code. Kernels16.Supported and Kernels8.Supported report
// whether the CPU can run each set; calling a kernel the CPU lacks panics.
// The key loading of State16 (LoadZUC128Lanes, LoadZUC256Lanes) uses only
// AVX-512 F/BW and serves both 16-lane sets.
//
// # MAC tags
//
// EIA3Tag (128-EIA3) and MAC256Tag (ZUC-256-MAC with 32/64/128-bit tags)
// turn one message and the keystream words of its MAC instance (typically a
// lane's KeyStream output) into the tag. Both MACs XOR, for every set message
// bit, the keystream window starting at that bit; the kernels compute these
// sums as carry-less products of the bit-reversed message with 64-bit
// keystream windows: PCLMULQDQ on XMM (MACSupported), or VPCLMULQDQ on ZMM
// with GFNI bit reversal, four 16-byte blocks per instruction (MACWide).
// Lengths are in bits; EIA3KeyStreamWords and MAC256KeyStreamWords give the
// keystream each tag needs, and nothing past those words or past the last
// message byte is read. EIA3TagLanes and MAC256TagLanes (128-bit tags)
// compute the tags of up to 16 whole-byte messages, each from its lane's
// keystream words (a State16 KeyStream or InitKeyStream output), in one
// kernel call on the 512-bit path: masked loads for each message's last
// bytes and keystream words instead of a call and a padded copy per tail.
// The keystream is secret: no branch or address depends on it or on the
// message, only on the (public) length.
//
// The assembly is generated by kernels/_gen/zuc (avo); see that program
// for the register roles and the per-step mapping to the standard.
package zuc
