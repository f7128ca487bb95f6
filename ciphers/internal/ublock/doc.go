// Package ublock implements the uBlock block cipher (WU Wenling, ZHANG Lei,
// ZHENG Yafei, LI Lingchen, "The block cipher uBlock", Journal of
// Cryptologic Research 2019, 6(6): 690–703; the 2019 CACR block-cipher
// competition winner) in all three variants — uBlock-128/128, 128/256 and
// 256/256 — and GCM (NIST SP 800-38D) over the 128-bit-block variants, in
// portable Go. The public API is github.com/gmtun/gmtun/ciphers/ublock; the
// ublock-gcm data suite calls GCM here directly.
//
// The *Generic functions are the reference implementation: they always
// compile, contain no assembly and are the oracle for the SIMD kernels.
// dispatch_amd64.go is the single place that chooses between them and the
// kernels (dispatch_noasm.go is its complement): every production path
// (Cipher, GCM) calls encryptBlocks, decryptBlocks and ctr32XOR, never a
// *Generic function directly, except GCM on a kernel tier (gcm_amd64.go,
// chosen through the same tier()), which drives the kernels itself: each
// text's whole passes through the CTR kernel, and the tag masks and
// leftover blocks of all packets of a batch gathered into full passes
// (kernels/ublock.XORPieces).
//
// Timing: every path is constant time (docs/SECURITY.md). There is no
// lookup table in the non-test code. The generic tier runs four blocks at
// once in a nibble-sliced form (block_generic.go): the four 64-bit words at
// one position of four blocks are transposed so that bit j of every nibble
// lands in plane j, where the 4-bit S-box and its inverse are Boolean
// circuits of a dozen gates (sbox.go) over 64 nibbles at a time. The
// linear layer only moves whole nibbles (32-bit rotations by 4, 8 and 20
// bits, byte permutations), so it acts on the planes exactly as on the
// words, and the state stays transposed through every round. The key
// schedule evaluates the same circuit on words (SWAR). GHASH is the
// constant-time multiply of ciphers/internal/ghash, and tags are compared
// with crypto/subtle.ConstantTimeCompare. The only branches and loop
// bounds are public: lengths, batch sizes, the variant, and whether a tag
// verified. The spec's tables (S, S⁻¹, PL, PR, PK, T) are kept in
// tables_test.go as oracles.
//
// Schedule, Cipher and GCM are immutable after their constructor and may
// be shared between goroutines; all scratch space lives on the stack.
package ublock

// ImplPackage is the name under which the kernels register with
// ciphers/internal/impl ("generic" when none is enabled).
const ImplPackage = "ublock"

// Block and key sizes in bytes of the three variants.
const (
	// BlockSize is the block size of uBlock-128/128 and uBlock-128/256.
	BlockSize = 16
	// BlockSize256 is the block size of uBlock-256/256.
	BlockSize256 = 32
	// KeySize128 is the key size of uBlock-128/128.
	KeySize128 = 16
	// KeySize256 is the key size of uBlock-128/256 and uBlock-256/256.
	KeySize256 = 32
)
