//go:build amd64 && gc && !purego

package zuc

import (
	"encoding/binary"

	"github.com/gmtun/gmtun/kernels/cpu"
)

// The MAC kernels compute 128-EIA3 and ZUC-256-MAC tags of one message
// from its keystream words with carry-less multiplication (see
// kernels/_gen/zuc/mac.go for the algebra): PCLMULQDQ on XMM, or
// VPCLMULQDQ on ZMM with GFNI bit reversal (four 16-byte blocks per
// instruction) when AVX-512 is available.
var (
	useMAC       = cpu.X86.AESNI
	useMACAVX512 = cpu.X86.AVX512VAES && cpu.X86.AVX512GFNI
)

// MACSupported reports whether the CPU runs the MAC kernels (EIA3Tag and
// MAC256Tag): PCLMULQDQ and SSSE3.
func MACSupported() bool { return useMAC }

// MACWide reports whether the MAC kernels use the 512-bit path (AVX-512
// F/BW/VL/DQ, VPCLMULQDQ and GFNI).
func MACWide() bool { return useMAC && useMACAVX512 }

func requireMAC() {
	if !useMAC {
		panic("zuc: the MAC kernels need PCLMULQDQ and SSSE3")
	}
}

// EIA3KeyStreamWords returns the number of keystream words 128-EIA3 needs
// for a message of bits bits: L = ⌈bits/32⌉ + 2 (ETSI/SAGE 128-EEA3 &
// 128-EIA3 Document 1 §4).
func EIA3KeyStreamWords(bits int) int { return (bits+31)/32 + 2 }

// MAC256KeyStreamWords returns the number of keystream words ZUC-256-MAC
// needs for a message of bits bits and a tag of tagBytes (4, 8 or 16)
// bytes: ⌈(bits + 2t)/32⌉ with t = 8·tagBytes (the tag initialisation uses
// the first t bits, the last window ends at bit bits + 2t; ZUC-256, 2018,
// §3).
func MAC256KeyStreamWords(bits, tagBytes int) int { return (bits + 16*tagBytes + 31) / 32 }

// macBlocks dispatches one kernel call on nblocks > 0 blocks.
func macBlocks(acc *[6]uint64, products int, msg *byte, ks *uint32, nblocks int) {
	switch {
	case useMACAVX512 && products == 2:
		macBlocks2AVX512(acc, msg, ks, nblocks)
	case useMACAVX512:
		macBlocks3AVX512(acc, msg, ks, nblocks)
	case products == 2:
		macBlocks2CLMUL(acc, msg, ks, nblocks)
	default:
		macBlocks3CLMUL(acc, msg, ks, nblocks)
	}
}

// macCore accumulates P_j = ⊕_k K_{k+j}·M_k (j < products) over the first
// bits bits of msg, ks starting at the core's keystream offset. Whole
// 16-byte blocks whose keystream reads stay inside ks go to the kernel
// directly; the rest (at most 255 bits, given the length checks of the
// callers) is copied into zero-padded local blocks, the message bits past
// bits cleared.
//
// With the keystream words each caller requires, the words copied as zero
// padding only ever meet message bits past bits or tag bits the caller
// discards.
func macCore(acc *[6]uint64, products int, msg []byte, bits int, ks []uint32) {
	span := 2 + 2*products // keystream words read by one block
	nb := min(bits/128, max(0, (len(ks)+4-span)/4))
	if nb > 0 {
		macBlocks(acc, products, &msg[0], &ks[0], nb)
	}
	rest := bits - 128*nb
	if rest == 0 {
		return
	}
	if rest > 256 {
		panic("zuc: internal error: MAC tail too long")
	}
	var m [32]byte
	var k [16]uint32
	at, nbytes := 16*nb, (rest+7)/8
	copy(m[:], msg[at:at+nbytes])
	if r := rest % 8; r != 0 {
		m[nbytes-1] &= byte(0xff << (8 - r))
	}
	copy(k[:], ks[4*nb:])
	macBlocks(acc, products, &m[0], &k[0], (rest+127)/128)
}

