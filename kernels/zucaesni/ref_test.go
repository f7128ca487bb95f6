//go:build amd64 && gc && !purego

package zucaesni

import (
	"math/rand/v2"

	"github.com/gmtun/gmtun/kernels/zuclanes"
)

// ref is a plain, single-lane ZUC (GB/T 33133.1-2016 §3.3–3.5) written for
// the tests from the standard, started from a lane state as loaded by
// zuclanes.State8 (whose key loading is tested in kernels/zuclanes); the
// published vectors tie it to the standard.
type ref struct {
	s      [16]uint32
	r1, r2 uint32
}

const p31 = 0x7fffffff

func addP(a, b uint32) uint32 {
	c := a + b
	return (c & p31) + (c >> 31)
}

func rot31(x uint32, k uint) uint32 { return (x<<k | x>>(31-k)) & p31 }

func rotl(x uint32, k uint) uint32 { return x<<k | x>>(32-k) }

func sbox(x uint32) uint32 {
	return uint32(sbox0Table[x>>24])<<24 | uint32(sbox1Table[x>>16&0xff])<<16 |
		uint32(sbox0Table[x>>8&0xff])<<8 | uint32(sbox1Table[x&0xff])
}

func (z *ref) bits() (x0, x1, x2, x3 uint32) {
	s := &z.s
	x0 = (s[15]&0x7fff8000)<<1 | s[14]&0xffff
	x1 = (s[11]&0xffff)<<16 | s[9]>>15
	x2 = (s[7]&0xffff)<<16 | s[5]>>15
	x3 = (s[2]&0xffff)<<16 | s[0]>>15
	return
}

func (z *ref) f(x0, x1, x2 uint32) uint32 {
	w := (x0 ^ z.r1) + z.r2
	w1 := z.r1 + x1
	w2 := z.r2 ^ x2
	u := w1<<16 | w2>>16
	v := w2<<16 | w1>>16
	u = u ^ rotl(u, 2) ^ rotl(u, 10) ^ rotl(u, 18) ^ rotl(u, 24)
	v = v ^ rotl(v, 8) ^ rotl(v, 14) ^ rotl(v, 22) ^ rotl(v, 30)
	z.r1, z.r2 = sbox(u), sbox(v)
	return w
}

func (z *ref) lfsr(u uint32, init bool) {
	s := &z.s
	v := addP(s[0], rot31(s[0], 8))
	v = addP(v, rot31(s[4], 20))
	v = addP(v, rot31(s[10], 21))
	v = addP(v, rot31(s[13], 17))
	v = addP(v, rot31(s[15], 15))
	if init {
		v = addP(v, u)
	}
	if v == 0 {
		v = p31
	}
	copy(s[:15], s[1:])
	s[15] = v
}

func newRef(l zuclanes.Lane) *ref {
	z := &ref{s: l.S, r1: l.R1, r2: l.R2}
	for range 32 {
		x0, x1, x2, _ := z.bits()
		w := z.f(x0, x1, x2)
		z.lfsr(w>>1, true)
	}
	x0, x1, x2, _ := z.bits()
	z.f(x0, x1, x2)
	z.lfsr(0, false)
	return z
}

func (z *ref) word() uint32 {
	x0, x1, x2, x3 := z.bits()
	w := z.f(x0, x1, x2) ^ x3
	z.lfsr(0, false)
	return w
}

// laneSpec is one lane's ZUC instance.
type laneSpec struct {
	key []byte // 16 (ZUC-128) or 32 (ZUC-256) bytes
	iv  []byte // 16 or 23 bytes
	c   zuclanes.ZUC256Constants
}

func randomSpec(r *rand.Rand) laneSpec {
	var s laneSpec
	if r.IntN(2) == 0 {
		s.key, s.iv = make([]byte, 16), make([]byte, 16)
	} else {
		s.key, s.iv = make([]byte, 32), make([]byte, 23)
		s.c = zuclanes.ZUC256Constants(r.IntN(4))
	}
	for i := range s.key {
		s.key[i] = byte(r.Uint32())
	}
	for i := range s.iv {
		s.iv[i] = byte(r.Uint32())
	}
	return s
}

func load(st *zuclanes.State8, lane int, s laneSpec) {
	if len(s.key) == 16 {
		st.LoadZUC128(lane, (*[16]byte)(s.key), (*[16]byte)(s.iv))
	} else {
		st.LoadZUC256(lane, (*[32]byte)(s.key), (*[23]byte)(s.iv), s.c)
	}
}

// refOf returns the reference of lane spec s, initialised.
func refOf(s laneSpec) *ref {
	var st zuclanes.State8
	load(&st, 0, s)
	return newRef(st.Lane(0))
}

// bytes returns the next n keystream bytes of z (⌈n/4⌉ words consumed).
func (z *ref) bytes(n int) []byte {
	b := make([]byte, (n+3)/4*4)
	for i := 0; i < len(b); i += 4 {
		w := z.word()
		b[i], b[i+1], b[i+2], b[i+3] = byte(w>>24), byte(w>>16), byte(w>>8), byte(w)
	}
	return b[:n]
}
