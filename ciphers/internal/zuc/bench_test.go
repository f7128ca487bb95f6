package zuc

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/gmtun/gmtun/internal/cputime"
)

// The variants below isolate the speed techniques of the package doc, one
// step at a time, from the literal transcription (spec_test.go) to the
// production unrolled block. Each is checked against the spec first.

// lazyWord is specState.word with the LFSR feedback summed in a uint64 and
// reduced once (two folds) instead of after each of the six additions.
func (st *specState) lazyWord(merged bool) uint32 {
	s := &st.s
	x0 := (s[15]>>15)<<16 | s[14]&0xffff
	x1 := s[11]<<16 | s[9]>>15
	x2 := s[7]<<16 | s[5]>>15
	x3 := s[2]<<16 | s[0]>>15
	z := ((x0 ^ st.r1) + st.r2) ^ x3
	w1 := st.r1 + x1
	w2 := st.r2 ^ x2
	u := specL1(w1<<16 | w2>>16)
	v := specL2(w2<<16 | w1>>16)
	if merged {
		st.r1 = sbox32[0][u>>24] | sbox32[1][byte(u>>16)] | sbox32[2][byte(u>>8)] | sbox32[3][byte(u)]
		st.r2 = sbox32[0][v>>24] | sbox32[1][byte(v>>16)] | sbox32[2][byte(v>>8)] | sbox32[3][byte(v)]
	} else {
		st.r1, st.r2 = specS(u), specS(v)
	}
	f := uint64(s[15])<<15 + uint64(s[13])<<17 + uint64(s[10])<<21 + uint64(s[4])<<20 + uint64(s[0])<<8 + uint64(s[0])
	f = f&p31 + f>>31
	copy(s[:], s[1:])
	s[15] = uint32(f&p31 + f>>31)
	return z
}

// loopBlock is a 16-round block with lazy reduction and byte S-boxes,
// written as a loop over a 32-cell register so the LFSR never shifts.
func loopBlock(st *State, ks *[16]uint32) {
	var s [32]uint32
	copy(s[:], st.s[:])
	r1, r2 := st.r1, st.r2
	for i := 0; i < 16; i++ {
		x0 := (s[i+15]&0x7fff8000)<<1 | s[i+14]&0xffff
		x1 := s[i+11]<<16 | s[i+9]>>15
		x2 := s[i+7]<<16 | s[i+5]>>15
		ks[i] = ((x0 ^ r1) + r2) ^ (s[i+2]<<16 | s[i]>>15)
		w1 := r1 + x1
		w2 := r2 ^ x2
		u := w1<<16 | w2>>16
		v := w2<<16 | w1>>16
		u ^= bits.RotateLeft32(u, 2) ^ bits.RotateLeft32(u, 10) ^ bits.RotateLeft32(u, 18) ^ bits.RotateLeft32(u, 24)
		v ^= bits.RotateLeft32(v, 8) ^ bits.RotateLeft32(v, 14) ^ bits.RotateLeft32(v, 22) ^ bits.RotateLeft32(v, 30)
		r1 = uint32(s0box[u>>24])<<24 | uint32(s1box[byte(u>>16)])<<16 | uint32(s0box[byte(u>>8)])<<8 | uint32(s1box[byte(u)])
		r2 = uint32(s0box[v>>24])<<24 | uint32(s1box[byte(v>>16)])<<16 | uint32(s0box[byte(v>>8)])<<8 | uint32(s1box[byte(v)])
		f := uint64(s[i+15])<<15 + uint64(s[i+13])<<17 + uint64(s[i+10])<<21 + uint64(s[i+4])<<20 + uint64(s[i])<<8 + uint64(s[i])
		f = f&p31 + f>>31
		s[i+16] = uint32(f&p31 + f>>31)
	}
	copy(st.s[:], s[16:])
	st.r1, st.r2 = r1, r2
}

