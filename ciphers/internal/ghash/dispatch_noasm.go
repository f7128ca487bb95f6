//go:build !amd64 || !gc || purego

package ghash

// Without assembly GHASH is the generic multiply and nothing is registered
// with ciphers/internal/impl. This file is the exact complement of
// dispatch_amd64.go.

// kernelKey is empty without assembly.
type kernelKey struct{}

// initKernelKey does nothing without assembly.
func initKernelKey(*kernelKey, *[16]byte) {}

// gcmHash is GCMHash on the generic multiply.
func gcmHash(k *Key, y *[16]byte, aad, ct []byte) { gcmHashGeneric(&k.gen, y, aad, ct) }
