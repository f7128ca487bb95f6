//go:build amd64 && gc && !purego

package ghash

import (
	"encoding/binary"

	"github.com/gmtun/gmtun/kernels/cpu"
)

// BlockSize is the GHASH block size in bytes.
const BlockSize = 16

// Powers is how many powers of H a Key holds (H^1 … H^32).
const Powers = 32

// Key holds the powers of one hash subkey in the kernels' form
// (byte-reversed, times x^-1; see kernels/_gen/ghash): H^16 … H^1, the XOR
// of the two 64-bit halves of each (the Karatsuba operands), then
// H^32 … H^17 and theirs (the AVX512 tier's 32-block groups). It is
// read-only after NewKey and safe for concurrent use.
type Key struct {
	table [4 * 16 * 16]byte
}

// Tier names one kernel implementation.
type Tier int

// The kernel tiers, fastest first.
const (
	AVX512         Tier = iota + 1 // VPCLMULQDQ on ZMM (AVX-512 F/BW/VL/DQ)
	AVX2VPCLMULQDQ                 // VEX VPCLMULQDQ on YMM (AVX2)
	PCLMULQDQ                      // 128-bit PCLMULQDQ
)

// AllTiers lists every tier, fastest first, whether or not the CPU has it.
var AllTiers = []Tier{AVX512, AVX2VPCLMULQDQ, PCLMULQDQ}

// String returns the tier's name, as kernels/cpu spells it ("AVX-512",
// …): the name ciphers/internal/ghash registers the tier under.
func (t Tier) String() string {
	switch t {
	case AVX512:
		return cpu.TierAVX512
	case AVX2VPCLMULQDQ:
		return cpu.TierAVX2VPCLMULQDQ
	case PCLMULQDQ:
		return cpu.TierPCLMULQDQ
	}
	return "invalid"
}

// Supported reports whether the running CPU (after GODEBUG overrides) can
// run tier t.
func (t Tier) Supported() bool {
	switch t {
	case AVX512:
		return cpu.X86.AVX512VAES
	case AVX2VPCLMULQDQ:
		return cpu.X86.VPCLMULQDQ
	case PCLMULQDQ:
		return cpu.X86.AESNI
	}
	return false
}

// Best returns the fastest supported tier and false when none is.
func Best() (Tier, bool) {
	for _, t := range AllTiers {
		if t.Supported() {
			return t, true
		}
	}
	return 0, false
}

// NewKey fills k with the powers of the hash subkey h (H = E_K(0^128),
// NIST SP 800-38D §6.4). It runs in constant time. With PCLMULQDQ each
// power is one single-block kernel multiplication by H (about 30 ns), so
// a key for a one-message AEAD (the handshake's) costs about 1 µs rather
// than the 15 µs of 31 bit-serial multiplications.
func NewKey(h *[16]byte, k *Key) {
	if !PCLMULQDQ.Supported() {
		newKeyGeneric(h, k)
		return
	}
	k.put(1, fieldElement{binary.BigEndian.Uint64(h[:8]), binary.BigEndian.Uint64(h[8:])})
	// One block through the kernel multiplies y ⊕ block by the table's
	// H^1 only, so y = H^i ⊕ 0 becomes H^(i+1).
	y := *h
	var zero [BlockSize]byte
	for i := 2; i <= Powers; i++ {
		updatePCLMULQDQ(&k.table, &y, &zero[0], 1, &zero[0], 0)
		k.put(i, fieldElement{binary.BigEndian.Uint64(y[:8]), binary.BigEndian.Uint64(y[8:])})
	}
	clear(y[:])
}

// newKeyGeneric is NewKey with the bit-serial multiplication, for CPUs
// without PCLMULQDQ (whose kernels are then unused) and as the tests'
// reference.
func newKeyGeneric(h *[16]byte, k *Key) {
	hv := fieldElement{binary.BigEndian.Uint64(h[:8]), binary.BigEndian.Uint64(h[8:])}
	p := hv
	for i := 1; i <= Powers; i++ {
		k.put(i, p)
		p = p.mul(hv)
	}
}

