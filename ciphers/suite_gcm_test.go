package ciphers

import (
	"bytes"
	"crypto/cipher"
	"fmt"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	ism4 "github.com/gmtun/gmtun/ciphers/internal/sm4"
	iublock "github.com/gmtun/gmtun/ciphers/internal/ublock"
	"github.com/gmtun/gmtun/ciphers/sm4"
	"github.com/gmtun/gmtun/ciphers/ublock"
)

// sm4gcmSuite and ublockgcmSuite are the gcm suites for the shared batch
// tests, each checked against its public one-shot AEAD.
var (
	sm4gcmSuite    = suiteUnderTest{ID: SM4GCM, New: newSM4GCMKey, Reference: gcmReference(sm4.NewGCM)}
	ublockgcmSuite = suiteUnderTest{ID: UBlockGCM, New: newUBlockGCMKey, Reference: gcmReference(ublock.NewGCM)}
)

// gcmReference returns the Reference of a gcm suite: it seals one packet
// with newAEAD (the public sm4.NewGCM or ublock.NewGCM) under the bytewise
// nonce of referenceSM4GCMNonce, the header as additional data.
func gcmReference(newAEAD func(key []byte) (cipher.AEAD, error)) func(testing.TB, DirectionKeys, []byte) []byte {
	return func(t testing.TB, k DirectionKeys, pkt []byte) []byte {
		t.Helper()
		aead, err := newAEAD(k.Enc)
		if err != nil {
			t.Fatal(err)
		}
		header := pkt[:HeaderSize]
		return aead.Seal(bytes.Clone(header), referenceSM4GCMNonce(k.Salt, Counter(pkt)), pkt[HeaderSize:], header)
	}
}

// gcmSuites are the suites of the gcm family (gcmKey) for the
// table-driven tests, each with the impl registry name of its block
// cipher's kernels.
var gcmSuites = []struct {
	suite   suiteUnderTest
	implPkg string
}{
	{sm4gcmSuite, ism4.ImplPackage},
	{ublockgcmSuite, iublock.ImplPackage},
}

// TestGCMSuites runs the shared batch tests on both gcm suites.
func TestGCMSuites(t *testing.T) {
	for _, gs := range gcmSuites {
		t.Run(gs.suite.ID.String(), func(t *testing.T) { runSuiteTests(t, gs.suite) })
	}
}

// TestGCMNewKeyErrors checks the key-material length checks of both gcm
// suites, through NewKey and the suite's own constructor.
func TestGCMNewKeyErrors(t *testing.T) {
	for _, gs := range gcmSuites {
		s := gs.suite
		t.Run(s.ID.String(), func(t *testing.T) {
			good := DirectionKeys{Enc: make([]byte, 16), Salt: make([]byte, 12)}
			for name, k := range map[string]DirectionKeys{
				"short key":  {Enc: make([]byte, 15), Salt: good.Salt},
				"256-bit":    {Enc: make([]byte, 32), Salt: good.Salt},
				"long salt":  {Enc: good.Enc, Salt: make([]byte, 13)},
				"MAC key":    {Enc: good.Enc, Salt: good.Salt, MAC: make([]byte, 16)},
				"no salt":    {Enc: good.Enc},
				"direction2": {Enc: good.Enc, Salt: good.Salt, Direction: 2},
			} {
				if _, err := NewKey(s.ID, k); err == nil {
					t.Errorf("%s: NewKey accepted it", name)
				}
				if name != "direction2" {
					_, err := s.New(k)
					want := fmt.Sprintf("ciphers: %s needs a 16-byte key, a 12-byte salt and no MAC key; got %d, %d, %d",
						s.ID, len(k.Enc), len(k.Salt), len(k.MAC))
					if err == nil || err.Error() != want {
						t.Errorf("%s: the suite's constructor returned %v, want %q", name, err, want)
					}
				}
			}
			if key, err := s.New(good); err != nil || key.Suite() != s.ID {
				t.Errorf("good key material: %v, %v", key, err)
			}
		})
	}
}

// TestGCMOpenOversized checks that a batch longer than MaxBatch opens
// nothing and modifies nothing.
func TestGCMOpenOversized(t *testing.T) {
	for _, gs := range gcmSuites {
		s := gs.suite
		t.Run(s.ID.String(), func(t *testing.T) {
			rng := newTestRand("oversized " + s.ID.String())
			key := s.newKey(t, randomDirectionKeys(rng, s.ID))
			pkts := randomBatch(rng, MaxBatch, 0, 16)
			sealed := sealBatch(t, key, pkts)
			more := make([]byte, HeaderSize+16)
			sealed = append(sealed, more)
			before := clonePackets(sealed)
			if m := key.Open(sealed); m.Count() != 0 {
				t.Errorf("Open of %d packets verified %d", len(sealed), m.Count())
			}
			assertPacketsEqual(t, "oversized", sealed, before)
		})
	}
}

// TestGCMAllImplementations runs, for each gcm suite, the shared suite
// tests once per kernel tier of its block cipher and on the generic code,
// and checks that mixed batches of 1..128 packets seal to exactly what
// the generic code produces and open back (with tampered packets
// rejected).
func TestGCMAllImplementations(t *testing.T) {
	for _, gs := range gcmSuites {
		t.Run(gs.suite.ID.String(), func(t *testing.T) { testGCMAllImplementations(t, gs.suite, gs.implPkg) })
	}
}

// testGCMAllImplementations is TestGCMAllImplementations for suite s,
// whose kernels register as implPkg.
func testGCMAllImplementations(t *testing.T, s suiteUnderTest, implPkg string) {
	type batch struct {
		k      DirectionKeys
		pkts   [][]byte
		sealed [][]byte
	}
	// The generic outputs, computed first with the generic code selected.
	rng := newTestRand(s.ID.String() + " impls")
	var batches []batch
	if !impl.Select(implPkg, impl.Generic) {
		t.Fatal("cannot select the generic implementation")
	}
	for n := 1; n <= MaxBatch; n += 1 + n/8 {
		k := randomDirectionKeys(rng, s.ID)
		pkts := randomBatch(rng, n, rng.Uint64(), 16)
		batches = append(batches, batch{k, pkts, sealBatch(t, s.newKey(t, k), pkts)})
	}
	impl.Reset(implPkg)

	impltest.TestAllImplementations(t, implPkg, func(t *testing.T) {
		runSuiteTests(t, s)
		for _, bt := range batches {
			key := s.newKey(t, bt.k)
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
