package ublock

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/internal/reftables"
)

// The spec's tables (docs: ../shared/docs/ublock-notes.md §3–§5, the
// tables of the three published implementations; transcribed once in
// internal/reftables), the oracles of the circuits and shifts of the
// production code, and a plain byte-wise table implementation of uBlock
// written straight from the spec's description (refEncrypt, refDecrypt,
// refSchedule), which is the independent oracle of the nibble-sliced code.

var (
	specS    = reftables.UBlockS
	specSInv = reftables.UBlockSInv
	specT    = [16]byte{0x0, 0x2, 0x4, 0x6, 0x8, 0xa, 0xc, 0xe, 0x3, 0x1, 0x7, 0x5, 0xb, 0x9, 0xf, 0xd}

	specPL128    = reftables.UBlockPL128[:]
	specPR128    = reftables.UBlockPR128[:]
	specPLInv128 = reftables.UBlockPLInv128[:]
	specPRInv128 = reftables.UBlockPRInv128[:]
	specPL256    = reftables.UBlockPL256[:]
	specPR256    = reftables.UBlockPR256[:]
	specPLInv256 = reftables.UBlockPLInv256[:]
	specPRInv256 = reftables.UBlockPRInv256[:]

	specPK128    = reftables.UBlockPK128128[:]
	specPK128256 = reftables.UBlockPK128256[:]
	specPK256256 = reftables.UBlockPK256256[:]
)

// TestConstantsMatchSpec pins the key schedule's constants (schedule.go,
// production code, which may not import internal/reftables) to the spec's
// tables.
func TestConstantsMatchSpec(t *testing.T) {
	if roundConstants != reftables.UBlockRC {
		t.Errorf("roundConstants = %08x, want %08x", roundConstants, reftables.UBlockRC)
	}
	for _, c := range []struct {
		name string
		got  []uint8
		want []int
	}{
		{"pk128", pk128[:], reftables.UBlockPK128128[:]},
		{"pk256[0]", pk256[0][:], reftables.UBlockPK128256[:16]},
		{"pk256[1]", pk256[1][:], reftables.UBlockPK256256[:16]},
	} {
		for i, v := range c.got {
			if int(v) != c.want[i] {
				t.Errorf("%s[%d] = %d, want %d", c.name, i, v, c.want[i])
			}
		}
	}
}

func TestSboxCircuits(t *testing.T) {
	for x := range 16 {
		b := func(i int) uint64 { return -(uint64(x) >> i & 1) } // all-ones planes
		y0, y1, y2, y3 := sbox(b(0), b(1), b(2), b(3))
		got := byte(y0&1 | y1&1<<1 | y2&1<<2 | y3&1<<3)
		if got != specS[x] || y0+1 > 1 || y1+1 > 1 || y2+1 > 1 || y3+1 > 1 {
			t.Errorf("S(%x) = %x (planes %x %x %x %x), want %x", x, got, y0, y1, y2, y3, specS[x])
		}
		y0, y1, y2, y3 = sboxInv(b(0), b(1), b(2), b(3))
		got = byte(y0&1 | y1&1<<1 | y2&1<<2 | y3&1<<3)
		if got != specSInv[x] || y0+1 > 1 || y1+1 > 1 || y2+1 > 1 || y3+1 > 1 {
			t.Errorf("S⁻¹(%x) = %x, want %x", x, got, specSInv[x])
		}
		if specSInv[specS[x]] != byte(x) {
			t.Errorf("the spec tables are not inverse at %x", x)
		}
	}
}

// nibbleMap applies f to every nibble of w through a table.
func nibbleMap(w uint64, f *[16]byte) uint64 {
	var r uint64
	for i := 0; i < 64; i += 4 {
		r |= uint64(f[w>>i&15]) << i
	}
	return r
}

func TestWordMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		w := rng.Uint64()
		if got, want := sboxWord(w), nibbleMap(w, &specS); got != want {
			t.Fatalf("sboxWord(%016x) = %016x, want %016x", w, got, want)
		}
		if got, want := sboxInvWord(w), nibbleMap(w, &specSInv); got != want {
			t.Fatalf("sboxInvWord(%016x) = %016x, want %016x", w, got, want)
		}
		if got, want := tWord(w), nibbleMap(w, &specT); got != want {
			t.Fatalf("tWord(%016x) = %016x, want %016x", w, got, want)
		}
	}
	// T is multiplication by x modulo x^4 + x + 1.
	for x := range 16 {
		y := x << 1
		if y&0x10 != 0 {
			y ^= 0x13
		}
		if specT[x] != byte(y) {
			t.Errorf("T(%x) = %x, want %x", x, specT[x], y)
		}
	}
}

