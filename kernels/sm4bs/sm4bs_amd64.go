//go:build amd64 && gc && !purego

package sm4bs

import (
	"encoding/binary"

	"github.com/gmtun/gmtun/kernels/cpu"
)

// BlockSize is the SM4 block size in bytes.
const BlockSize = 16

// BatchBlocks is the number of blocks one kernel pass processes; shorter
// inputs (and the tail of longer ones) are padded to a full batch.
const BatchBlocks = 256

// BatchBlocks512 is the batch of the AVX-512 form (EncryptBlocks512,
// XORKeyStream512): 512 blocks, one ZMM per bit plane.
const BatchBlocks512 = 512

const (
	batchBytes    = BatchBlocks * BlockSize
	batch512Bytes = BatchBlocks512 * BlockSize
)

// Supported reports whether the running CPU (after GODEBUG overrides) has
// AVX2 (with AVX and BMI2, as kernels/cpu groups them).
func Supported() bool { return cpu.X86.AVX2 }

// Supported512 reports whether the running CPU (after GODEBUG overrides)
// has AVX-512 F, BW, VL and DQ (cpu.X86.AVX512, the cpu.TierAVX512 tier;
// the kernel uses only F and BW): the features of EncryptBlocks512 and
// XORKeyStream512.
func Supported512() bool { return cpu.X86.AVX512 }

func check() {
	if !Supported() {
		panic("sm4bs: CPU lacks AVX2")
	}
}

func check512() {
	if !Supported512() {
		panic("sm4bs: CPU lacks AVX-512")
	}
}

// EncryptBlocks encrypts src into dst with the round keys rk (SM4
// encryption, GB/T 32907-2016 §7.1; decryption is the same with the round
// keys reversed, §7.2). len(src) must be a multiple of BlockSize and dst at
// least as long; dst and src must be equal or not overlap. Whole batches
// run in place on dst; a final partial batch goes through a stack buffer.
func EncryptBlocks(rk *[32]uint32, dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic("sm4bs: input not full blocks")
	}
	if len(dst) < len(src) {
		panic("sm4bs: output smaller than input")
	}
	if len(src) == 0 {
		return
	}
	check()
	full := len(src) / batchBytes * batchBytes
	if full > 0 {
		encryptBlocksAVX2(rk, &dst[0], &src[0], full/BlockSize)
	}
	if rest := len(src) - full; rest > 0 {
		var buf [batchBytes]byte
		copy(buf[:], src[full:])
		encryptBlocksAVX2(rk, &buf[0], &buf[0], BatchBlocks)
		copy(dst[full:], buf[:rest])
		clear(buf[:])
	}
}

// XORKeyStream XORs the whole-block prefix of src (len(src)/BlockSize
// blocks) with the SM4 keystream for the counter blocks ctr, inc32(ctr), …
// (NIST SP 800-38D §6.5 GCTR, §6.2 inc32) into dst, and advances ctr past
// the blocks used. The trailing len(src)%BlockSize bytes are left to the
// caller, and dst is not written past the whole blocks. dst must be at
// least as long as the whole-block prefix; dst and src must be equal or not
// overlap. The keystream of the padding blocks of a partial batch is
// erased before return.
func XORKeyStream(rk *[32]uint32, ctr *[16]byte, dst, src []byte) {
	n := len(src) / BlockSize
	if n == 0 {
		return
	}
	if len(dst) < n*BlockSize {
		panic("sm4bs: output smaller than input")
	}
	check()
	full := n / BatchBlocks * batchBytes
	if full > 0 {
		xorKeyStreamAVX2(rk, ctr, &dst[0], &src[0], full/BlockSize)
		inc32(ctr, full/BlockSize)
	}
	if rest := n*BlockSize - full; rest > 0 {
		var buf [batchBytes]byte
		copy(buf[:], src[full:full+rest])
		xorKeyStreamAVX2(rk, ctr, &buf[0], &buf[0], BatchBlocks)
		copy(dst[full:], buf[:rest])
		clear(buf[:])
		inc32(ctr, rest/BlockSize)
	}
}

// inc32 adds n to the last 32-bit big-endian word of ctr modulo 2^32
// (NIST SP 800-38D §6.2).
func inc32(ctr *[16]byte, n int) {
	binary.BigEndian.PutUint32(ctr[12:], binary.BigEndian.Uint32(ctr[12:])+uint32(n))
}

// EncryptBlocks512 is EncryptBlocks on AVX-512: 512 blocks per pass, the
// S-box in ternary logic (VPTERNLOGD). A final partial batch is padded to
// 512 blocks.
func EncryptBlocks512(rk *[32]uint32, dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic("sm4bs: input not full blocks")
	}
	if len(dst) < len(src) {
		panic("sm4bs: output smaller than input")
	}
	if len(src) == 0 {
		return
	}
	check512()
	full := len(src) / batch512Bytes * batch512Bytes
	if full > 0 {
		encryptBlocksAVX512(rk, &dst[0], &src[0], full/BlockSize)
	}
	if rest := len(src) - full; rest > 0 {
		var buf [batch512Bytes]byte
		copy(buf[:], src[full:])
		encryptBlocksAVX512(rk, &buf[0], &buf[0], BatchBlocks512)
		copy(dst[full:], buf[:rest])
		clear(buf[:])
	}
}

// XORKeyStream512 is XORKeyStream on AVX-512 (512 blocks per pass; the
// keystream of the padding blocks of a partial batch is erased).
func XORKeyStream512(rk *[32]uint32, ctr *[16]byte, dst, src []byte) {
	n := len(src) / BlockSize
	if n == 0 {
		return
	}
	if len(dst) < n*BlockSize {
		panic("sm4bs: output smaller than input")
	}
	check512()
	full := n / BatchBlocks512 * batch512Bytes
	if full > 0 {
		xorKeyStreamAVX512(rk, ctr, &dst[0], &src[0], full/BlockSize)
		inc32(ctr, full/BlockSize)
	}
	if rest := n*BlockSize - full; rest > 0 {
		var buf [batch512Bytes]byte
		copy(buf[:], src[full:full+rest])
		xorKeyStreamAVX512(rk, ctr, &buf[0], &buf[0], BatchBlocks512)
		copy(dst[full:], buf[:rest])
		clear(buf[:])
		inc32(ctr, rest/BlockSize)
	}
}
