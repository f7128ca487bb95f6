package ciphers

// Shared batch tests for every data suite.
//
// A suite's test file describes the suite with a suiteUnderTest and calls
// runSuiteTests (or the individual testSuite* helpers) from its own Test
// function, for example
//
//	func TestGCMSuites(t *testing.T) {
//		runSuiteTests(t, suiteUnderTest{
//			ID:        SM4GCM,
//			New:       newSM4GCMKey,
//			Reference: gcmReference(sm4.NewGCM),
//		})
//	}
//
// The helpers only use the Key interface, the Params of the suite and the
// packet layout of docs/PROTOCOL.md ("Data packets"), so they apply
// unchanged to sm4-gcm, ublock-gcm, zuc-256 and zuc-128. Randomness comes
// from a fixed ChaCha8 seed, so failures reproduce.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// suiteUnderTest describes one data suite for the shared batch tests.
type suiteUnderTest struct {
	// ID is the suite; its Params give the key, salt and tag sizes and the
	// counter limit.
	ID SuiteID
	// New builds the suite's Key from key material, typically the suite's
	// unexported constructor (newSM4GCMKey, …). If nil, NewKey(ID, ·) is
	// used.
	New func(DirectionKeys) (Key, error)
	// Reference seals one packet with an independent one-shot
	// implementation (normally the suite's public cipher package). pkt is
	// header ‖ body; it returns a new slice header ‖ ciphertext ‖ tag and
	// must not modify pkt.
	Reference func(t testing.TB, k DirectionKeys, pkt []byte) []byte
}

// newKey builds s's Key for k, failing the test on error.
func (s suiteUnderTest) newKey(t testing.TB, k DirectionKeys) Key {
	t.Helper()
	var key Key
	var err error
	if s.New != nil {
		key, err = s.New(k)
	} else {
		key, err = NewKey(s.ID, k)
	}
	if err != nil {
		t.Fatalf("%s: new key: %v", s.ID, err)
	}
	if key.Suite() != s.ID {
		t.Fatalf("%s: Key.Suite() = %s", s.ID, key.Suite())
	}
	return key
}

// newTestRand returns a deterministic generator for the named test.
func newTestRand(name string) *rand.Rand {
	var seed [32]byte
	copy(seed[:], "gmtun suite tests: "+name)
	return rand.New(rand.NewChaCha8(seed))
}

// fillRandom fills b from rng.
func fillRandom(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// randomDirectionKeys returns random key material of the sizes s needs.
func randomDirectionKeys(rng *rand.Rand, id SuiteID) DirectionKeys {
	p := id.Params()
	k := DirectionKeys{
		Enc:       make([]byte, p.EncKeySize),
		Direction: uint8(rng.IntN(2)),
	}
	fillRandom(rng, k.Enc)
	if p.MACKeySize > 0 {
		k.MAC = make([]byte, p.MACKeySize)
		fillRandom(rng, k.MAC)
	}
	if p.SaltSize > 0 {
		k.Salt = make([]byte, p.SaltSize)
		fillRandom(rng, k.Salt)
	}
	return k
}

// makePacket returns header ‖ body for the given counter and receiver index
// in a buffer with exactly tagRoom bytes of spare capacity.
func makePacket(counter uint64, receiver uint32, body []byte, tagRoom int) []byte {
	pkt := make([]byte, HeaderSize+len(body), HeaderSize+len(body)+tagRoom)
	pkt[0], pkt[1] = 0x14, 0x01
	pkt[4], pkt[5], pkt[6], pkt[7] = byte(receiver), byte(receiver>>8), byte(receiver>>16), byte(receiver>>24)
	for i := range 8 {
		pkt[CounterOffset+i] = byte(counter >> (8 * i))
	}
	copy(pkt[HeaderSize:], body)
	return pkt
}

// bodyLengths are the interesting plaintext lengths; randomBatch mixes them
// with uniform lengths in 0..1420.
var bodyLengths = []int{0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 1024, 1419, 1420}

// randomBatch returns n packets with consecutive counters from c0 and mixed
// body lengths (multiples of 16 and not, 0..1420), each with tagRoom bytes
// of spare capacity.
func randomBatch(rng *rand.Rand, n int, c0 uint64, tagRoom int) [][]byte {
	pkts := make([][]byte, n)
	receiver := rng.Uint32()
	for i := range pkts {
		var l int
		switch rng.IntN(3) {
		case 0:
			l = bodyLengths[rng.IntN(len(bodyLengths))]
		case 1:
			l = 16 * rng.IntN(1420/16+1)
		default:
			l = rng.IntN(1421)
		}
		body := make([]byte, l)
		fillRandom(rng, body)
		pkts[i] = makePacket(c0+uint64(i), receiver, body, tagRoom)
	}
	return pkts
}

// clonePackets deep-copies pkts, keeping each buffer's length, spare
// capacity and the contents of that spare capacity.
func clonePackets(pkts [][]byte) [][]byte {
	out := make([][]byte, len(pkts))
	for i, p := range pkts {
		out[i] = make([]byte, len(p), cap(p))
		copy(out[i][:cap(p)], p[:cap(p)])
	}
	return out
}

// assertPacketsEqual fails unless got and want have the same lengths and
// contents packet by packet.
func assertPacketsEqual(t testing.TB, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d packets, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: packet %d differs (len %d, want %d)", what, i, len(got[i]), len(want[i]))
		}
	}
}