func TestCoreVariants(t *testing.T) {
	key, iv := make([]byte, 16), make([]byte, 16)
	for i := range key {
		key[i], iv[i] = byte(i*7+1), byte(i*13+5)
	}
	want := specInit128(key, iv).words(64)
	for _, merged := range []bool{false, true} {
		st := specInit128(key, iv)
		for i, w := range want {
			if z := st.lazyWord(merged); z != w {
				t.Fatalf("lazyWord(merged=%v) word %d = %08x, want %08x", merged, i, z, w)
			}
		}
	}
	for name, f := range map[string]func(*State, *[16]uint32){
		"loopBlock": loopBlock, "keystreamBlockByteSbox": keystreamBlockByteSbox, "keystreamBlock": keystreamBlock,
	} {
		var st State
		st.Init128((*[16]byte)(key), (*[16]byte)(iv))
		var ks [16]uint32
		for blk := range 4 {
			f(&st, &ks)
			for i, z := range ks {
				if z != want[16*blk+i] {
					t.Fatalf("%s word %d = %08x, want %08x", name, 16*blk+i, z, want[16*blk+i])
				}
			}
		}
	}
}

// BenchmarkCoreVariants measures keystream generation (4 KiB) for each
// technique; MB/s are keystream bytes.
func BenchmarkCoreVariants(b *testing.B) {
	const words = 1024
	key, iv := make([]byte, 16), make([]byte, 16)
	var sink uint32
	run := func(name string, f func()) {
		b.Run(name, func(b *testing.B) { cputime.Loop(b, 4*words, f) })
	}
	spec := specInit128(key, iv)
	run("1-spec", func() {
		for range words {
			sink ^= spec.word()
		}
	})
	run("2-lazy-reduction", func() {
		for range words {
			sink ^= spec.lazyWord(false)
		}
	})
	run("3-lazy+merged-sbox", func() {
		for range words {
			sink ^= spec.lazyWord(true)
		}
	})
	var st State
	st.Init128((*[16]byte)(key), (*[16]byte)(iv))
	var ks [16]uint32
	run("4-lazy+no-shift-loop(byte-sbox)", func() {
		for range words / 16 {
			loopBlock(&st, &ks)
			sink ^= ks[0]
		}
	})
	run("5-unrolled-array(byte-sbox)", func() {
		for range words / 16 {
			keystreamBlockByteSbox(&st, &ks)
			sink ^= ks[0]
		}
	})
	run("6-unrolled-array+circuit-sbox(production)", func() {
		for range words / 16 {
			keystreamBlock(&st, &ks)
			sink ^= ks[0]
		}
	})
	_ = sink
}

// BenchmarkInit measures one ZUC-128 and one ZUC-256 initialisation (33
// rounds each), the fixed cost per packet and key.
func BenchmarkInit(b *testing.B) {
	var k16, iv16 [16]byte
	var k32 [32]byte
	var iv23 [23]byte
	d, _ := D256(16)
	var st State
	b.Run("128", func(b *testing.B) { cputime.Loop(b, 0, func() { st.Init128(&k16, &iv16) }) })
	b.Run("256", func(b *testing.B) { cputime.Loop(b, 0, func() { st.Init256(&k32, &iv23, &d) }) })
}

// BenchmarkMAC measures the MAC combination alone over 1436 bytes (a
// 1420-byte body plus the header), including its keystream.
func BenchmarkMAC(b *testing.B) {
	msg := make([]byte, 1436)
	var k16, iv16 [16]byte
	var k32 [32]byte
	var iv23 [23]byte
	var st State
	b.Run("EIA3", func(b *testing.B) {
		cputime.Loop(b, len(msg), func() {
			st.Init128(&k16, &iv16)
			EIA3Generic(&st, msg, 8*len(msg))
		})
	})
	for _, n := range []int{4, 8, 16} {
		d, _ := D256(n)
		tag := make([]byte, n)
		b.Run(fmt.Sprintf("MAC256-%dbit", 8*n), func(b *testing.B) {
			cputime.Loop(b, len(msg), func() {
				st.Init256(&k32, &iv23, &d)
				MAC256Generic(&st, msg, 8*len(msg), tag)
			})
		})
	}
}
