package zuc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
)

// checkVerifyThenDecrypt seals b generically (bodies past a 16-byte
// header, as checkEncryptThenMAC), forges about half of the lanes (a
// flipped tag bit, or a flipped message byte), and opens the result with
// the verify-then-decrypt primitives as methods of s and generically. Both
// must accept exactly the lanes that were not forged and not idle, restore
// their plaintext, and leave every other lane's bytes as they were.
func checkVerifyThenDecrypt(t *testing.T, b *laneBatch, s *Scratch, what string) {
	t.Helper()
	split := func(msgs *[Lanes][]byte) *[Lanes][]byte {
		var bodies [Lanes][]byte
		for i, m := range msgs {
			if m != nil {
				bodies[i] = m[min(len(m), 16):]
			}
		}
		return &bodies
	}
	var eia [Lanes][IVSize128]byte
	for i := range eia {
		eia[i] = b.iv128[Lanes-1-i]
	}
	// forge returns the lanes to forge and how: bit 0 of kind[i] a tag bit,
	// otherwise a message byte (the tag bit for empty messages).
	var forged uint32
	var kind [Lanes]byte
	for i := range b.n {
		x := b.iv256[i][22]
		if b.data[i] != nil && x&1 == 0 {
			forged |= 1 << i
			kind[i] = x >> 1 & 1
		}
	}
	var live uint32
	for i := range b.n {
		if b.data[i] != nil {
			live |= 1 << i
		}
	}
	tamper := func(msgs *[Lanes][]byte, flipTag func(i int)) {
		for i := range b.n {
			if forged>>i&1 == 0 {
				continue
			}
			if kind[i] == 1 && len(msgs[i]) > 0 {
				msgs[i][int(b.iv256[i][21])%len(msgs[i])] ^= 1 << (b.iv256[i][20] & 7)
			} else {
				flipTag(i)
			}
		}
	}

	// 128: seal, tamper, open twice (dispatched, generic).
	sealed := b.clone()
	var t128 [Lanes]uint32
	EncryptThenMAC128Generic(&b.key128, &b.key128b, &b.iv128, &eia, split(sealed), sealed, &t128, b.n)
	tamper(sealed, func(i int) { t128[i] ^= 1 << (b.iv256[i][20] & 31) })
	cp := func(m *[Lanes][]byte) *[Lanes][]byte {
		var out [Lanes][]byte
		for i, d := range m {
			if d != nil {
				out[i] = append(make([]byte, 0, len(d)), d...)
			}
		}
		return &out
	}
	got, gen := cp(sealed), cp(sealed)
	want := t128
	ok := s.VerifyThenDecrypt128(&b.key128, &b.key128b, &b.iv128, &eia, split(got), got, &want, b.n)
	okGen := VerifyThenDecrypt128Generic(&b.key128, &b.key128b, &b.iv128, &eia, split(gen), gen, &want, b.n)
	if want != t128 {
		t.Fatalf("%s: VerifyThenDecrypt128 modified the expected tags", what)
	}
	checkOpened(t, b, "VerifyThenDecrypt128", what, ok, okGen, live&^forged, got, gen, sealed)

	// 256.
	sealed = b.clone()
	var t256 [Lanes][MAC256TagSize]byte
	EncryptThenMAC256Generic(&b.key256, &b.key256b, &b.iv256, split(sealed), sealed, &t256, b.n)
	tamper(sealed, func(i int) { t256[i][b.iv256[i][19]&15] ^= 1 << (b.iv256[i][20] & 7) })
	got, gen = cp(sealed), cp(sealed)
	want256 := t256
	ok = s.VerifyThenDecrypt256(&b.key256, &b.key256b, &b.iv256, split(got), got, &want256, b.n)
	okGen = VerifyThenDecrypt256Generic(&b.key256, &b.key256b, &b.iv256, split(gen), gen, &want256, b.n)
	if want256 != t256 {
		t.Fatalf("%s: VerifyThenDecrypt256 modified the expected tags", what)
	}
	checkOpened(t, b, "VerifyThenDecrypt256", what, ok, okGen, live&^forged, got, gen, sealed)
}

// checkOpened checks one verify-then-decrypt result: the masks ok
// (dispatched) and okGen (generic) are both accept, the accepted lanes of
// got and gen hold b's plaintext and every other lane the bytes of sealed.
func checkOpened(t *testing.T, b *laneBatch, name, what string, ok, okGen, accept uint32, got, gen, sealed *[Lanes][]byte) {
	t.Helper()
	if ok != accept || okGen != accept {
		t.Fatalf("%s: %s accepted %#x (generic %#x), want %#x", what, name, ok, okGen, accept)
	}
	for i := range got {
		w := sealed[i]
		if accept>>i&1 != 0 {
			w = b.data[i]
		}
		if !bytes.Equal(got[i], w) || !bytes.Equal(gen[i], w) {
			t.Fatalf("%s: %s lane %d (accepted %v, len %d) holds the wrong bytes", what, name, i, accept>>i&1 != 0, len(b.data[i]))
		}
	}
}

// TestLanesVerifyThenDecrypt opens forged and genuine lanes with the
// verify-then-decrypt primitives on every implementation: batches of
// 1..Lanes (the one-call 8-lane path for up to etm8Max packets, the
// separate calls beyond), every length 0..4096 (nearly equal lengths per
// batch), 8192 and 65535, idle lanes, unaligned buffers, on fresh memory
// and on one reused Scratch.
func TestLanesVerifyThenDecrypt(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(23, 24))
		var shared Scratch
		step := 1
		if testing.Short() {
			step = 17
		}
		lengths := []int{8192, 65535, 1532, 1533, 1552, 1553}
		for l := 0; l <= 4096; l += step {
			lengths = append(lengths, l)
		}
		for i, l := range lengths {
			n := 1 + i%6
			if i%7 == 0 {
				n = 1 + r.IntN(Lanes)
			}
			if l > 4096 {
				n = 1 + i%(Lanes/4)
			}
			lens := make([]int, n)
			for j := range lens {
				lens[j] = max(0, l-r.IntN(8))
				if n > 1 && r.IntN(10) == 0 {
					lens[j] = -1
				}
			}
			b := newLaneBatch(r, lens)
			s := &shared
			if i%2 == 1 {
				s = nil
			}
			checkVerifyThenDecrypt(t, b, s, fmt.Sprintf("%d packets of about %d bytes", n, l))
		}
	})
}