// sealBatch seals a deep copy of pkts with key and returns it.
func sealBatch(t testing.TB, key Key, pkts [][]byte) [][]byte {
	t.Helper()
	sealed := clonePackets(pkts)
	if err := key.Seal(sealed); err != nil {
		t.Fatalf("Seal: %v", err)
	}
	return sealed
}

// runSuiteTests runs every shared batch test on s as subtests.
func runSuiteTests(t *testing.T, s suiteUnderTest) {
	t.Run("Reference", func(t *testing.T) { testSuiteReference(t, s) })
	t.Run("Roundtrip", func(t *testing.T) { testSuiteRoundtrip(t, s) })
	t.Run("Tamper", func(t *testing.T) { testSuiteTamper(t, s) })
	t.Run("WrongKey", func(t *testing.T) { testSuiteWrongKey(t, s) })
	t.Run("SealErrors", func(t *testing.T) { testSuiteSealErrors(t, s) })
	t.Run("OpenRejects", func(t *testing.T) { testSuiteOpenRejects(t, s) })
	t.Run("Allocs", func(t *testing.T) { testSuiteAllocs(t, s) })
	t.Run("Concurrent", func(t *testing.T) { testSuiteConcurrent(t, s) })
}

// testSuiteReference checks that every packet of sealed batches of 1..128
// packets equals s.Reference's one-shot seal of the same packet, and that
// Seal leaves len = header + body + tag.
func testSuiteReference(t *testing.T, s suiteUnderTest) {
	if s.Reference == nil {
		t.Fatalf("%s: suiteUnderTest.Reference is nil", s.ID)
	}
	rng := newTestRand("reference " + s.ID.String())
	p := s.ID.Params()
	for _, n := range []int{1, 2, 3, 7, 16, 33, 64, 127, 128} {
		k := randomDirectionKeys(rng, s.ID)
		key := s.newKey(t, k)
		pkts := randomBatch(rng, n, rng.Uint64N(1<<20), p.TagSize)
		sealed := sealBatch(t, key, pkts)
		for i := range pkts {
			if len(sealed[i]) != len(pkts[i])+p.TagSize {
				t.Fatalf("n=%d packet %d: sealed length %d, want %d", n, i, len(sealed[i]), len(pkts[i])+p.TagSize)
			}
			if !bytes.Equal(sealed[i][:HeaderSize], pkts[i][:HeaderSize]) {
				t.Fatalf("n=%d packet %d: Seal changed the header", n, i)
			}
			want := s.Reference(t, k, pkts[i])
			if !bytes.Equal(sealed[i], want) {
				t.Fatalf("n=%d packet %d (body %d bytes): batch seal differs from the one-shot reference\n got %x\nwant %x",
					n, i, len(pkts[i])-HeaderSize, sealed[i], want)
			}
		}
	}
}

