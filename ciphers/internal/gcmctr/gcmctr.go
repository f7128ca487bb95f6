// Package gcmctr is the GCM counter block with a 96-bit nonce (NIST
// SP 800-38D §7.1: J0 = nonce ‖ 0^31 ‖ 1, then inc32) as the kernel GCMs
// of ciphers/internal/sm4 and ciphers/internal/ublock build it for their
// kernels' piece descriptors and CTR calls: held as words, written with
// two 8-byte stores.
package gcmctr

import (
	"encoding/binary"
	"math/bits"
)

// NonceSize is the nonce length in bytes the counter block is built from.
const NonceSize = 12

// BlockSize is the length in bytes of a counter block.
const BlockSize = 16

// Counter is a GCM counter block as words: nonce bytes 0-7 and 8-11 in
// native order and the inc32 word's value. Building a counter block from
// them takes two 8-byte stores; a [16]byte assembled from a 12-byte copy
// and a byte store and then read whole (as the piece descriptors and the
// kernels do) stalls on store forwarding once per packet.
type Counter struct {
	n0 uint64
	n1 uint32
	// Count is the value of the inc32 word, the block's last four bytes
	// read big-endian. Adding to it advances the counter (mod 2^32).
	Count uint32
}

// New returns nonce ‖ BE32(count) (J0 for count = 1, SP 800-38D §7.1
// step 2).
func New(nonce *[NonceSize]byte, count uint32) Counter {
	return Counter{binary.LittleEndian.Uint64(nonce[0:8]), binary.LittleEndian.Uint32(nonce[8:12]), count}
}

// Put writes the counter block to b.
func (k *Counter) Put(b *[BlockSize]byte) {
	binary.LittleEndian.PutUint64(b[0:8], k.n0)
	binary.LittleEndian.PutUint64(b[8:16], uint64(k.n1)|uint64(bits.ReverseBytes32(k.Count))<<32)
}

// Fill writes the counter blocks k, inc32(k), … into buf (whole blocks)
// and advances k past them.
func (k *Counter) Fill(buf []byte) {
	for i := 0; i+BlockSize <= len(buf); i += BlockSize {
		k.Put((*[BlockSize]byte)(buf[i:]))
		k.Count++
	}
}
