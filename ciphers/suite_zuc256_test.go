package ciphers

import (
	"bytes"
	"testing"

	gmsm "github.com/emmansun/gmsm/zuc"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	"github.com/gmtun/gmtun/ciphers/zuc"
)

// zuc256Suite is zuc-256 for the shared batch tests, checked against the
// public ciphers/zuc one-shot functions.
var zuc256Suite = suiteUnderTest{ID: ZUC256, New: newZUC256Key, Reference: sealZUC256Reference}

// referenceZUC256IV builds the 23-byte IV bytewise, independently of
// zuc256IV: BE64(c) ‖ salt ‖ six zero bytes.
func referenceZUC256IV(salt []byte, c uint64) []byte {
	iv := make([]byte, 0, 23)
	for i := 7; i >= 0; i-- {
		iv = append(iv, byte(c>>(8*i)))
	}
	iv = append(iv, salt...)
	return append(iv, 0, 0, 0, 0, 0, 0)
}

// sealZUC256Reference seals one packet with zuc.NewZUC256 and zuc.MAC256.
func sealZUC256Reference(t testing.TB, k DirectionKeys, pkt []byte) []byte {
	t.Helper()
	iv := referenceZUC256IV(k.Salt, Counter(pkt))
	s, err := zuc.NewZUC256(k.Enc, iv)
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Clone(pkt)
	s.XORKeyStream(out[HeaderSize:], pkt[HeaderSize:])
	tag, err := zuc.MAC256(k.MAC, iv, out, 8*len(out), 16)
	if err != nil {
		t.Fatal(err)
	}
	return append(out, tag...)
}

func TestZUC256Suite(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		runZUCSuiteTests(t, zuc256Suite)
		runZUCLaneTests(t, zuc256Suite)
	})
}

func FuzzZUC256Suite(f *testing.F) {
	f.Add(uint64(1), []byte{178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 20})
	f.Add(uint64(2), []byte{0, 1, 2, 3, 255, 7, 9})
	f.Add(uint64(3), []byte{100})
	f.Fuzz(func(t *testing.T, seed uint64, shape []byte) { fuzzZUCSuite(t, zuc256Suite, seed, shape) })
}

// TestZUC256IV spells out one IV by hand: salt = 01 02 … 09 and
// c = 0x0102030405060708.
func TestZUC256IV(t *testing.T) {
	salt := [9]byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09}
	want := [23]byte{
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // BE64(c)
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, // salt
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // IV17..IV24 = 0
	}
	var got [23]byte
	for i := range got {
		got[i] = 0xee // zuc256IV must overwrite every byte
	}
	zuc256IV(&got, &salt, 0x0102030405060708)
	if got != want {
		t.Errorf("zuc256IV = %x, want %x", got, want)
	}
	if ref := referenceZUC256IV(salt[:], 0x0102030405060708); !bytes.Equal(ref, want[:]) {
		t.Errorf("referenceZUC256IV = %x, want %x", ref, want)
	}

	// A packet sealed with that counter equals the public API with the
	// literal IV.
	k := DirectionKeys{Enc: bytes.Repeat([]byte{0x11}, 32), MAC: bytes.Repeat([]byte{0x22}, 32), Salt: salt[:]}
	key, err := NewKey(ZUC256, k)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("sixteen byte msgand some more ..")
	pkt := makePacket(0x0102030405060708, 7, body, 16)
	if err := key.Seal([][]byte{pkt}); err != nil {
		t.Fatal(err)
	}
	pkt = pkt[:HeaderSize+len(body)+16]
	s, _ := zuc.NewZUC256(k.Enc, want[:])
	ct := make([]byte, len(body))
	s.XORKeyStream(ct, body)
	if !bytes.Equal(pkt[HeaderSize:HeaderSize+len(body)], ct) {
		t.Errorf("ciphertext differs from ZUC-256 with the literal IV")
	}
	tag, _ := zuc.MAC256(k.MAC, want[:], pkt[:HeaderSize+len(body)], 8*(HeaderSize+len(body)), 16)
	if !bytes.Equal(pkt[HeaderSize+len(body):], tag) {
		t.Errorf("tag differs from ZUC-256-MAC-128 with the literal IV")
	}
	// The keystream and MAC use independent keys: swapping them breaks it.
	swapped, _ := NewKey(ZUC256, DirectionKeys{Enc: k.MAC, MAC: k.Enc, Salt: k.Salt})
	if m := swapped.Open([][]byte{bytes.Clone(pkt)}); m.Count() != 0 {
		t.Errorf("key with Enc and MAC swapped verified the packet")
	}
}

