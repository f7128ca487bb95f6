package reftables

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// digestWant pins every table of the package: a change to any entry (a
// slip while editing, a test writing to a table) fails TestDigest. It was
// computed once from the tables as transcribed, after the checks below
// and the circuit and kernel tests that use them had passed.
const digestWant = "0485a913e91376df6cf8dae923e13de10b99f8dd4bae705f32d8ac51fcdb8d16"

// digest hashes every table, big-endian, in declaration order.
func digest() string {
	h := sha256.New()
	for _, v := range []any{
		SM4SBox, SM4FK, SM4CK,
		ZUCS0, ZUCS1, ZUC128D, ZUC256D,
		UBlockS, UBlockSInv,
		toInt32(UBlockPL128[:]), toInt32(UBlockPR128[:]), toInt32(UBlockPLInv128[:]), toInt32(UBlockPRInv128[:]),
		toInt32(UBlockPL256[:]), toInt32(UBlockPR256[:]), toInt32(UBlockPLInv256[:]), toInt32(UBlockPRInv256[:]),
		toInt32(UBlockPK128128[:]), toInt32(UBlockPK128256[:]), toInt32(UBlockPK256256[:]),
		UBlockRC,
	} {
		if err := binary.Write(h, binary.BigEndian, v); err != nil {
			panic(err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func toInt32(p []int) []int32 {
	out := make([]int32, len(p))
	for i, v := range p {
		out[i] = int32(v)
	}
	return out
}

func TestDigest(t *testing.T) {
	if got := digest(); got != digestWant {
		t.Fatalf("tables digest %s, want %s: an entry changed", got, digestWant)
	}
}

// isPermutation reports whether p holds each of 0..len(p)-1 once.
func isPermutation[E byte | int](p []E) bool {
	seen := make([]bool, len(p))
	for _, v := range p {
		if int(v) >= len(p) || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

// TestSM4 checks that τ is a permutation with the corner values of Table 1
// and that CK follows its rule; the S-box is checked against its algebraic
// definition by kernels/internal/sm4ref and ciphers/internal/sm4.
func TestSM4(t *testing.T) {
	if !isPermutation(SM4SBox[:]) {
		t.Error("SM4 S-box is not a permutation")
	}
	if SM4SBox[0x00] != 0xd6 || SM4SBox[0x0f] != 0x05 || SM4SBox[0xf0] != 0x18 || SM4SBox[0xff] != 0x48 {
		t.Errorf("SM4 S-box corners %#02x %#02x %#02x %#02x, want 0xd6 0x05 0x18 0x48",
			SM4SBox[0x00], SM4SBox[0x0f], SM4SBox[0xf0], SM4SBox[0xff])
	}
	for i, ck := range SM4CK {
		var want uint32
		for j := range 4 {
			want = want<<8 | uint32((4*i+j)*7%256)
		}
		if ck != want {
			t.Errorf("CK_%d = %#08x, want %#08x", i, ck, want)
		}
	}
	if SM4FK[0] != 0xa3b1bac6 || SM4FK[3] != 0xb27022dc {
		t.Errorf("FK = %#08x", SM4FK)
	}
}

// TestZUC checks that S0 and S1 are permutations with their first and
// last entries, and the widths and shape of the d constants.
func TestZUC(t *testing.T) {
	for _, s := range []struct {
		name        string
		box         *[256]byte
		first, last byte
	}{{"S0", &ZUCS0, 0x3e, 0x60}, {"S1", &ZUCS1, 0x55, 0xf2}} {
		if !isPermutation(s.box[:]) {
			t.Errorf("ZUC %s is not a permutation", s.name)
		}
		if s.box[0] != s.first || s.box[255] != s.last {
			t.Errorf("ZUC %s[0], [255] = %#02x, %#02x; want %#02x, %#02x", s.name, s.box[0], s.box[255], s.first, s.last)
		}
	}
	for i, d := range ZUC128D {
		if d >= 1<<15 {
			t.Errorf("ZUC-128 d_%d = %#x is wider than 15 bits", i, d)
		}
	}
	// The four ZUC-256 sets differ only in the low bit of d_0 and of d_2;
	// every entry is 7 bits wide.
	for k, row := range ZUC256D {
		for i, d := range row {
			if d >= 1<<7 {
				t.Errorf("ZUC-256 set %d d_%d = %#x is wider than 7 bits", k, i, d)
			}
			if i != 0 && i != 2 && d != ZUC256D[0][i] {
				t.Errorf("ZUC-256 set %d d_%d = %#x differs from the keystream set", k, i, d)
			}
		}
		if row[0] != 0x22|byte(k>>1) || row[2] != 0x24|byte(k&1) {
			t.Errorf("ZUC-256 set %d: d_0, d_2 = %#x, %#x", k, row[0], row[2])
		}
	}
}

// TestUBlock checks that S and every permutation are permutations, that
// the published inverses are the inverses, and that the round constants
// are the output of their LFSR.
func TestUBlock(t *testing.T) {
	if !isPermutation(UBlockS[:]) {
		t.Error("uBlock S is not a permutation")
	}
	for x, y := range UBlockS {
		if UBlockSInv[y] != byte(x) {
			t.Errorf("S⁻¹[S[%#x]] = %#x", x, UBlockSInv[y])
		}
	}
	for _, p := range []struct {
		name     string
		fwd, inv []int
	}{
		{"PL128", UBlockPL128[:], UBlockPLInv128[:]},
		{"PR128", UBlockPR128[:], UBlockPRInv128[:]},
		{"PL256", UBlockPL256[:], UBlockPLInv256[:]},
		{"PR256", UBlockPR256[:], UBlockPRInv256[:]},
		{"PK128128", UBlockPK128128[:], nil},
		{"PK128256", UBlockPK128256[:], nil},
		{"PK256256", UBlockPK256256[:], nil},
	} {
		if !isPermutation(p.fwd) {
			t.Errorf("uBlock %s is not a permutation", p.name)
		}
		for i, v := range p.fwd {
			if p.inv != nil && p.inv[v] != i {
				t.Errorf("uBlock %s: inverse[%d] = %d, want %d", p.name, v, p.inv[v], i)
			}
		}
	}
	for _, pk := range [][]int{UBlockPK128256[16:], UBlockPK256256[16:]} {
		for i, v := range pk {
			if want := 16 + (i+8)%16; v != want {
				t.Errorf("PK entry %d = %d, want %d (a swap of K1's halves)", 16+i, v, want)
			}
		}
	}
	// RC_i from the 8-bit LFSR s ← (s << 1) | (s7 ⊕ s6 ⊕ s2 ⊕ s1), started
	// at 0x6c and stepped before each constant:
	// RC_i = (s⊕0x40) ‖ (s⊕0x54) ‖ (s⊕0x11) ‖ (s⊕0x05).
	s := byte(0x6c)
	for i, rc := range UBlockRC {
		s = s<<1 | (s>>7^s>>6^s>>2^s>>1)&1
		if want := uint32(s^0x40)<<24 | uint32(s^0x54)<<16 | uint32(s^0x11)<<8 | uint32(s^0x05); rc != want {
			t.Errorf("RC_%d = %08x, the LFSR gives %08x", i+1, rc, want)
		}
	}
}
