package ciphers

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"testing"

	gmsm4 "github.com/emmansun/gmsm/sm4"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	ism4 "github.com/gmtun/gmtun/ciphers/internal/sm4"
	"github.com/gmtun/gmtun/ciphers/sm4"
)

// sm4gcmSuite is sm4-gcm for the shared batch tests, checked against the
// public one-shot AEAD.
var sm4gcmSuite = suiteUnderTest{ID: SM4GCM, New: newSM4GCMKey, Reference: sealSM4GCMReference}

// referenceSM4GCMNonce derives the per-packet nonce bytewise, independently
// of sm4gcmNonce: nonce[i] = salt[i] for i < 4, salt[i] ⊕ byte i−4 of
// BE64(c) otherwise.
func referenceSM4GCMNonce(salt []byte, c uint64) []byte {
	nonce := bytes.Clone(salt)
	for i := 4; i < 12; i++ {
		nonce[i] ^= byte(c >> (8 * (11 - i)))
	}
	return nonce
}

// sealSM4GCMReference seals one packet with the public sm4.NewGCM.
func sealSM4GCMReference(t testing.TB, k DirectionKeys, pkt []byte) []byte {
	t.Helper()
	aead, err := sm4.NewGCM(k.Enc)
	if err != nil {
		t.Fatal(err)
	}
	header := pkt[:HeaderSize]
	return aead.Seal(bytes.Clone(header), referenceSM4GCMNonce(k.Salt, Counter(pkt)), pkt[HeaderSize:], header)
}

func TestSM4GCMSuite(t *testing.T) {
	runSuiteTests(t, sm4gcmSuite)
}

// TestSM4GCMNonce spells out one nonce by hand: salt = 00 01 … 0b and
// c = 0x0102030405060708 give 00 01 02 03 ‖ (04⊕01) (05⊕02) … (0b⊕08).
func TestSM4GCMNonce(t *testing.T) {
	salt := [12]byte{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b}
	want := [12]byte{0x00, 0x01, 0x02, 0x03, 0x05, 0x07, 0x05, 0x03, 0x0d, 0x0f, 0x0d, 0x03}
	var got [12]byte
	sm4gcmNonce(&got, &salt, 0x0102030405060708)
	if got != want {
		t.Errorf("sm4gcmNonce = %x, want %x", got, want)
	}
	if ref := referenceSM4GCMNonce(salt[:], 0x0102030405060708); !bytes.Equal(ref, want[:]) {
		t.Errorf("referenceSM4GCMNonce = %x, want %x", ref, want)
	}

	// The batch seal of a packet with that counter equals the public AEAD
	// with the literal nonce.
	k := DirectionKeys{Enc: bytes.Repeat([]byte{0x42}, 16), Salt: salt[:]}
	key, err := NewKey(SM4GCM, k)
	if err != nil {
		t.Fatal(err)
	}
	pkt := makePacket(0x0102030405060708, 7, []byte("hello, gmtun"), 16)
	orig := bytes.Clone(pkt)
	batch := [][]byte{pkt}
	if err := key.Seal(batch); err != nil {
		t.Fatal(err)
	}
	pkt = batch[0]
	aead, _ := sm4.NewGCM(k.Enc)
	wantPkt := aead.Seal(bytes.Clone(orig[:HeaderSize]), want[:], orig[HeaderSize:], orig[:HeaderSize])
	if !bytes.Equal(pkt, wantPkt) {
		t.Errorf("sealed packet\n got %x\nwant %x", pkt, wantPkt)
	}
}

// TestSM4GCMNewKeyErrors checks the key-material length checks.
func TestSM4GCMNewKeyErrors(t *testing.T) {
	good := DirectionKeys{Enc: make([]byte, 16), Salt: make([]byte, 12)}
	for name, k := range map[string]DirectionKeys{
		"short key":  {Enc: make([]byte, 15), Salt: good.Salt},
		"long salt":  {Enc: good.Enc, Salt: make([]byte, 13)},
		"MAC key":    {Enc: good.Enc, Salt: good.Salt, MAC: make([]byte, 16)},
		"no salt":    {Enc: good.Enc},
		"direction2": {Enc: good.Enc, Salt: good.Salt, Direction: 2},
	} {
		if _, err := NewKey(SM4GCM, k); err == nil {
			t.Errorf("%s: NewKey accepted it", name)
		}
		if name != "direction2" {
			if _, err := newSM4GCMKey(k); err == nil {
				t.Errorf("%s: newSM4GCMKey accepted it", name)
			}
		}
	}
	if _, err := newSM4GCMKey(good); err != nil {
		t.Errorf("good key material: %v", err)
	}
}

// TestSM4GCMOpenOversized checks that a batch longer than MaxBatch opens
// nothing and modifies nothing.
func TestSM4GCMOpenOversized(t *testing.T) {
	rng := newTestRand("oversized")
	k := randomDirectionKeys(rng, SM4GCM)
	key, _ := newSM4GCMKey(k)
	pkts := randomBatch(rng, MaxBatch, 0, 16)
	sealed := sealBatch(t, key, pkts)
	more := make([]byte, HeaderSize+16)
	sealed = append(sealed, more)
	before := clonePackets(sealed)
	if m := key.Open(sealed); m.Count() != 0 {
		t.Errorf("Open of %d packets verified %d", len(sealed), m.Count())
	}
	assertPacketsEqual(t, "oversized", sealed, before)
}

