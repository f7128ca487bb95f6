// Package sm4 implements the SM4 block cipher (GB/T 32907-2016) and the
// CTR (NIST SP 800-38A) and GCM (NIST SP 800-38D, RFC 8998) modes that
// gmtun uses, in portable Go. The public API is github.com/gmtun/gmtun/ciphers/sm4;
// the batch data suite calls the packet functions here directly.
//
// The *Generic functions are the reference implementation: they always
// compile, contain no assembly and are the oracle for the SIMD kernels.
// dispatch_amd64.go is the single place that chooses between them and
// the SIMD kernels (dispatch_noasm.go is its complement), registering each
// kernel tier with ciphers/internal/impl under ImplPackage.
//
// Timing: the generic SM4 rounds use table lookups indexed by secret
// data (a merged S-box/linear-transform "T-table"), so they are
// variable-time and leak through the data cache; they are meant as the
// fallback for machines without a SIMD kernel. GHASH, in contrast, is
// constant-time: it multiplies in GF(2^128) with integer multiplications
// on operands whose bits are spaced apart (no table indexed by H- or
// data-dependent values), and tags are compared with
// crypto/subtle.ConstantTimeCompare. When a SIMD tier is enabled every
// SM4 operation, single blocks and the hash subkey included, runs on the
// constant-time kernels (kernels/sm4ctr, kernels/ghash); a one-block call
// then costs a whole register set of the kernel, which is slower than the
// table lookup but does not leak.
//
// Cipher and GCM hold only immutable key schedules and may be shared
// between goroutines; all scratch space lives on the stack. A CTR stream
// carries its position and, like any cipher.Stream, belongs to one
// goroutine at a time.
package sm4

// BlockSize is the SM4 block size in bytes (GB/T 32907-2016 §5.1).
const BlockSize = 16

// KeySize is the SM4 key size in bytes (GB/T 32907-2016 §5.2).
const KeySize = 16

// ImplPackage is the name under which this package registers its kernel
// tiers with ciphers/internal/impl ("AVX-512+GFNI", "AVX2+GFNI",
// "AVX2+VAES", "AVX2+AES-NI"; "generic" when none is enabled).
const ImplPackage = "sm4"
