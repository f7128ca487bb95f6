package ciphers

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"testing"

	gmsm4 "github.com/emmansun/gmsm/sm4"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	ism4 "github.com/gmtun/gmtun/ciphers/internal/sm4"
	"github.com/gmtun/gmtun/ciphers/sm4"
)

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