// gatherBytes applies the gather P to the bytes of b.
func gatherBytes(b []byte, p []int) []byte {
	out := make([]byte, len(b))
	for i, j := range p {
		out[i] = b[j]
	}
	return out
}

func TestPermutations(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		var b [16]byte
		binary.BigEndian.PutUint64(b[0:], rng.Uint64())
		binary.BigEndian.PutUint64(b[8:], rng.Uint64())
		x := binary.BigEndian.Uint64(b[:8])
		for _, c := range []struct {
			name string
			f    func(uint64) uint64
			p    []int
		}{{"PL", pl128, specPL128}, {"PR", pr128, specPR128}, {"PL⁻¹", plInv128, specPLInv128}, {"PR⁻¹", prInv128, specPRInv128}} {
			if got, want := c.f(x), binary.BigEndian.Uint64(gatherBytes(b[:8], c.p)); got != want {
				t.Fatalf("%s(%016x) = %016x, want %016x", c.name, x, got, want)
			}
		}
		hi, lo := x, binary.BigEndian.Uint64(b[8:])
		for _, c := range []struct {
			name string
			f    func(uint64, uint64) (uint64, uint64)
			p    []int
		}{{"PL256", pl256, specPL256}, {"PR256", pr256, specPR256}, {"PL⁻¹256", plInv256, specPLInv256}, {"PR⁻¹256", prInv256, specPRInv256}} {
			want := gatherBytes(b[:], c.p)
			gh, gl := c.f(hi, lo)
			if gh != binary.BigEndian.Uint64(want[:8]) || gl != binary.BigEndian.Uint64(want[8:]) {
				t.Fatalf("%s(%016x %016x) = %016x %016x, want %x", c.name, hi, lo, gh, gl, want)
			}
		}
	}
	// The inverse tables invert.
	for _, c := range [][2][]int{{specPL128, specPLInv128}, {specPR128, specPRInv128}, {specPL256, specPLInv256}, {specPR256, specPRInv256}} {
		for i := range c[0] {
			if c[1][c[0][i]] != i {
				t.Fatalf("%v is not the inverse of %v", c[1], c[0])
			}
		}
	}
}

func TestTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		var w [4]uint64
		for i := range w {
			w[i] = rng.Uint64()
		}
		p0, p1, p2, p3 := transpose4(w[0], w[1], w[2], w[3])
		p := [4]uint64{p0, p1, p2, p3}
		for j := range 4 {
			for k := range 16 {
				for i := range 4 {
					if p[j]>>(4*k+i)&1 != w[i]>>(4*k+j)&1 {
						t.Fatalf("plane %d bit %d differs", j, 4*k+i)
					}
				}
			}
		}
		a, b, c, d := transpose4(p0, p1, p2, p3)
		if [4]uint64{a, b, c, d} != w {
			t.Fatal("transpose4 is not an involution")
		}
	}
}

// TestRoundConstantsLFSR regenerates RC_1 … RC_24 from the 8-bit LFSR
// s ← (s << 1) | (s7 ⊕ s6 ⊕ s2 ⊕ s1) started at 0x6c, stepped before each
// constant, RC_i = (s⊕0x40) ‖ (s⊕0x54) ‖ (s⊕0x11) ‖ (s⊕0x05).
func TestRoundConstantsLFSR(t *testing.T) {
	s := byte(0x6c)
	for i, rc := range roundConstants {
		s = s<<1 | (s>>7^s>>6^s>>2^s>>1)&1
		want := uint32(s^0x40)<<24 | uint32(s^0x54)<<16 | uint32(s^0x11)<<8 | uint32(s^0x05)
		if rc != want {
			t.Errorf("RC_%d = %08x, LFSR gives %08x", i+1, rc, want)
		}
	}
}

// The table oracle: uBlock on byte slices, nibble by nibble, exactly as the
// spec reads.

// nibbles returns the nibbles of b, the high nibble of byte 0 first.
func nibbles(b []byte) []byte {
	n := make([]byte, 2*len(b))
	for i, x := range b {
		n[2*i], n[2*i+1] = x>>4, x&15
	}
	return n
}

// packNibbles is the inverse of nibbles.
func packNibbles(n []byte) []byte {
	b := make([]byte, len(n)/2)
	for i := range b {
		b[i] = n[2*i]<<4 | n[2*i+1]
	}
	return b
}

