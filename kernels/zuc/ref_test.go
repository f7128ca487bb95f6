//go:build amd64 && gc && !purego

package zuc

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/emmansun/gmsm/zuc"

	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// laneSpec describes one lane's ZUC instance for the differential tests.
type laneSpec struct {
	key []byte // 16 (ZUC-128) or 32 (ZUC-256) bytes
	iv  []byte // 16 or 23 bytes
	c   ZUC256Constants
}

func randomSpec(r *rand.Rand, zuc256 bool) laneSpec {
	var s laneSpec
	if zuc256 {
		s.key, s.iv = make([]byte, 32), make([]byte, 23)
	} else {
		s.key, s.iv = make([]byte, 16), make([]byte, 16)
	}
	for i := range s.key {
		s.key[i] = byte(r.Uint32())
	}
	for i := range s.iv {
		s.iv[i] = byte(r.Uint32())
	}
	return s
}

// gmsmKeyStream returns the first n keystream words of spec from gmsm (the
// oracle): the keystream bytes of XORKeyStream over zeros, big-endian words.
func gmsmKeyStream(t testing.TB, s laneSpec, n int) []uint32 {
	t.Helper()
	if s.c != ZUC256Keystream {
		t.Fatalf("gmsm exposes no keystream for ZUC-256 MAC constants")
	}
	c, err := zuc.NewCipher(s.key, s.iv)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4*n)
	c.XORKeyStream(b, b)
	w := make([]uint32, n)
	for i := range w {
		w[i] = binary.BigEndian.Uint32(b[4*i:])
	}
	return w
}

// laneState abstracts State16 and State8 for shared tests.
type laneState interface {
	LoadZUC128(lane int, key, iv *[16]byte)
	LoadZUC256(lane int, key *[32]byte, iv *[23]byte, c ZUC256Constants)
	Init()
	KeyStream(ks []uint32, stride, n int)
	Lane(lane int) Lane
	SetLane(lane int, l *Lane)
}

type tierCase struct {
	name      string
	lanes     int
	supported bool
	newState  func() laneState
	xor       func(st laneState, dst, src [][]byte, n int)
}

// x8 is a State8 run on one of the 8-lane kernel sets.
type x8 struct {
	*State8
	k Kernels8
}

func (s x8) Init()                                { s.State8.Init(s.k) }
func (s x8) KeyStream(ks []uint32, stride, n int) { s.State8.KeyStream(s.k, ks, stride, n) }

func x8Case(k Kernels8) tierCase {
	return tierCase{
		name: "x8-" + k.String(), lanes: k.Lanes(), supported: k.Supported(),
		newState: func() laneState { return x8{new(State8), k} },
		xor: func(st laneState, dst, src [][]byte, n int) {
			s := st.(x8)
			s.State8.XORKeyStream(s.k, (*[Lanes8][]byte)(dst), (*[Lanes8][]byte)(src), n)
		},
	}
}

// x16 is a State16 run on one of the 16-lane kernel sets.
type x16 struct {
	*State16
	k Kernels16
}

func (s x16) Init()                                { s.State16.Init(s.k) }
func (s x16) KeyStream(ks []uint32, stride, n int) { s.State16.KeyStream(s.k, ks, stride, n) }

func x16Case(k Kernels16) tierCase {
	return tierCase{
		name: "x16-" + k.String(), lanes: k.Lanes(), supported: k.Supported(),
		newState: func() laneState { return x16{new(State16), k} },
		xor: func(st laneState, dst, src [][]byte, n int) {
			s := st.(x16)
			s.State16.XORKeyStream(s.k, (*[Lanes16][]byte)(dst), (*[Lanes16][]byte)(src), n)
		},
	}
}

// kernels16 are the 16-lane kernel sets.
var kernels16 = []Kernels16{GFNI16, AESNI16}

// forEachKernels16 runs f for every 16-lane kernel set (see needKernels
// for a set the CPU lacks).
func forEachKernels16(t *testing.T, f func(t *testing.T, k Kernels16)) {
	for _, k := range kernels16 {
		t.Run("x16-"+k.String(), func(t *testing.T) {
			needKernels(t, k.Supported(), "the 16-lane kernels "+k.String())
			f(t, k)
		})
	}
}

var tiers = []tierCase{
	x16Case(GFNI16),
	x16Case(AESNI16),
	x8Case(GFNI8),
	x8Case(AESNI8),
}

// needKernels skips t when the CPU lacks the kernels named by what
// (supported false), or fails it when kerneltest.Required: a tier cannot
// pass there by skipping.
func needKernels(t testing.TB, supported bool, what string) {
	t.Helper()
	if !supported {
		kerneltest.Unsupported(t, "CPU lacks %s", what)
	}
}

// forEachTier runs f for every tier (see needKernels for a tier the CPU
// lacks).
func forEachTier(t *testing.T, f func(t *testing.T, tc tierCase)) {
	for _, tc := range tiers {
		t.Run(tc.name, func(t *testing.T) {
			needKernels(t, tc.supported, "the kernels of "+tc.name)
			f(t, tc)
		})
	}
}

// loader is what load needs of a lane state.
type loader interface {
	LoadZUC128(lane int, key, iv *[16]byte)
	LoadZUC256(lane int, key *[32]byte, iv *[23]byte, c ZUC256Constants)
}

func load(st loader, lane int, s laneSpec) {
	if len(s.key) == 16 {
		st.LoadZUC128(lane, (*[16]byte)(s.key), (*[16]byte)(s.iv))
	} else {
		st.LoadZUC256(lane, (*[32]byte)(s.key), (*[23]byte)(s.iv), s.c)
	}
}