func TestZUC256KeyErrors(t *testing.T) {
	good := DirectionKeys{Enc: make([]byte, 32), MAC: make([]byte, 32), Salt: make([]byte, 9)}
	if _, err := newZUC256Key(good); err != nil {
		t.Fatalf("good key material rejected: %v", err)
	}
	for name, k := range map[string]DirectionKeys{
		"short enc": {Enc: make([]byte, 31), MAC: good.MAC, Salt: good.Salt},
		"short mac": {Enc: good.Enc, MAC: make([]byte, 16), Salt: good.Salt},
		"no salt":   {Enc: good.Enc, MAC: good.MAC},
		"long salt": {Enc: good.Enc, MAC: good.MAC, Salt: make([]byte, 12)},
	} {
		if _, err := newZUC256Key(k); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := NewKey(ZUC256, k); err == nil {
			t.Errorf("%s: NewKey accepted", name)
		}
	}
}

func BenchmarkZUC256Suite(b *testing.B) {
	benchmarkZUCSuite(b, zuc256Suite, func(b *testing.B, k DirectionKeys, pkt []byte, size int) {
		// gmsm per packet: ZUC-256 over the body, ZUC-256-MAC-128 over
		// header ‖ ciphertext, key and IV setup included.
		var iv [zuc.IVSize256]byte
		var salt [zuc256SaltSize]byte
		copy(salt[:], k.Salt)
		zuc256IV(&iv, &salt, Counter(pkt))
		s, err := gmsm.NewCipher(k.Enc, iv[:])
		if err != nil {
			b.Fatal(err)
		}
		body := pkt[HeaderSize : HeaderSize+size]
		s.XORKeyStream(body, body)
		h, err := gmsm.NewHash256(k.MAC, iv[:], zuc256TagSize)
		if err != nil {
			b.Fatal(err)
		}
		h.Write(pkt[:HeaderSize+size])
		h.Sum(pkt[:HeaderSize+size])
	})
}

// TestLengthOrder checks the grouping order of the zuc suites: keys sorted
// by length, every position kept exactly once, and an already ordered
// batch left as it is.
func TestLengthOrder(t *testing.T) {
	rng := newTestRand("length order")
	for _, n := range []int{0, 1, 2, 17, MaxBatch} {
		lens := make([]int, n)
		keys := make([]uint64, n)
		for i := range keys {
			lens[i] = rng.IntN(70000)
			if rng.IntN(3) == 0 && i > 0 {
				lens[i] = lens[i-1] // runs of equal lengths
			}
			keys[i] = lengthKey(lens[i], i)
		}
		lengthOrder(keys)
		seen := make([]bool, n)
		for j, key := range keys {
			i := lengthIndex(key)
			if seen[i] {
				t.Fatalf("n=%d: position %d twice", n, i)
			}
			seen[i] = true
			if int(key>>8) != lens[i] {
				t.Fatalf("n=%d: key of position %d carries length %d, want %d", n, i, key>>8, lens[i])
			}
			if j > 0 && lens[lengthIndex(keys[j-1])] > lens[i] {
				t.Fatalf("n=%d: not sorted by length at %d", n, j)
			}
		}
	}
	// Equal lengths keep batch order (the common TSO case skips the sort).
	keys := []uint64{lengthKey(100, 3), lengthKey(100, 1), lengthKey(100, 2)}
	lengthOrder(keys)
	if lengthIndex(keys[0]) != 3 || lengthIndex(keys[1]) != 1 || lengthIndex(keys[2]) != 2 {
		t.Errorf("equal lengths reordered: %v", keys)
	}
}
