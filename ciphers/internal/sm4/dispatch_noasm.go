//go:build !amd64 || !gc || purego

package sm4

// Without assembly every primitive is the reference implementation, and
// nothing is registered with ciphers/internal/impl (impl.Selected("sm4")
// reports "generic"). This file is the exact complement of
// dispatch_amd64.go.

// kernelKey is empty without assembly: there is no kernel GHASH table.
type kernelKey struct{}

// initKernelKey does nothing without assembly.
func initKernelKey(*kernelKey, *[16]byte) {}

// cryptBlock applies SM4 with round keys rk to one block; see
// cryptBlockGeneric.
func cryptBlock(rk *[32]uint32, dst, src []byte) { cryptBlockGeneric(rk, dst, src) }

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

// gcmSealBatch seals a batch; see GCM.SealBatch.
func gcmSealBatch(g *GCM, ps []Packet) { sealBatchGeneric(g, ps) }

// gcmOpenBatch opens a batch; see GCM.OpenBatch.
func gcmOpenBatch(g *GCM, ps []Packet, ok []bool) { openBatchGeneric(g, ps, ok) }