// testSuiteRoundtrip seals and opens batches of every size 1..128 and checks
// that all bits are set and the plaintexts come back.
func testSuiteRoundtrip(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("roundtrip " + s.ID.String())
	p := s.ID.Params()
	k := randomDirectionKeys(rng, s.ID)
	key := s.newKey(t, k)
	sizes := []int{0, 1, 2, 5, 31, 64, 100, 128}
	if !testing.Short() {
		sizes = sizes[:1]
		for n := 1; n <= MaxBatch; n++ {
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		pkts := randomBatch(rng, n, rng.Uint64N(1<<30), p.TagSize)
		sealed := sealBatch(t, key, pkts)
		mask := key.Open(sealed)
		if mask.Count() != n {
			t.Fatalf("n=%d: Open verified %d packets, want all", n, mask.Count())
		}
		for i := range n {
			if !mask.Has(i) {
				t.Fatalf("n=%d: bit %d clear", n, i)
			}
		}
		assertPacketsEqual(t, fmt.Sprintf("n=%d roundtrip", n), sealed, pkts)
	}
}

// tamperings are the modifications testSuiteTamper applies to sealed
// packets; each returns false if it does not apply to pkt.
var tamperings = []struct {
	name string
	f    func(rng *rand.Rand, pkt []byte, tagSize int) ([]byte, bool)
}{
	{"header type", func(_ *rand.Rand, pkt []byte, _ int) ([]byte, bool) { pkt[0] ^= 0x01; return pkt, true }},
	{"header reserved", func(_ *rand.Rand, pkt []byte, _ int) ([]byte, bool) { pkt[3] ^= 0x80; return pkt, true }},
	{"receiver index", func(rng *rand.Rand, pkt []byte, _ int) ([]byte, bool) {
		pkt[4+rng.IntN(4)] ^= 1 << rng.IntN(8)
		return pkt, true
	}},
	{"counter", func(rng *rand.Rand, pkt []byte, _ int) ([]byte, bool) {
		pkt[CounterOffset+rng.IntN(3)] ^= 1 << rng.IntN(8) // stays far below every MaxCounter
		return pkt, true
	}},
	{"body", func(rng *rand.Rand, pkt []byte, tagSize int) ([]byte, bool) {
		n := len(pkt) - HeaderSize - tagSize
		if n == 0 {
			return pkt, false
		}
		pkt[HeaderSize+rng.IntN(n)] ^= 1 << rng.IntN(8)
		return pkt, true
	}},
	{"tag", func(rng *rand.Rand, pkt []byte, tagSize int) ([]byte, bool) {
		pkt[len(pkt)-tagSize+rng.IntN(tagSize)] ^= 1 << rng.IntN(8)
		return pkt, true
	}},
	{"truncated", func(_ *rand.Rand, pkt []byte, _ int) ([]byte, bool) { return pkt[:len(pkt)-1], true }},
	{"extended", func(_ *rand.Rand, pkt []byte, _ int) ([]byte, bool) {
		if len(pkt) == cap(pkt) {
			return pkt, false
		}
		return pkt[:len(pkt)+1], true
	}},
}

// testSuiteTamper seals batches, tampers with some packets (header,
// counter, body, tag, length), opens the whole batch and checks that exactly
// the untouched packets verify, decrypt correctly, and that every tampered
// packet is left byte for byte as it arrived.
func testSuiteTamper(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("tamper " + s.ID.String())
	p := s.ID.Params()
	key := s.newKey(t, randomDirectionKeys(rng, s.ID))
	for _, tm := range tamperings {
		for range 4 {
			n := 1 + rng.IntN(MaxBatch)
			pkts := randomBatch(rng, n, rng.Uint64N(1<<20), p.TagSize+1)
			sealed := sealBatch(t, key, pkts)
			tampered := make([]bool, n)
			any := false
			for i := range sealed {
				if rng.IntN(3) == 0 || (i == n-1 && !any) {
					sealed[i], tampered[i] = tm.f(rng, sealed[i], p.TagSize)
					any = any || tampered[i]
				}
			}
			arrived := clonePackets(sealed)
			mask := key.Open(sealed)
			for i := range sealed {
				switch {
				case tampered[i] && mask.Has(i):
					t.Fatalf("%s: tampered packet %d of %d verified", tm.name, i, n)
				case tampered[i] && !bytes.Equal(sealed[i], arrived[i]):
					t.Fatalf("%s: rejected packet %d of %d was modified", tm.name, i, n)
				case !tampered[i] && !mask.Has(i):
					t.Fatalf("%s: untouched packet %d of %d rejected", tm.name, i, n)
				case !tampered[i] && !bytes.Equal(sealed[i], pkts[i]):
					t.Fatalf("%s: untouched packet %d of %d decrypted wrongly", tm.name, i, n)
				}
			}
		}
	}
}

// testSuiteWrongKey checks that a Key from different key material (and, for
// suites with a salt or a MAC key, one differing only in it) verifies
// nothing and modifies nothing. For Encrypt-then-MAC suites a key differing
// only in the encryption key verifies (the tag covers the ciphertext) but
// must not recover the plaintext.
func testSuiteWrongKey(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("wrong key " + s.ID.String())
	p := s.ID.Params()
	k := randomDirectionKeys(rng, s.ID)
	key := s.newKey(t, k)
	others := map[string]DirectionKeys{"random": randomDirectionKeys(rng, s.ID)}
	flip := func(name string, f func(*DirectionKeys)) {
		o := DirectionKeys{Enc: bytes.Clone(k.Enc), MAC: bytes.Clone(k.MAC), Salt: bytes.Clone(k.Salt), Direction: k.Direction}
		f(&o)
		others[name] = o
	}
	flip("enc bit", func(o *DirectionKeys) { o.Enc[0] ^= 1 })
	if p.MACKeySize > 0 {
		flip("mac bit", func(o *DirectionKeys) { o.MAC[len(o.MAC)-1] ^= 0x80 })
	}
	if p.SaltSize > 0 {
		flip("salt bit", func(o *DirectionKeys) { o.Salt[len(o.Salt)-1] ^= 1 })
	}
	pkts := randomBatch(rng, 64, 0, p.TagSize)
	sealed := sealBatch(t, key, pkts)
	for name, o := range others {
		wrong := s.newKey(t, o)
		got := clonePackets(sealed)
		mask := wrong.Open(got)
		if name == "enc bit" && p.MACKeySize > 0 {
			// Encrypt-then-MAC with independent keys: the tag covers the
			// ciphertext only, so a wrong encryption key verifies every
			// packet but must not give the plaintext back.
			if mask.Count() != len(got) {
				t.Errorf("%s: key with %s verified %d of %d packets", s.ID, name, mask.Count(), len(got))
			}
			for i := range got {
				body := pkts[i][HeaderSize:]
				if len(body) > 0 && bytes.Equal(got[i][HeaderSize:], body) {
					t.Errorf("%s: key with %s decrypted packet %d to its plaintext", s.ID, name, i)
				}
			}
			continue
		}
		if mask.Count() != 0 {
			t.Errorf("%s: key with %s changed verified %d packets", s.ID, name, mask.Count())
		}
		assertPacketsEqual(t, name, got, sealed)
	}
}

// testSuiteSealErrors checks that Seal refuses oversized batches, packets
// shorter than the header or without tag room, and counters at or above
// MaxCounter, and that it then has modified no packet at all.
func testSuiteSealErrors(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("seal errors " + s.ID.String())
	p := s.ID.Params()
	key := s.newKey(t, randomDirectionKeys(rng, s.ID))
	cases := map[string]func() [][]byte{
		"batch too large": func() [][]byte { return randomBatch(rng, MaxBatch+1, 0, p.TagSize) },
		"no tag room": func() [][]byte {
			pkts := randomBatch(rng, 10, 0, p.TagSize)
			pkts[7] = pkts[7][: len(pkts[7]) : len(pkts[7])+p.TagSize-1]
			return pkts
		},
		"short header": func() [][]byte {
			pkts := randomBatch(rng, 10, 0, p.TagSize)
			pkts[9] = pkts[9][:HeaderSize-1]
			return pkts
		},
		"counter at limit": func() [][]byte {
			return randomBatch(rng, 5, p.MaxCounter-4, p.TagSize) // last one = MaxCounter
		},
		"counter max uint64": func() [][]byte {
			pkts := randomBatch(rng, 5, 0, p.TagSize)
			for i := CounterOffset; i < HeaderSize; i++ {
				pkts[2][i] = 0xff
			}
			return pkts
		},
	}
	for name, mk := range cases {
		pkts := mk()
		before := clonePackets(pkts)
		if err := key.Seal(pkts); err == nil {
			t.Errorf("%s: Seal accepted the batch", name)
		}
		assertPacketsEqual(t, name, pkts, before)
		for i := range pkts { // the spare capacity must be untouched too
			if !bytes.Equal(pkts[i][len(pkts[i]):cap(pkts[i])], before[i][len(before[i]):cap(before[i])]) {
				t.Fatalf("%s: Seal wrote to packet %d's spare capacity", name, i)
			}
		}
	}
	// The largest admissible counter still seals and opens.
	pkts := randomBatch(rng, 3, p.MaxCounter-3, p.TagSize)
	sealed := sealBatch(t, key, pkts)
	if m := key.Open(sealed); m.Count() != 3 {
		t.Errorf("counters up to MaxCounter-1: Open verified %d of 3", m.Count())
	}
}

// testSuiteOpenRejects checks that Open clears the bit of, and leaves
// untouched, packets that are shorter than header + tag or carry a counter
// at or above MaxCounter, while the rest of the batch still opens.
func testSuiteOpenRejects(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("open rejects " + s.ID.String())
	p := s.ID.Params()
	key := s.newKey(t, randomDirectionKeys(rng, s.ID))
	pkts := randomBatch(rng, 8, 100, p.TagSize)
	sealed := sealBatch(t, key, pkts)
	sealed[1] = sealed[1][:HeaderSize+p.TagSize-1]
	sealed[3] = sealed[3][:HeaderSize-1]
	sealed[5] = sealed[5][:0]
	for i := CounterOffset; i < HeaderSize; i++ {
		sealed[6][i] = byte(p.MaxCounter >> (8 * (i - CounterOffset)))
	}
	arrived := clonePackets(sealed)
	mask := key.Open(sealed)
	for i := range sealed {
		bad := i == 1 || i == 3 || i == 5 || i == 6
		if bad {
			if mask.Has(i) {
				t.Errorf("packet %d: bad packet verified", i)
			}
			if !bytes.Equal(sealed[i], arrived[i]) {
				t.Errorf("packet %d: rejected packet modified", i)
			}
		} else if !mask.Has(i) || !bytes.Equal(sealed[i], pkts[i]) {
			t.Errorf("packet %d: good packet not opened correctly", i)
		}
	}
}

// testSuiteAllocs checks that Seal and Open allocate nothing, at the
// batch sizes of every path of the suite code: one packet, the small
// batches whose descriptors live in small stack arrays (smallBatch),
// batches of one lane group or less (zuc.Lanes) and of more, up to
// MaxBatch.
func testSuiteAllocs(t *testing.T, s suiteUnderTest) {
	for _, n := range []int{1, 2, smallBatch, smallBatch + 1, KernelLanes, KernelLanes + 1, 64, MaxBatch} {
		testSuiteAllocsN(t, s, n)
	}
}

// testSuiteAllocsN checks that Seal and Open of an n-packet batch allocate
// nothing.
func testSuiteAllocsN(t *testing.T, s suiteUnderTest, n int) {
	rng := newTestRand(fmt.Sprintf("allocs %s %d", s.ID, n))
	p := s.ID.Params()
	key := s.newKey(t, randomDirectionKeys(rng, s.ID))
	pkts := randomBatch(rng, n, 0, p.TagSize)
	lens := make([]int, len(pkts))
	for i := range pkts {
		lens[i] = len(pkts[i])
	}
	if a := testing.AllocsPerRun(20, func() {
		for i := range pkts {
			pkts[i] = pkts[i][:lens[i]]
		}
		if err := key.Seal(pkts); err != nil {
			panic(err)
		}
	}); a != 0 {
		t.Errorf("Seal of %d packets: %v allocations per batch, want 0", n, a)
	}
	sealed := clonePackets(pkts)
	if a := testing.AllocsPerRun(20, func() {
		for i := range pkts {
			pkts[i] = pkts[i][:len(sealed[i])]
			copy(pkts[i], sealed[i])
		}
		if m := key.Open(pkts); m.Count() != len(pkts) {
			panic("ciphers: Open rejected a sealed packet")
		}
	}); a != 0 {
		t.Errorf("Open of %d packets: %v allocations per batch, want 0", n, a)
	}
}

// testSuiteConcurrent seals and opens copies of one batch with one Key from
// several goroutines (run it under -race) and checks every result equals
// the single-goroutine one.
func testSuiteConcurrent(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("concurrent " + s.ID.String())
	p := s.ID.Params()
	key := s.newKey(t, randomDirectionKeys(rng, s.ID))
	pkts := randomBatch(rng, 32, 1000, p.TagSize)
	want := sealBatch(t, key, pkts)
	const workers, rounds = 4, 8
	var wg sync.WaitGroup
	errs := make(chan string, workers*rounds)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				got := clonePackets(pkts)
				if err := key.Seal(got); err != nil {
					errs <- err.Error()
					return
				}
				for i := range got {
					if !bytes.Equal(got[i], want[i]) {
						errs <- fmt.Sprintf("concurrent Seal: packet %d differs", i)
						return
					}
				}
				if m := key.Open(got); m.Count() != len(got) {
					errs <- fmt.Sprintf("concurrent Open verified %d of %d", m.Count(), len(got))
					return
				}
				for i := range got {
					if !bytes.Equal(got[i], pkts[i]) {
						errs <- fmt.Sprintf("concurrent Open: packet %d differs", i)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// benchmarkSuiteSeal measures Seal of a batch of n packets with size-byte
// bodies; SetBytes counts the body bytes of the whole batch.
func benchmarkSuiteSeal(b *testing.B, s suiteUnderTest, n, size int) {
	rng := newTestRand("bench seal")
	p := s.ID.Params()
	key := s.newKey(b, randomDirectionKeys(rng, s.ID))
	pkts := make([][]byte, n)
	for i := range pkts {
		pkts[i] = makePacket(uint64(i), 1, make([]byte, size), p.TagSize)
	}
	b.SetBytes(int64(n * size))
	b.ReportAllocs()
	for b.Loop() {
		for i := range pkts {
			pkts[i] = pkts[i][:HeaderSize+size]
		}
		if err := key.Seal(pkts); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkSuiteOpen measures Open of a batch of n sealed packets with
// size-byte bodies (the buffers are restored before each call).
func benchmarkSuiteOpen(b *testing.B, s suiteUnderTest, n, size int) {
	rng := newTestRand("bench open")
	p := s.ID.Params()
	key := s.newKey(b, randomDirectionKeys(rng, s.ID))
	pkts := make([][]byte, n)
	for i := range pkts {
		pkts[i] = makePacket(uint64(i), 1, make([]byte, size), p.TagSize)
	}
	sealed := sealBatch(b, key, pkts)
	b.SetBytes(int64(n * size))
	b.ReportAllocs()
	for b.Loop() {
		for i := range pkts {
			pkts[i] = pkts[i][:len(sealed[i])]
			copy(pkts[i], sealed[i])
		}
		if m := key.Open(pkts); m.Count() != n {
			b.Fatal("Open rejected a sealed packet")
		}
	}
}
