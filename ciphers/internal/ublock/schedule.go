package ublock

import (
	"encoding/binary"
	"strconv"
)

// Schedule is an expanded uBlock key: the encryption round keys RK_0 …
// RK_Rounds, each BlockSize bytes, stored big-endian exactly as the spec
// writes them (RK_i = bytes RK[i*BlockSize:(i+1)*BlockSize]). Decryption
// uses the same round keys in reverse order. A Schedule is immutable after
// initSchedule and safe for concurrent use; zero it to wipe the key.
type Schedule struct {
	Rounds    int            // 16 for 128/128, 24 for 128/256 and 256/256
	BlockSize int            // 16 or 32
	RK        [25 * 32]byte  // (Rounds+1)*BlockSize bytes used, the rest zero
	kernel    kernelSchedule // the kernels' own layout; see initKernelSchedule
}

// KeySizeError is returned for a key length that no variant (or not the
// requested variant) takes.
type KeySizeError int

// Error implements error.
func (k KeySizeError) Error() string {
	return "ublock: invalid key size " + strconv.Itoa(int(k))
}

// roundConstants are RC_1 … RC_24 of the spec (the top 32 bits of K0 in
// round i of the key schedule); 128/128 uses the first 16. They are the
// published table; TestRoundConstantsLFSR regenerates them from the 8-bit
// LFSR that produces them.
var roundConstants = [24]uint32{
	0x988cc9dd, 0xf0e4a1b5, 0x21357064, 0x8397d2c6, 0xc7d39682, 0x4f5b1e0a, 0x5e4a0f1b, 0x7c682d39,
	0x392d687c, 0xb3a7e2f6, 0xa7b3f6e2, 0x8e9adfcb, 0xdcc88d99, 0x786c293d, 0x30246175, 0xa1b5f0e4,
	0x8296d3c7, 0xc5d19480, 0x4a5e1b0f, 0x55410410, 0x6b7f3a2e, 0x17034652, 0xeffbbeaa, 0x1f0b4e5a,
}

// pk128 is PK for uBlock-128/128: a gather on the 16 nibbles of K0‖K1
// (index 0 = the top nibble of K0).
var pk128 = [16]uint8{6, 0, 8, 13, 1, 15, 5, 10, 4, 9, 12, 2, 11, 3, 7, 14}

// pk256 are the first 16 entries of PK for the 64-bit-word variants
// (128/256, then 256/256): a gather on the nibbles of K0. The other 16
// entries only swap the two 32-bit halves of K1.
var pk256 = [2][16]uint8{
	{10, 5, 15, 0, 2, 7, 8, 13, 14, 6, 4, 12, 1, 3, 11, 9},
	{10, 5, 15, 0, 2, 7, 8, 13, 1, 14, 4, 12, 9, 11, 3, 6},
}

// gatherNibbles returns the word whose nibble i (0 = the top nibble) is
// nibble p[i] of w. The indices are public constants.
func gatherNibbles(w uint64, p *[16]uint8) uint64 {
	var r uint64
	for i, j := range p {
		r |= (w >> (60 - 4*uint(j)) & 0xf) << (60 - 4*uint(i))
	}
	return r
}

// initSchedule expands key into s for the variant with the given block
// size: a 16-byte key and 16-byte blocks is uBlock-128/128, a 32-byte key
// with 16-byte blocks uBlock-128/256 and with 32-byte blocks
// uBlock-256/256. It runs in constant time and calls initKernelSchedule
// last.
func initSchedule(s *Schedule, key []byte, blockSize int) error {
	switch {
	case len(key) == KeySize128 && blockSize == BlockSize:
		*s = Schedule{Rounds: 16, BlockSize: BlockSize}
		expand128(s, key)
	case len(key) == KeySize256 && blockSize == BlockSize:
		*s = Schedule{Rounds: 24, BlockSize: BlockSize}
		expand256(s, key, &pk256[0])
	case len(key) == KeySize256 && blockSize == BlockSize256:
		*s = Schedule{Rounds: 24, BlockSize: BlockSize256}
		expand256(s, key, &pk256[1])
	default:
		return KeySizeError(len(key))
	}
	initKernelSchedule(s)
	return nil
}

// expand128 is the key schedule of uBlock-128/128: 32-bit key words.
func expand128(s *Schedule, key []byte) {
	k01 := binary.BigEndian.Uint64(key[0:8]) // K0 ‖ K1
	k2 := binary.BigEndian.Uint32(key[8:12])
	k3 := binary.BigEndian.Uint32(key[12:16])
	copy(s.RK[0:16], key)
	for i := 1; i <= s.Rounds; i++ {
		k01 = gatherNibbles(k01, &pk128)
		k0, k1 := uint32(k01>>32), uint32(k01)
		k2 ^= uint32(sboxWord(uint64(k0 ^ roundConstants[i-1])))
		k3 ^= uint32(tWord(uint64(k1)))
		// K = K2 ‖ K3 ‖ K1 ‖ K0.
		k01, k2, k3 = uint64(k2)<<32|uint64(k3), k1, k0
		rk := s.RK[16*i:]
		binary.BigEndian.PutUint64(rk[0:8], k01)
		binary.BigEndian.PutUint32(rk[8:12], k2)
		binary.BigEndian.PutUint32(rk[12:16], k3)
	}
}

// expand256 is the key schedule of uBlock-128/256 and 256/256 (64-bit key
// words), with pk the first half of the variant's PK. RK_i is the first
// s.BlockSize bytes of K after round i.
func expand256(s *Schedule, key []byte, pk *[16]uint8) {
	var k [4]uint64
	for j := range k {
		k[j] = binary.BigEndian.Uint64(key[8*j:])
	}
	n := s.BlockSize
	copy(s.RK[0:n], key)
	for i := 1; i <= s.Rounds; i++ {
		k0 := gatherNibbles(k[0], pk)
		k1 := k[1]<<32 | k[1]>>32
		k2 := k[2] ^ sboxWord(k0^uint64(roundConstants[i-1])<<32)
		k3 := k[3] ^ tWord(k1)
		k = [4]uint64{k2, k3, k1, k0}
		rk := s.RK[n*i:]
		for j := range n / 8 {
			binary.BigEndian.PutUint64(rk[8*j:], k[j])
		}
	}
	k = [4]uint64{}
}