// window32 returns the 32 keystream bits starting at bit i (bit 0 = MSB of
// ks[0]). i is public (derived from the message length).
func window32(ks []uint32, i int) uint32 {
	w, b := i/32, uint(i%32)
	if b == 0 {
		return ks[w]
	}
	return ks[w]<<b | ks[w+1]>>(32-b)
}

func checkMAC(msg []byte, bits int, ks []uint32, words int) {
	if bits < 0 || len(msg) < (bits+7)/8 {
		panic("zuc: invalid MAC message length")
	}
	if len(ks) < words {
		panic("zuc: MAC keystream too short")
	}
}

// EIA3Tag returns the 128-EIA3 MAC (ETSI/SAGE 128-EEA3 & 128-EIA3 Document 1
// §4) of the first bits bits of msg (bit 0 = MSB of msg[0]; bits past bits
// are ignored). ks holds the keystream words z_1, z_2, … of the EIA3
// instance, at least EIA3KeyStreamWords(bits) of them:
//
//	T = ⊕_{i<bits, m_i=1} W_i ⊕ W_bits ⊕ z_L,
//
// W_i being the 32-bit keystream window at bit i. It does not allocate.
func EIA3Tag(msg []byte, bits int, ks []uint32) uint32 {
	requireMAC()
	words := EIA3KeyStreamWords(bits)
	checkMAC(msg, bits, ks, words)
	var acc [6]uint64
	macCore(&acc, 2, msg, bits, ks)
	core := acc[0] ^ acc[3] // Σ W64_i; W_i is its upper half
	return uint32(core>>32) ^ window32(ks, bits) ^ ks[words-1]
}

// MAC256Tag writes the ZUC-256 MAC (ZUC design team, "The ZUC-256 Stream
// Cipher", 2018, §3) of the first bits bits of msg into tag, whose length
// (4, 8 or 16 bytes) is the tag size t/8; the tag words are big-endian.
// ks holds the keystream words of the MAC instance (loaded with
// ZUC256MAC32, ZUC256MAC64 or ZUC256MAC128), at least
// MAC256KeyStreamWords(bits, len(tag)) of them:
//
//	T = W^t_0 ⊕ ⊕_{i<bits, m_i=1} W^t_{t+i} ⊕ W^t_{t+bits},
//
// W^t_j being the t-bit keystream window at bit j. It does not allocate.
func MAC256Tag(msg []byte, bits int, ks []uint32, tag []byte) {
	requireMAC()
	t := 8 * len(tag)
	if t != 32 && t != 64 && t != 128 {
		panic("zuc: ZUC-256 MAC tag must be 4, 8 or 16 bytes")
	}
	checkMAC(msg, bits, ks, MAC256KeyStreamWords(bits, len(tag)))
	var acc [6]uint64
	var w [4]uint32 // Σ W^t_{t+i}, 32 bits per word
	switch t {
	case 32:
		// W^32_{32+i} is the low half of the 64-bit window at bit i.
		macCore(&acc, 2, msg, bits, ks)
		w[0] = uint32(acc[0] ^ acc[3])
	case 64:
		macCore(&acc, 2, msg, bits, ks[2:])
		c := acc[0] ^ acc[3]
		w[0], w[1] = uint32(c>>32), uint32(c)
	case 128:
		macCore(&acc, 3, msg, bits, ks[4:])
		c0, c1 := acc[0]^acc[3], acc[2]^acc[5]
		w[0], w[1], w[2], w[3] = uint32(c0>>32), uint32(c0), uint32(c1>>32), uint32(c1)
	}
	for j := 0; j < t/32; j++ {
		binary.BigEndian.PutUint32(tag[4*j:], w[j]^ks[j]^window32(ks, t+bits+32*j))
	}
}

