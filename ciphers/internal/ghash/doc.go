// Package ghash is GCM's universal hash GHASH (NIST SP 800-38D §6.4) for
// the GCM implementations of gmtun's block ciphers (ciphers/internal/sm4,
// ciphers/internal/ublock): one constant-time portable multiply in
// GF(2^128) shared by all of them (generic.go), and on amd64 without the
// purego tag the dispatch to the carry-less-multiply kernels of
// kernels/ghash (dispatch_amd64.go, registered with ciphers/internal/impl
// under ImplPackage; dispatch_noasm.go is its complement).
//
// Key holds both forms of a hash subkey, so any tier can be selected at
// any time; it is immutable after Init and safe for concurrent use. SM4's
// fused GCM kernels pick their GHASH tier together with their SM4 tier and
// call kernels/ghash themselves; they share only the generic code here.
//
// Timing: no branch or memory index depends on H or on the data; the
// generic multiply uses integer multiplications on operands whose bits are
// spaced apart (see generic.go), the kernels PCLMULQDQ/VPCLMULQDQ.
package ghash

// ImplPackage is the name under which the GHASH kernels register with
// ciphers/internal/impl ("AVX-512", "AVX2+VPCLMULQDQ", "PCLMULQDQ";
// "generic" when none is enabled).
const ImplPackage = "ghash"

// BlockSize is the GHASH block size in bytes.
const BlockSize = 16

// Key is a GHASH key: the hash subkey H in the generic form and, where
// kernels exist, in the kernels' form (its powers).
type Key struct {
	gen GenericKey
	asm kernelKey
}

// Init sets k to the hash subkey h (H = E_K(0^128), SP 800-38D §7.1).
func (k *Key) Init(h *[16]byte) {
	k.gen.Init(h)
	initKernelKey(&k.asm, h)
}

// GCMHash sets y to GHASH_H(A ‖ 0^v ‖ C ‖ 0^u ‖ [len(A)]64 ‖ [len(C)]64),
// the hash of GCM's tag (SP 800-38D §7.1 step 5), for A = aad and
// C = ct.
func (k *Key) GCMHash(y *[16]byte, aad, ct []byte) {
	gcmHash(k, y, aad, ct)
}

// gcmHashGeneric is GCMHash on the generic multiply.
func gcmHashGeneric(k *GenericKey, y *[16]byte, aad, ct []byte) {
	var s [2]uint64
	UpdateGeneric(k, &s, aad)
	UpdateGeneric(k, &s, ct)
	hi, lo := MulGeneric(k, s[0]^uint64(len(aad))*8, s[1]^uint64(len(ct))*8)
	putWords(y, hi, lo)
}
