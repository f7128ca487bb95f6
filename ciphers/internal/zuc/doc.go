// Package zuc is gmtun's portable reference implementation of the ZUC
// stream cipher family:
//
//   - ZUC-128 (GB/T 33133.1-2016; 3GPP ETSI/SAGE 128-EEA3 & 128-EIA3
//     Document 2), with the 128-EEA3 confidentiality and 128-EIA3 integrity
//     algorithms (Document 1 v1.7; GB/T 33133.2/.3-2021);
//   - ZUC-256 with the original 2018 initialisation (184-bit IV) and the
//     ZUC-256 MAC with 32-, 64- and 128-bit tags (ZUC design team, "The
//     ZUC-256 Stream Cipher", Journal of Cryptologic Research 5(2), 2018).
//
// It is plain Go, has no build tags and always compiles: it is the oracle
// for the multi-lane SIMD kernels (kernels/zuclanes) and the fallback when
// no kernel applies. The functions named *Generic are the units a kernel
// replaces.
//
// # Batch primitives
//
// The data suites seal and open packets through the batch primitives of
// lanes.go (XORKeyStreams128/256, EIA3Tags, MAC256Tags,
// EncryptThenMAC128/256, VerifyThenDecrypt128/256): up to Lanes packets of
// one key per call, one IV per lane. VerifyThenDecrypt may generate a
// body's keystream before its tag is checked (for up to Lanes/4 packets
// one 8-lane call runs the cipher and MAC lanes together), but keeps it in
// scratch memory: nothing is written to a body whose tag does not verify. lanes_amd64.go dispatches them, one switch each, on flags
// registered with ciphers/internal/impl: "AVX-512+GFNI" (16-lane kernels),
// "AVX2+GFNI" (8-lane kernels) and "generic" (the *Generic loops, also the
// only implementation under -tags purego or off amd64). On the kernel
// tiers, tags come from the carry-less multiply MAC kernels. On the
// 16-lane tier every lane runs to its own length within one call (masked
// loads and stores); on the 8-lane tier lanes of unequal length share
// kernel calls up to the shorter length. What a mostly empty kernel call
// would do badly runs single-lane: a lone packet, the last lane standing
// on the 8-lane tier and a final partial word (the MAC of a lone packet
// takes its keystream from the generic code and its tag from the MAC
// kernel). MACs whose keystream exceeds the 2 KiB lane buffer (messages
// over about 2 KiB) run in chunks: the lane kernels continue the keystream
// chunk by chunk and the tag, linear in the keystream windows, is
// accumulated from the MAC kernel's tags of the chunks. The lane state
// and keystream scratch live on the caller's stack: the primitives are
// safe for concurrent use and do not allocate.
//
// Speed techniques (measured in zuc_test.go, BenchmarkCoreVariants):
// the LFSR feedback is summed in a uint64 and reduced modulo 2^31−1 once
// (two folds) instead of after every term; 16 rounds are unrolled over a
// 32-cell copy of the LFSR (round i reads cells i..i+15 and writes cell
// i+16), so the register never shifts and every index is a constant; and
// the S-box layer uses four 256-entry 32-bit tables, one per byte
// position, that merge S0 and S1 with their shifts.
//
// Timing: the S-boxes are table lookups indexed by secret state, so the
// keystream generator is VARIABLE-TIME (cache-timing) like every table
// implementation of ZUC; it is the reference and fallback path, not a
// constant-time one. The kernel lanes are constant-time; on the kernel
// tiers the single-lane cases listed above still use this generator. The MAC combination steps (128-EIA3, ZUC-256 MAC)
// are constant-time: they use integer multiplications as a carry-less
// multiplier and never branch on or index by keystream or message bits.
//
// Nothing here allocates; State is a plain value that callers keep on the
// stack.
package zuc

//go:generate go run gen_unrolled.go