// refRot32 rotates every big-endian 32-bit word of h left by r bits.
func refRot32(h []byte, r int) []byte {
	out := make([]byte, len(h))
	for i := 0; i < len(h); i += 4 {
		w := binary.BigEndian.Uint32(h[i:])
		binary.BigEndian.PutUint32(out[i:], w<<r|w>>(32-r))
	}
	return out
}

func xorInto(dst, src []byte) {
	for i := range dst {
		dst[i] ^= src[i]
	}
}

func subNibbles(b []byte, box *[16]byte) {
	for i := range b {
		b[i] = box[b[i]>>4]<<4 | box[b[i]&15]
	}
}

// refSchedule returns RK_0 … RK_r for the key and block size n (bytes).
func refSchedule(key []byte, n int) [][]byte {
	var pk []int
	r := 24
	switch {
	case len(key) == 16:
		pk, r = specPK128, 16
	case n == 16:
		pk = specPK128256
	default:
		pk = specPK256256
	}
	w := len(key) / 4
	k := append([]byte(nil), key...)
	rks := [][]byte{append([]byte(nil), k[:n]...)}
	for i := 1; i <= r; i++ {
		k01 := packNibbles(gatherBytes(nibbles(k[:2*w]), pk))
		k0, k1 := k01[:w], k01[w:]
		t := append([]byte(nil), k0...)
		var rc [4]byte
		binary.BigEndian.PutUint32(rc[:], roundConstantsRef(i))
		xorInto(t[:4], rc[:])
		subNibbles(t, &specS)
		k2 := append([]byte(nil), k[2*w:3*w]...)
		xorInto(k2, t)
		t = append([]byte(nil), k1...)
		subNibbles(t, &specT)
		k3 := append([]byte(nil), k[3*w:]...)
		xorInto(k3, t)
		k = append(append(append(append([]byte(nil), k2...), k3...), k1...), k0...)
		rks = append(rks, append([]byte(nil), k[:n]...))
	}
	return rks
}

// roundConstantsRef is RC_i from the LFSR (independent of the table).
func roundConstantsRef(i int) uint32 {
	s := byte(0x6c)
	for range i {
		s = s<<1 | (s>>7^s>>6^s>>2^s>>1)&1
	}
	return uint32(s^0x40)<<24 | uint32(s^0x54)<<16 | uint32(s^0x11)<<8 | uint32(s^0x05)
}

// refEncrypt encrypts one block; trace, if not nil, receives X0 ‖ X1 after
// every round.
func refEncrypt(key, pt []byte, trace func(round int, x []byte)) []byte {
	n := len(pt)
	pl, pr := specPL128, specPR128
	if n == 32 {
		pl, pr = specPL256, specPR256
	}
	rks := refSchedule(key, n)
	x := append([]byte(nil), pt...)
	for i := range len(rks) - 1 {
		xorInto(x, rks[i])
		subNibbles(x, &specS)
		x0, x1 := x[:n/2], x[n/2:]
		xorInto(x1, x0)
		xorInto(x0, refRot32(x1, 4))
		xorInto(x1, refRot32(x0, 8))
		xorInto(x0, refRot32(x1, 8))
		xorInto(x1, refRot32(x0, 20))
		xorInto(x0, x1)
		x = append(gatherBytes(x0, pl), gatherBytes(x1, pr)...)
		if trace != nil {
			trace(i+1, x)
		}
	}
	xorInto(x, rks[len(rks)-1])
	return x
}

// refDecrypt decrypts one block.
func refDecrypt(key, ct []byte) []byte {
	n := len(ct)
	pli, pri := specPLInv128, specPRInv128
	if n == 32 {
		pli, pri = specPLInv256, specPRInv256
	}
	rks := refSchedule(key, n)
	y := append([]byte(nil), ct...)
	xorInto(y, rks[len(rks)-1])
	for i := len(rks) - 2; i >= 0; i-- {
		y0, y1 := gatherBytes(y[:n/2], pli), gatherBytes(y[n/2:], pri)
		xorInto(y0, y1)
		xorInto(y1, refRot32(y0, 20))
		xorInto(y0, refRot32(y1, 8))
		xorInto(y1, refRot32(y0, 8))
		xorInto(y0, refRot32(y1, 4))
		xorInto(y1, y0)
		y = append(y0, y1...)
		subNibbles(y, &specSInv)
		xorInto(y, rks[i])
	}
	return y
}
