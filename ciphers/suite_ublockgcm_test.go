package ciphers

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	iublock "github.com/gmtun/gmtun/ciphers/internal/ublock"
	"github.com/gmtun/gmtun/ciphers/ublock"
)

// ublockgcmSuite is ublock-gcm for the shared batch tests, checked against
// the public one-shot AEAD of ciphers/ublock.
var ublockgcmSuite = suiteUnderTest{ID: UBlockGCM, New: newUBlockGCMKey, Reference: sealUBlockGCMReference}

// sealUBlockGCMReference seals one packet with the public ublock.NewGCM
// and the bytewise nonce of referenceSM4GCMNonce (the same construction).
func sealUBlockGCMReference(t testing.TB, k DirectionKeys, pkt []byte) []byte {
	t.Helper()
	aead, err := ublock.NewGCM(k.Enc)
	if err != nil {
		t.Fatal(err)
	}
	header := pkt[:HeaderSize]
	return aead.Seal(bytes.Clone(header), referenceSM4GCMNonce(k.Salt, Counter(pkt)), pkt[HeaderSize:], header)
}

func TestUBlockGCMSuite(t *testing.T) {
	runSuiteTests(t, ublockgcmSuite)
}

// TestUBlockGCMWire checks the suite's identity: code point 0x04, the
// configuration name, the sm4-gcm limits, never a default.
func TestUBlockGCMWire(t *testing.T) {
	if UBlockGCM != 0x04 || UBlockGCM.String() != "ublock-gcm" {
		t.Fatalf("UBlockGCM = %#02x %q", uint8(UBlockGCM), UBlockGCM)
	}
	if id, err := ParseSuite("ublock-gcm"); err != nil || id != UBlockGCM {
		t.Fatalf("ParseSuite(ublock-gcm) = %v, %v", id, err)
	}
	if !slices.Contains(Suites[:], UBlockGCM) || slices.Contains(DefaultSuites[:], UBlockGCM) {
		t.Fatalf("ublock-gcm must be in Suites and not in DefaultSuites: %v / %v", Suites, DefaultSuites)
	}
	if p, q := UBlockGCM.Params(), SM4GCM.Params(); p != q {
		t.Fatalf("Params = %+v, want sm4-gcm's %+v", p, q)
	}
}

// TestUBlockGCMNewKeyErrors checks the key-material length checks.
func TestUBlockGCMNewKeyErrors(t *testing.T) {
	good := DirectionKeys{Enc: make([]byte, 16), Salt: make([]byte, 12)}
	for name, k := range map[string]DirectionKeys{
		"short key":  {Enc: make([]byte, 15), Salt: good.Salt},
		"256-bit":    {Enc: make([]byte, 32), Salt: good.Salt},
		"long salt":  {Enc: good.Enc, Salt: make([]byte, 13)},
		"MAC key":    {Enc: good.Enc, Salt: good.Salt, MAC: make([]byte, 16)},
		"no salt":    {Enc: good.Enc},
		"direction2": {Enc: good.Enc, Salt: good.Salt, Direction: 2},
	} {
		if _, err := NewKey(UBlockGCM, k); err == nil {
			t.Errorf("%s: NewKey accepted it", name)
		}
		if name != "direction2" {
			if _, err := newUBlockGCMKey(k); err == nil {
				t.Errorf("%s: newUBlockGCMKey accepted it", name)
			}
		}
	}
	if _, err := newUBlockGCMKey(good); err != nil {
		t.Errorf("good key material: %v", err)
	}
}

// TestUBlockGCMAllImplementations runs the shared suite tests once per
// uBlock kernel tier and on the generic code, and checks that mixed
// batches of 1..128 packets seal to exactly what the generic code produces
// and open back (with tampered packets rejected).
func TestUBlockGCMAllImplementations(t *testing.T) {
	type batch struct {
		k      DirectionKeys
		pkts   [][]byte
		sealed [][]byte
	}
	rng := newTestRand("ublock-gcm impls")
	var batches []batch
	if !impl.Select(iublock.ImplPackage, impl.Generic) {
		t.Fatal("cannot select the generic implementation")
	}
	for n := 1; n <= MaxBatch; n += 1 + n/8 {
		k := randomDirectionKeys(rng, UBlockGCM)
		pkts := randomBatch(rng, n, rng.Uint64(), 16)
		batches = append(batches, batch{k, pkts, sealBatch(t, ublockgcmSuite.newKey(t, k), pkts)})
	}
	impl.Reset(iublock.ImplPackage)

	impltest.TestAllImplementations(t, iublock.ImplPackage, func(t *testing.T) {
		runSuiteTests(t, ublockgcmSuite)
		for _, bt := range batches {
			key := ublockgcmSuite.newKey(t, bt.k)
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

func BenchmarkUBlockGCMSeal64x1420(b *testing.B) { benchmarkSuiteSeal(b, ublockgcmSuite, 64, 1420) }
func BenchmarkUBlockGCMOpen64x1420(b *testing.B) { benchmarkSuiteOpen(b, ublockgcmSuite, 64, 1420) }