// EIA3TagLanes sets tags[c] to EIA3Tag(msgs[c], 8·len(msgs[c]), ks[c·stride:])
// for every c with a non-nil msgs[c] (lane c's keystream at ks[c·stride:],
// at least EIA3KeyStreamWords(8·len(msgs[c])) words); other tags are left
// unchanged. On the 512-bit MAC path (MACWide) all messages are
// accumulated in one kernel call, without the per-message calls and tail
// copies of EIA3Tag. It does not allocate.
func EIA3TagLanes(msgs *[Lanes16][]byte, ks []uint32, stride int, tags *[Lanes16]uint32) {
	requireMAC()
	if !useMACAVX512 {
		for c, m := range msgs {
			if m != nil {
				tags[c] = EIA3Tag(m, 8*len(m), ks[c*stride:])
			}
		}
		return
	}
	acc, lane, n := macLanes(2, msgs, ks, stride)
	for i := range n {
		c := lane[i]
		m, k := msgs[c], ks[c*stride:]
		words := EIA3KeyStreamWords(8 * len(m))
		core := acc[i][0] ^ acc[i][3]
		tags[c] = uint32(core>>32) ^ window32(k, 8*len(m)) ^ k[words-1]
	}
}

// MAC256TagLanes sets tags[c] to the 128-bit MAC256Tag of msgs[c] (all
// its bits) from the keystream at ks[c·stride:] (loaded with
// ZUC256MAC128; at least MAC256KeyStreamWords(8·len(msgs[c]), 16) words)
// for every c with a non-nil msgs[c], as EIA3TagLanes.
func MAC256TagLanes(msgs *[Lanes16][]byte, ks []uint32, stride int, tags *[Lanes16][16]byte) {
	requireMAC()
	if !useMACAVX512 {
		for c, m := range msgs {
			if m != nil {
				MAC256Tag(m, 8*len(m), ks[c*stride:], tags[c][:])
			}
		}
		return
	}
	const t = 128
	acc, lane, n := macLanes(3, msgs, ks, stride)
	for i := range n {
		c := lane[i]
		m, k := msgs[c], ks[c*stride:]
		a := &acc[i]
		c0, c1 := a[0]^a[3], a[2]^a[5]
		w := [4]uint32{uint32(c0 >> 32), uint32(c0), uint32(c1 >> 32), uint32(c1)}
		for j := range w {
			binary.BigEndian.PutUint32(tags[c][4*j:], w[j]^k[j]^window32(k, t+8*len(m)+32*j))
		}
	}
}

// macLanes runs the lane MAC kernel with 2 (128-EIA3) or 3 (ZUC-256
// MAC-128, core keystream from word 4) products on the non-nil messages
// of msgs, after checking their keystream bounds: acc[i] are the
// accumulators of message lane[i], i < n. The kernel arguments stay in
// this function's locals, so the buffers do not escape.
func macLanes(products int, msgs *[Lanes16][]byte, ks []uint32, stride int) (acc [Lanes16][6]uint64, lane [Lanes16]int, n int) {
	var msg [Lanes16]*byte
	var kp [Lanes16]*uint32
	var nbytes, nwords [Lanes16]int
	skip := 0
	if products == 3 {
		skip = 4
	}
	for c, m := range msgs {
		if m == nil {
			continue
		}
		w := EIA3KeyStreamWords(8 * len(m))
		if products == 3 {
			w = MAC256KeyStreamWords(8*len(m), 16)
		}
		if stride < 0 || c*stride+w > len(ks) {
			panic("zuc: MAC keystream too short")
		}
		if len(m) > 0 {
			msg[n] = &m[0]
		}
		nbytes[n] = len(m)
		kp[n] = &ks[c*stride+skip]
		nwords[n] = w - skip
		lane[n] = c
		n++
	}
	if products == 3 {
		macLanes3AVX512(&acc, &msg, &nbytes, &kp, &nwords, n)
	} else {
		macLanes2AVX512(&acc, &msg, &nbytes, &kp, &nwords, n)
	}
	return acc, lane, n
}