// put stores p = H^i in the kernels' form: H^i·x^-1, byte-reversed into
// a little-endian 128-bit integer whose bit 127 is the coefficient of x^0,
// at entry 16-i of the first half for i ≤ 16, entry 32-i of the second
// half (byte 512) else, with the XOR of its halves 256 bytes further.
func (k *Key) put(i int, p fieldElement) {
	e := p.mulXInv()
	off := 16 * (16 - i)
	if i > 16 {
		off = 512 + 16*(32-i)
	}
	binary.LittleEndian.PutUint64(k.table[off:], e.lo)
	binary.LittleEndian.PutUint64(k.table[off+8:], e.hi)
	binary.LittleEndian.PutUint64(k.table[off+256:], e.lo^e.hi)
	binary.LittleEndian.PutUint64(k.table[off+256+8:], e.lo^e.hi)
}

// Update absorbs the whole 16-byte blocks of blocks (len(blocks)/16 of
// them; trailing bytes are left to the caller, who pads the last partial
// block with zeros as §6.4 requires) into the GHASH state y, using tier t.
func Update(t Tier, k *Key, y *[16]byte, blocks []byte) {
	Update2(t, k, y, blocks, nil)
}

// Update2 absorbs the whole blocks of a, then those of b, into y in one
// kernel call: Update(t, k, y, a) followed by Update(t, k, y, b), for
// the price of one call (a message's body and its final padded block and
// length block, say).
func Update2(t Tier, k *Key, y *[16]byte, a, b []byte) {
	na, nb := len(a)/BlockSize, len(b)/BlockSize
	if na == 0 {
		a, na, b, nb = b, nb, nil, 0
	}
	if na == 0 {
		return
	}
	if !t.Supported() {
		panic("ghash: tier " + t.String() + " not supported by this CPU")
	}
	var pb *byte
	if nb > 0 {
		pb = &b[0]
	}
	switch t {
	case AVX512:
		updateAVX512(&k.table, y, &a[0], na, pb, nb)
	case AVX2VPCLMULQDQ:
		updateAVX2VPCLMULQDQ(&k.table, y, &a[0], na, pb, nb)
	case PCLMULQDQ:
		updatePCLMULQDQ(&k.table, y, &a[0], na, pb, nb)
	}
}

// fieldElement is an element of GF(2^128) in GCM's bit order: hi holds
// bytes 0-7 of the block big-endian, so its top bit is the coefficient of
// x^0 (NIST SP 800-38D §6.3).
type fieldElement struct {
	hi, lo uint64
}

// mul is Algorithm 1 of NIST SP 800-38D §6.3 with masks instead of
// branches, so it runs in constant time.
func (x fieldElement) mul(y fieldElement) fieldElement {
	var z fieldElement
	v := y
	for i := 0; i < 128; i++ {
		word := x.hi
		if i >= 64 { // public loop index, not secret
			word = x.lo
		}
		bit := -(word >> (63 - uint(i%64)) & 1)
		z.hi ^= v.hi & bit
		z.lo ^= v.lo & bit
		// V·x: shift towards higher powers, reducing by R = 11100001 || 0^120.
		carry := -(v.lo & 1)
		v.lo = v.lo>>1 | v.hi<<63
		v.hi = v.hi>>1 ^ 0xe100000000000000&carry
	}
	return z
}

// mulXInv returns x·x^-1 mod P as a 128-bit integer with the coefficient of
// x^0 in bit 127 (the byte-reversed block): shifting that integer left by
// one divides by x; the coefficient that falls off is replaced by
// x^-1 = x^127 + x^6 + x + 1, i.e. 0xC2000…01 in this order.
func (x fieldElement) mulXInv() fieldElement {
	carry := -(x.hi >> 63)
	return fieldElement{
		hi: x.hi<<1 | x.lo>>63 ^ 0xc200000000000000&carry,
		lo: x.lo<<1 ^ 1&carry,
	}
}