// TestSM4GCMAllImplementations runs the shared suite tests once per SM4
// kernel tier and on the generic code, and checks that mixed batches of
// 1..128 packets seal to exactly what the generic code produces and open
// back (with tampered packets rejected).
func TestSM4GCMAllImplementations(t *testing.T) {
	type batch struct {
		k      DirectionKeys
		pkts   [][]byte
		sealed [][]byte
	}
	// The generic outputs, computed first with the generic code selected.
	rng := newTestRand("sm4-gcm impls")
	var batches []batch
	if !impl.Select(ism4.ImplPackage, impl.Generic) {
		t.Fatal("cannot select the generic implementation")
	}
	for n := 1; n <= MaxBatch; n += 1 + n/8 {
		k := randomDirectionKeys(rng, SM4GCM)
		pkts := randomBatch(rng, n, rng.Uint64(), 16)
		batches = append(batches, batch{k, pkts, sealBatch(t, sm4gcmSuite.newKey(t, k), pkts)})
	}
	impl.Reset(ism4.ImplPackage)

	impltest.TestAllImplementations(t, ism4.ImplPackage, func(t *testing.T) {
		runSuiteTests(t, sm4gcmSuite)
		for _, bt := range batches {
			key := sm4gcmSuite.newKey(t, bt.k)
			got := sealBatch(t, key, bt.pkts)
			assertPacketsEqual(t, fmt.Sprintf("seal of %d packets", len(got)), got, bt.sealed)
			for i := 0; i < len(got); i += 5 {
				got[i][len(got[i])-1] ^= 0x40
			}
			m := key.Open(got)
			for i := range got {
				switch {
				case i%5 == 0 && m.Has(i):
					t.Fatalf("batch of %d: tampered packet %d verified", len(got), i)
				case i%5 != 0 && (!m.Has(i) || !bytes.Equal(got[i], bt.pkts[i])):
					t.Fatalf("batch of %d: packet %d did not open to its plaintext", len(got), i)
				}
			}
		}
	})
}

func BenchmarkSM4GCMSeal64x1420(b *testing.B) { benchmarkSuiteSeal(b, sm4gcmSuite, 64, 1420) }
func BenchmarkSM4GCMOpen64x1420(b *testing.B) { benchmarkSuiteOpen(b, sm4gcmSuite, 64, 1420) }

// BenchmarkSM4GCMBatch measures the sm4-gcm suite per implementation next
// to Go's AES-128-GCM and gmsm's SM4-GCM sealing/opening the same packets
// one by one (in place, 16-byte header as additional data), so that the
// ratios come from one run: batches of 64 × {64, 576, 1420, 8192} bytes
// and single 1420-byte packets.
func BenchmarkSM4GCMBatch(b *testing.B) {
	shapes := []struct{ n, size int }{{64, 64}, {64, 576}, {64, 1420}, {64, 8192}, {1, 1420}}
	for _, sh := range shapes {
		name := fmt.Sprintf("%dx%d", sh.n, sh.size)
		for _, ref := range []struct {
			name string
			aead func() cipher.AEAD
		}{
			{"aes-gcm-std", func() cipher.AEAD { c, _ := aes.NewCipher(make([]byte, 16)); a, _ := cipher.NewGCM(c); return a }},
			{"gmsm", func() cipher.AEAD { c, _ := gmsm4.NewCipher(make([]byte, 16)); a, _ := cipher.NewGCM(c); return a }},
		} {
			b.Run(ref.name+"/seal/"+name, func(b *testing.B) { benchmarkAEADLoop(b, ref.aead(), sh.n, sh.size, false) })
			b.Run(ref.name+"/open/"+name, func(b *testing.B) { benchmarkAEADLoop(b, ref.aead(), sh.n, sh.size, true) })
		}
		for _, name2 := range append(impl.List(ism4.ImplPackage), impl.Generic) {
			b.Run(name2+"/seal/"+name, func(b *testing.B) {
				if !impl.Select(ism4.ImplPackage, name2) {
					b.Skipf("CPU lacks %s", name2)
				}
				defer impl.Reset(ism4.ImplPackage)
				benchmarkSuiteSeal(b, sm4gcmSuite, sh.n, sh.size)
			})
			b.Run(name2+"/open/"+name, func(b *testing.B) {
				if !impl.Select(ism4.ImplPackage, name2) {
					b.Skipf("CPU lacks %s", name2)
				}
				defer impl.Reset(ism4.ImplPackage)
				benchmarkSuiteOpen(b, sm4gcmSuite, sh.n, sh.size)
			})
		}
	}
}

// benchmarkAEADLoop seals (or opens) n packets of size bytes one by one in
// place with a, the way the suite lays them out.
func benchmarkAEADLoop(b *testing.B, a cipher.AEAD, n, size int, open bool) {
	pkts := make([][]byte, n)
	nonce := make([]byte, a.NonceSize())
	for i := range pkts {
		pkts[i] = makePacket(uint64(i), 1, make([]byte, size), a.Overhead())
		if open {
			a.Seal(pkts[i][:HeaderSize], nonce, pkts[i][HeaderSize:], pkts[i][:HeaderSize])
			pkts[i] = pkts[i][:cap(pkts[i])]
		}
	}
	saved := clonePackets(pkts)
	b.SetBytes(int64(n * size))
	b.ReportAllocs()
	for b.Loop() {
		for i, pkt := range pkts {
			if open {
				copy(pkt, saved[i])
				if _, err := a.Open(pkt[HeaderSize:HeaderSize], nonce, pkt[HeaderSize:], pkt[:HeaderSize]); err != nil {
					b.Fatal(err)
				}
			} else {
				a.Seal(pkt[HeaderSize:HeaderSize], nonce, pkt[HeaderSize:HeaderSize+size], pkt[:HeaderSize])
			}
		}
	}
}
