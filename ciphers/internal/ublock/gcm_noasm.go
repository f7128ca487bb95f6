//go:build !amd64 || !gc || purego

package ublock

// Without assembly GCM runs on the generic primitives; the complement of
// gcm_amd64.go.

func sealGCM(g *GCM, out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte) {
	g.sealGeneric(out, tag, nonce, plaintext, aad)
}

func openGCM(g *GCM, out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	return g.openGeneric(out, nonce, ciphertext, aad, tag)
}

func sealBatchGCM(g *GCM, ps []Packet) { g.sealBatchGeneric(ps) }

func openBatchGCM(g *GCM, ps []Packet, ok []bool) { g.openBatchGeneric(ps, ok) }
