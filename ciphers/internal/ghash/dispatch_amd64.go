//go:build amd64 && gc && !purego

package ghash

import (
	"encoding/binary"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/kernels/ghash"
)

// The single dispatch point of GHASH on amd64: one flag per kernel tier of
// kernels/ghash, computed once (GODEBUG cpu.X=off switches included) and
// registered with ciphers/internal/impl, fastest first; tier() is the one
// if-chain every call goes through.
var (
	useAVX512    = ghash.AVX512.Supported()
	useAVX2      = ghash.AVX2VPCLMULQDQ.Supported()
	usePCLMULQDQ = ghash.PCLMULQDQ.Supported()
)

func init() {
	impl.Register(ImplPackage, ghash.AVX512.String(), &useAVX512)
	impl.Register(ImplPackage, ghash.AVX2VPCLMULQDQ.String(), &useAVX2)
	impl.Register(ImplPackage, ghash.PCLMULQDQ.String(), &usePCLMULQDQ)
}

// tier returns the kernel tier to use, or ok = false for the generic code.
func tier() (t ghash.Tier, ok bool) {
	switch {
	case useAVX512:
		return ghash.AVX512, true
	case useAVX2:
		return ghash.AVX2VPCLMULQDQ, true
	case usePCLMULQDQ:
		return ghash.PCLMULQDQ, true
	}
	return 0, false
}

// kernelKey is the kernels' table of the powers of H.
type kernelKey = ghash.Key

// initKernelKey fills k from the hash subkey h.
func initKernelKey(k *kernelKey, h *[16]byte) { ghash.NewKey(h, k) }

// gcmHash is GCMHash: on a kernel tier, A's and C's whole blocks, then
// the padded partial blocks and the length block, in as few kernel calls
// as the layout allows (one when A is whole blocks right in front of C in
// memory, the shape of a tunnel packet).
func gcmHash(k *Key, y *[16]byte, aad, ct []byte) {
	t, ok := tier()
	if !ok {
		gcmHashGeneric(&k.gen, y, aad, ct)
		return
	}
	*y = [16]byte{}
	var last [2 * BlockSize]byte
	full := len(ct) &^ (BlockSize - 1)
	body := ct[:full]
	switch {
	case len(aad) == 0:
	case adjacentBlocks(aad, ct, full):
		body = aad[:len(aad)+full]
	case full == 0 && len(aad)%BlockSize == 0:
		body = aad
	default:
		afull := len(aad) &^ (BlockSize - 1)
		ghash.Update(t, &k.asm, y, aad[:afull])
		if afull < len(aad) {
			copy(last[:], aad[afull:])
			ghash.Update(t, &k.asm, y, last[:BlockSize])
			last = [2 * BlockSize]byte{}
		}
	}
	rest := last[:BlockSize]
	if full < len(ct) {
		copy(last[:], ct[full:])
		rest = last[:]
	}
	binary.BigEndian.PutUint64(rest[len(rest)-16:], uint64(len(aad))*8)
	binary.BigEndian.PutUint64(rest[len(rest)-8:], uint64(len(ct))*8)
	ghash.Update2(t, &k.asm, y, body, rest)
}

// adjacentBlocks reports whether aad is whole blocks immediately followed
// in memory by the first n bytes of ct (0 < n ≤ len(ct)), so that
// aad[:len(aad)+n] is A ‖ C[:n] without copying.
func adjacentBlocks(aad, ct []byte, n int) bool {
	if len(aad)%BlockSize != 0 || cap(aad)-len(aad) < n || n == 0 {
		return false
	}
	return &aad[:len(aad)+1][len(aad)] == &ct[0]
}
