package sm4

// The single dispatch point of every SM4 primitive. Today each forwards
// to the reference implementation. The SIMD work replaces this file with
// dispatch_amd64.go (amd64 && gc && !purego: flags from kernels/cpu and one
// if-chain per function) and dispatch_noasm.go (the exact complement,
// forwarding to the *Generic functions as here).

// encryptBlocks encrypts whole blocks of src into dst (ECB).
func encryptBlocks(rk *[32]uint32, dst, src []byte) { encryptBlocksGeneric(rk, dst, src) }

// xorKeyStream is the SM4-CTR keystream XOR; see ctrGeneric.
func xorKeyStream(rk *[32]uint32, ctr *[16]byte, dst, src []byte) { ctrGeneric(rk, ctr, dst, src) }

// gcmSeal seals one message; see GCM.Seal.
func gcmSeal(g *GCM, out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte) {
	sealGeneric(g, out, tag, nonce, plaintext, aad)
}

// gcmOpen opens one message; see GCM.Open.
func gcmOpen(g *GCM, out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	return openGeneric(g, out, nonce, ciphertext, aad, tag)
}
