//go:build amd64 && gc && !purego

package zucaesni

import (
	"encoding/binary"

	"github.com/gmtun/gmtun/kernels/cpu"
	"github.com/gmtun/gmtun/kernels/zuclanes"
)

// useAESNI is set once from the CPU features (kernels/cpu honours the
// GODEBUG cpu.* switches).
var useAESNI = cpu.X86.AVX2 && cpu.X86.AESNI

// Supported reports whether the CPU runs these kernels (AVX2, BMI2 and
// AES-NI).
func Supported() bool { return useAESNI }

// Lanes is the lane count of the kernels; BlockWords the keystream words
// per lane and kernel iteration.
const (
	Lanes      = zuclanes.Lanes8
	BlockWords = zuclanes.BlockWords
	BlockBytes = zuclanes.BlockBytes
)

// State layout of zuclanes.State8 (rows of Lanes words): 16 LFSR rows, R1,
// R2, 16 scratch rows.
const (
	rowScratch = 18
	stateWords = 34 * Lanes
)

// The kernels work on the words of a zuclanes.State8 (its Words, checked
// here at compile time to have this layout's size).
var _ func(*zuclanes.State8) *[stateWords]uint32 = (*zuclanes.State8).Words

func words(s *zuclanes.State8) *[stateWords]uint32 { return s.Words() }

func require() {
	if !useAESNI {
		panic("zucaesni: the 8-lane kernels need AVX2 and AES-NI")
	}
}

// Init runs the 32 initialisation rounds and the discarded first work round
// (GB/T 33133.1 §3.5) on all 8 lanes of s, as s.Init does.
func Init(s *zuclanes.State8) {
	require()
	initRounds8AESNI(words(s))
}

// KeyStream generates the next n keystream words of every lane of s: lane
// c's words go to ks[c*stride : c*stride+n], as s.KeyStream does. stride
// must be at least n.
func KeyStream(s *zuclanes.State8, ks []uint32, stride, n int) {
	require()
	if n < 0 || stride < n {
		panic("zucaesni: invalid keystream length or stride")
	}
	if n > 0 && len(ks) < (Lanes-1)*stride+n {
		panic("zucaesni: keystream buffer too short")
	}
	w := words(s)
	if nb := n / BlockWords; nb > 0 {
		keyStream8AESNI(w, &ks[0], stride, nb)
	}
	if r := n % BlockWords; r > 0 {
		rows8AESNI(w, r)
		at := n - r
		for c := 0; c < Lanes; c++ {
			out := ks[c*stride+at : c*stride+n]
			for i := range out {
				out[i] = w[(rowScratch+i)*Lanes+c]
			}
		}
	}
}

// XORKeyStream sets dst[c][:n] = src[c][:n] ⊕ keystream of lane c for every
// lane with dst[c] != nil (keystream words big-endian), as s.XORKeyStream
// does. It consumes ⌈n/4⌉ words per lane. dst[c] and src[c] must overlap
// entirely or not at all.
func XORKeyStream(s *zuclanes.State8, dst, src *[Lanes][]byte, n int) {
	require()
	var dp, sp [Lanes]*byte
	for c := range dst {
		dp[c], sp[c] = lanePointer(dst[c], src[c], n)
	}
	w := words(s)
	if nb := n / BlockBytes; nb > 0 {
		xorKeyStream8AESNI(w, &dp, &sp, nb)
	}
	if r := n % BlockBytes; r > 0 {
		rows8AESNI(w, (r+3)/4)
		at := n - r
		for c := range dst {
			if dst[c] != nil {
				tailXOR(w, c, dst[c][at:n], src[c][at:n])
			}
		}
	}
}

// tailXOR XORs the first len(src) bytes of the big-endian scratch words of
// lane c.
func tailXOR(w *[stateWords]uint32, c int, dst, src []byte) {
	var b [4]byte
	for i := 0; i < len(src); i += 4 {
		binary.BigEndian.PutUint32(b[:], w[(rowScratch+i/4)*Lanes+c])
		m := min(4, len(src)-i)
		for j := 0; j < m; j++ {
			dst[i+j] = src[i+j] ^ b[j]
		}
	}
}

// lanePointer validates one lane's slices and returns their base pointers;
// a nil dst makes the lane inactive (nil pointers), as in zuclanes.
func lanePointer(dst, src []byte, n int) (*byte, *byte) {
	if dst == nil {
		return nil, nil
	}
	if len(dst) < n || len(src) < n {
		panic("zucaesni: lane buffer too short")
	}
	if n == 0 {
		return nil, nil
	}
	return &dst[0], &src[0]
}

// State8 is a zuclanes.State8 whose Init, KeyStream and XORKeyStream run
// the kernels of this package (same method set; LoadZUC128, LoadZUC256,
// Lane and SetLane are zuclanes.State8's).
type State8 struct{ zuclanes.State8 }

// Init is Init(&s.State8).
func (s *State8) Init() { Init(&s.State8) }

// KeyStream is KeyStream(&s.State8, ks, stride, n).
func (s *State8) KeyStream(ks []uint32, stride, n int) { KeyStream(&s.State8, ks, stride, n) }

// XORKeyStream is XORKeyStream(&s.State8, dst, src, n).
func (s *State8) XORKeyStream(dst, src *[Lanes][]byte, n int) { XORKeyStream(&s.State8, dst, src, n) }
