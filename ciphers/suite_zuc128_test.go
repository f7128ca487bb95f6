package ciphers

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	gmsm "github.com/emmansun/gmsm/zuc"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	izuc "github.com/gmtun/gmtun/ciphers/internal/zuc"
	"github.com/gmtun/gmtun/ciphers/zuc"
	"github.com/gmtun/gmtun/internal/cputime"
)

// zuc128Suite is zuc-128 for the shared batch tests, checked against the
// public ciphers/zuc EEA3 and EIA3.
var zuc128Suite = suiteUnderTest{ID: ZUC128, New: newZUC128Key, Reference: sealZUC128Reference}

// sealZUC128Reference seals one packet with zuc.EEA3 and zuc.EIA3, taking
// COUNT and BEARER from the counter arithmetically.
func sealZUC128Reference(t testing.TB, k DirectionKeys, pkt []byte) []byte {
	t.Helper()
	c := Counter(pkt)
	count, bearer := uint32(c%(1<<32)), uint8((c/(1<<32))%32)
	out := bytes.Clone(pkt)
	body := out[HeaderSize:]
	if err := zuc.EEA3(k.Enc, count, bearer, k.Direction, body, body, 8*len(body)); err != nil {
		t.Fatal(err)
	}
	mac, err := zuc.EIA3(k.MAC, count, bearer, k.Direction, out, 8*len(out))
	if err != nil {
		t.Fatal(err)
	}
	return binary.BigEndian.AppendUint32(out, mac)
}

func TestZUC128Suite(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		runZUCSuiteTests(t, zuc128Suite)
		runZUCLaneTests(t, zuc128Suite)
	})
}

// TestZUC128Params spells out the counter split by hand.
func TestZUC128Params(t *testing.T) {
	for _, c := range []struct {
		c      uint64
		count  uint32
		bearer uint8
	}{
		{0x0000001f_89abcdef, 0x89abcdef, 0x1f},
		// 2^37 + 1: BEARER wraps to 0, the IV of counter 1 — why counters
		// ≥ 2^37 are refused (TestZUC128CounterLimit).
		{0x00000020_00000001, 0x00000001, 0x00},
		{0x00000001_00000000, 0x00000000, 0x01},
		{0x0000000f_ffffffff, 0xffffffff, 0x0f},
		{1<<37 - 1, 0xffffffff, 0x1f},
	} {
		count, bearer := zuc128Params(c.c)
		if count != c.count || bearer != c.bearer {
			t.Errorf("zuc128Params(%#x) = %#x, %#x; want %#x, %#x", c.c, count, bearer, c.count, c.bearer)
		}
	}
}

// TestZUC128LiteralIV seals packets with hand-picked counters and checks
// them against EEA3/EIA3 called with the literal COUNT, BEARER and
// DIRECTION.
func TestZUC128LiteralIV(t *testing.T) {
	for _, c := range []struct {
		c      uint64
		count  uint32
		bearer uint8
		dir    uint8
	}{
		{0x0000001f_89abcdef, 0x89abcdef, 0x1f, 1},
		{0x00000000_00000001, 0x00000001, 0x00, 0},
		{0x00000003_00000000, 0x00000000, 0x03, 1},
		{0x0000001f_ffffffff, 0xffffffff, 0x1f, 0},
	} {
		k := DirectionKeys{Enc: bytes.Repeat([]byte{0x5a}, 16), MAC: bytes.Repeat([]byte{0xa5}, 16), Direction: c.dir}
		key, err := NewKey(ZUC128, k)
		if err != nil {
			t.Fatal(err)
		}
		body := bytes.Repeat([]byte{0x33}, 48)
		pkt := makePacket(c.c, 9, body, 4)
		if err := key.Seal([][]byte{pkt}); err != nil {
			t.Fatal(err)
		}
		pkt = pkt[:HeaderSize+len(body)+4]
		ct := make([]byte, len(body))
		if err := zuc.EEA3(k.Enc, c.count, c.bearer, c.dir, ct, body, 8*len(body)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(pkt[HeaderSize:HeaderSize+len(body)], ct) {
			t.Errorf("c=%#x: ciphertext differs from EEA3(COUNT=%#x, BEARER=%d, DIRECTION=%d)", c.c, c.count, c.bearer, c.dir)
		}
		mac, _ := zuc.EIA3(k.MAC, c.count, c.bearer, c.dir, pkt[:HeaderSize+len(body)], 8*(HeaderSize+len(body)))
		if got := binary.BigEndian.Uint32(pkt[HeaderSize+len(body):]); got != mac {
			t.Errorf("c=%#x: tag %08x, want EIA3 %08x", c.c, got, mac)
		}
		// The other direction's key does not open it.
		k.Direction ^= 1
		other, _ := NewKey(ZUC128, k)
		if m := other.Open([][]byte{bytes.Clone(pkt)}); m.Count() != 0 {
			t.Errorf("c=%#x: opened with the other direction", c.c)
		}
	}
}

// TestZUC128CounterLimit checks the 2^37 IV space: counters up to 2^37−1
// seal and open, 2^37 and above are refused by both sides.
func TestZUC128CounterLimit(t *testing.T) {
	if ZUC128.Params().MaxCounter != 1<<37 {
		t.Fatalf("MaxCounter = %#x, want 2^37", ZUC128.Params().MaxCounter)
	}
	k := DirectionKeys{Enc: make([]byte, 16), MAC: bytes.Repeat([]byte{1}, 16)}
	key, _ := NewKey(ZUC128, k)
	batch := [][]byte{makePacket(1<<37-1, 1, []byte("last"), 4)}
	if err := key.Seal(batch); err != nil {
		t.Fatalf("counter 2^37-1: %v", err)
	}
	last := batch[0]
	for _, c := range []uint64{1 << 37, 1<<37 + 1, 1 << 63} {
		pkt := makePacket(c, 1, []byte("over"), 4)
		before := bytes.Clone(pkt[:cap(pkt)])
		if err := key.Seal([][]byte{pkt}); err == nil {
			t.Errorf("counter %#x sealed", c)
		}
		if !bytes.Equal(pkt[:cap(pkt)], before) {
			t.Errorf("counter %#x: refused Seal modified the packet", c)
		}
		// A valid packet whose counter is raised over the limit (same
		// COUNT and BEARER, so the same IVs) is refused and left untouched.
		forged := bytes.Clone(last)
		binary.LittleEndian.PutUint64(forged[CounterOffset:], c|(1<<37-1))
		arrived := bytes.Clone(forged)
		if m := key.Open([][]byte{forged}); m.Count() != 0 {
			t.Errorf("counter %#x opened", c|(1<<37-1))
		}
		if !bytes.Equal(forged, arrived) {
			t.Errorf("counter %#x: rejected packet modified", c)
		}
	}
	if m := key.Open([][]byte{last}); m.Count() != 1 {
		t.Errorf("counter 2^37-1 did not open")
	}
}

// zucWrongKeys checks what the shared testSuiteWrongKey cannot for
// encrypt-then-MAC suites with independent keys: a different MAC key (or
// salt, or direction) verifies nothing and modifies nothing, while a
// different encryption key alone still verifies (the tag covers the
// ciphertext) and decrypts to something other than the plaintext.
func zucWrongKeys(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("zuc wrong key " + s.ID.String())
	p := s.ID.Params()
	k := randomDirectionKeys(rng, s.ID)
	key := s.newKey(t, k)
	pkts := randomBatch(rng, 64, 0, p.TagSize)
	sealed := sealBatch(t, key, pkts)
	clone := func(f func(*DirectionKeys)) DirectionKeys {
		o := DirectionKeys{Enc: bytes.Clone(k.Enc), MAC: bytes.Clone(k.MAC), Salt: bytes.Clone(k.Salt), Direction: k.Direction}
		f(&o)
		return o
	}
	rejecting := map[string]DirectionKeys{
		"random":    randomDirectionKeys(rng, s.ID),
		"mac bit":   clone(func(o *DirectionKeys) { o.MAC[len(o.MAC)-1] ^= 0x80 }),
		"direction": clone(func(o *DirectionKeys) { o.Direction ^= 1 }),
		"swapped":   clone(func(o *DirectionKeys) { o.Enc, o.MAC = o.MAC, o.Enc }),
	}
	if p.SaltSize > 0 {
		rejecting["salt bit"] = clone(func(o *DirectionKeys) { o.Salt[0] ^= 1 })
	}
	for name, o := range rejecting {
		if name == "direction" && s.ID != ZUC128 {
			continue // zuc-256 does not use the direction bit
		}
		got := clonePackets(sealed)
		if m := s.newKey(t, o).Open(got); m.Count() != 0 {
			t.Errorf("%s: key with %s changed verified %d packets", s.ID, name, m.Count())
		}
		assertPacketsEqual(t, name, got, sealed)
	}
	got := clonePackets(sealed)
	if m := s.newKey(t, clone(func(o *DirectionKeys) { o.Enc[0] ^= 1 })).Open(got); m.Count() != len(got) {
		t.Fatalf("%s: other encryption key: %d of %d verified", s.ID, m.Count(), len(got))
	}
	for i := range got {
		if len(got[i]) > HeaderSize+16 && bytes.Equal(got[i], pkts[i]) {
			t.Fatalf("%s: other encryption key decrypted packet %d correctly", s.ID, i)
		}
	}
}

// runZUCSuiteTests runs the shared batch tests except testSuiteWrongKey,
// whose "enc bit" case assumes a MAC keyed by the encryption key, and
// zucWrongKeys in its place.
func runZUCSuiteTests(t *testing.T, s suiteUnderTest) {
	t.Run("Reference", func(t *testing.T) { testSuiteReference(t, s) })
	t.Run("Roundtrip", func(t *testing.T) { testSuiteRoundtrip(t, s) })
	t.Run("Tamper", func(t *testing.T) { testSuiteTamper(t, s) })
	t.Run("WrongKey", func(t *testing.T) { zucWrongKeys(t, s) })
	t.Run("SealErrors", func(t *testing.T) { testSuiteSealErrors(t, s) })
	t.Run("OpenRejects", func(t *testing.T) { testSuiteOpenRejects(t, s) })
	t.Run("Allocs", func(t *testing.T) { testSuiteAllocs(t, s) })
	t.Run("Concurrent", func(t *testing.T) { testSuiteConcurrent(t, s) })
}

func TestZUC128KeyErrors(t *testing.T) {
	good := DirectionKeys{Enc: make([]byte, 16), MAC: make([]byte, 16), Direction: 1}
	if _, err := newZUC128Key(good); err != nil {
		t.Fatalf("good key material rejected: %v", err)
	}
	for name, k := range map[string]DirectionKeys{
		"short enc": {Enc: make([]byte, 15), MAC: good.MAC},
		"long mac":  {Enc: good.Enc, MAC: make([]byte, 32)},
		"salt":      {Enc: good.Enc, MAC: good.MAC, Salt: make([]byte, 9)},
		"direction": {Enc: good.Enc, MAC: good.MAC, Direction: 2},
	} {
		if _, err := newZUC128Key(k); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := NewKey(ZUC128, k); err == nil {
			t.Errorf("%s: NewKey accepted", name)
		}
	}
}

func BenchmarkZUC128Suite(b *testing.B) {
	benchmarkZUCSuite(b, zuc128Suite, func(b *testing.B, k DirectionKeys, pkt []byte, size int) {
		// gmsm per packet: 128-EEA3 over the body, 128-EIA3 over
		// header ‖ ciphertext, key and IV setup included.
		c := Counter(pkt)
		s, err := gmsm.NewEEACipher(k.Enc, uint32(c), uint32(c>>32)&31, uint32(k.Direction))
		if err != nil {
			b.Fatal(err)
		}
		body := pkt[HeaderSize : HeaderSize+size]
		s.XORKeyStream(body, body)
		h, err := gmsm.NewEIAHash(k.MAC, uint32(c), uint32(c>>32)&31, uint32(k.Direction))
		if err != nil {
			b.Fatal(err)
		}
		h.Write(pkt[:HeaderSize+size])
		h.Sum(pkt[:HeaderSize+size])
	})
}

// Lane tests of the zuc suites. The suites group packets by length into
// multi-lane kernel calls (ciphers/internal/zuc), so these tests build the
// batches that exercise the grouping: equal lengths filling every lane,
// every length 0..4096, packets too long for the MAC scratch, mixed
// batches with runs of equal lengths, counters at the IV-space boundaries
// and unaligned buffers. Every sealed packet is compared with the suite's
// one-shot reference (the public ciphers/zuc API, which is the generic
// single-lane code), then the batch is opened again.

// runZUCLaneTests runs the lane tests on s as subtests.
func runZUCLaneTests(t *testing.T, s suiteUnderTest) {
	t.Run("EqualLengths", func(t *testing.T) { testZUCEqualLengths(t, s) })
	t.Run("LongPackets", func(t *testing.T) { testZUCLongPackets(t, s) })
	t.Run("MixedBatches", func(t *testing.T) { testZUCMixedBatches(t, s) })
	t.Run("CounterEdges", func(t *testing.T) { testZUCCounterEdges(t, s) })
}

// unalignedPacket returns header ‖ body with the given counter in a buffer
// starting off bytes into its allocation, with tagRoom spare capacity.
func unalignedPacket(off int, counter uint64, body []byte, tagRoom int) []byte {
	p := makePacket(counter, 0x01020304, body, tagRoom)
	q := make([]byte, off+cap(p))[off:]
	copy(q, p)
	return q[:len(p):cap(p)]
}

// zucBatch returns packets with the given body lengths, consecutive
// counters from c0, random bodies and random 0..7-byte misalignment.
func zucBatch(rng *rand.Rand, lens []int, c0 uint64, tagRoom int) [][]byte {
	pkts := make([][]byte, len(lens))
	for i, l := range lens {
		body := make([]byte, l)
		fillRandom(rng, body)
		pkts[i] = unalignedPacket(rng.IntN(8), c0+uint64(i), body, tagRoom)
	}
	return pkts
}

// checkZUCBatch seals a copy of pkts, compares every packet with the
// reference, opens it again and checks the plaintexts come back.
func checkZUCBatch(t *testing.T, s suiteUnderTest, k DirectionKeys, key Key, pkts [][]byte, what string) {
	t.Helper()
	sealed := sealBatch(t, key, pkts)
	for i := range pkts {
		if want := s.Reference(t, k, pkts[i]); !bytes.Equal(sealed[i], want) {
			t.Fatalf("%s: packet %d of %d (body %d bytes, counter %#x) differs from the reference",
				what, i, len(pkts), len(pkts[i])-HeaderSize, Counter(pkts[i]))
		}
	}
	if m := key.Open(sealed); m.Count() != len(pkts) {
		t.Fatalf("%s: Open verified %d of %d packets", what, m.Count(), len(pkts))
	}
	assertPacketsEqual(t, what+" roundtrip", sealed, pkts)
}

// testZUCEqualLengths seals batches of one length for every body length
// 0..4096 (every 17th with -short): a single packet, and a batch filling
// two lane groups plus one packet.
func testZUCEqualLengths(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("zuc equal lengths " + s.ID.String())
	p := s.ID.Params()
	k := randomDirectionKeys(rng, s.ID)
	key := s.newKey(t, k)
	step := 1
	if testing.Short() {
		step = 17
	}
	for l := 0; l <= 4096; l += step {
		n := 1
		if l%3 == 0 || l <= 64 || l >= 4000 {
			n = 2*izuc.Lanes + 1
		}
		lens := make([]int, n)
		for i := range lens {
			lens[i] = l
		}
		checkZUCBatch(t, s, k, key, zucBatch(rng, lens, rng.Uint64N(1<<32), p.TagSize), fmt.Sprintf("%d x %d bytes", n, l))
	}
}

// testZUCLongPackets seals 8192- and 65535-byte bodies alone, in a full
// lane group and among short packets (past the MAC keystream scratch of
// the lane path, they take the single-lane path).
func testZUCLongPackets(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("zuc long " + s.ID.String())
	p := s.ID.Params()
	k := randomDirectionKeys(rng, s.ID)
	key := s.newKey(t, k)
	for _, l := range []int{8192, 65535} {
		for _, n := range []int{1, izuc.Lanes} {
			lens := make([]int, n)
			for i := range lens {
				lens[i] = l
			}
			checkZUCBatch(t, s, k, key, zucBatch(rng, lens, rng.Uint64N(1<<30), p.TagSize), fmt.Sprintf("%d x %d bytes", n, l))
		}
		lens := []int{64, l, 1420, 0, 1420, 1420, 3, l - 1, 40, 1420}
		checkZUCBatch(t, s, k, key, zucBatch(rng, lens, rng.Uint64N(1<<30), p.TagSize), fmt.Sprintf("%d among short", l))
	}
}

// testZUCMixedBatches seals batches of 1..128 packets whose lengths mix
// runs of equal sizes (TSO segments and their shorter last segment) with
// random lengths 0..1420, shuffled.
func testZUCMixedBatches(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("zuc mixed " + s.ID.String())
	p := s.ID.Params()
	k := randomDirectionKeys(rng, s.ID)
	key := s.newKey(t, k)
	rounds := 60
	if testing.Short() {
		rounds = 15
	}
	for round := range rounds {
		n := 1 + rng.IntN(MaxBatch)
		if round < 8 {
			n = []int{1, 2, 3, 15, 16, 17, 64, 128}[round]
		}
		lens := make([]int, 0, n)
		for len(lens) < n {
			switch rng.IntN(3) {
			case 0: // a TSO burst: a run of one size and a shorter tail
				size, run := 1+rng.IntN(1420), 1+rng.IntN(40)
				for range run {
					lens = append(lens, size)
				}
				lens = append(lens, rng.IntN(size+1))
			case 1:
				lens = append(lens, bodyLengths[rng.IntN(len(bodyLengths))])
			default:
				lens = append(lens, rng.IntN(1421))
			}
		}
		lens = lens[:n]
		rng.Shuffle(n, func(i, j int) { lens[i], lens[j] = lens[j], lens[i] })
		checkZUCBatch(t, s, k, key, zucBatch(rng, lens, rng.Uint64N(1<<30), p.TagSize), fmt.Sprintf("round %d (%d packets)", round, n))
	}
}

// testZUCCounterEdges seals full batches whose consecutive counters cross
// 2^32 boundaries (for zuc-128, COUNT wraps and BEARER steps) and end at
// the last counter below MaxCounter (2^37 for zuc-128).
func testZUCCounterEdges(t *testing.T, s suiteUnderTest) {
	rng := newTestRand("zuc counters " + s.ID.String())
	p := s.ID.Params()
	const n = 2*izuc.Lanes + 3
	starts := []uint64{0, 1<<32 - n/2, 2<<32 - 5, 31<<32 - n/2, p.MaxCounter - n}
	for range 4 {
		starts = append(starts, uint64(rng.IntN(31)+1)<<32-uint64(rng.IntN(n)))
	}
	for _, c0 := range starts {
		k := randomDirectionKeys(rng, s.ID)
		key := s.newKey(t, k)
		lens := make([]int, n)
		for i := range lens {
			lens[i] = 1420
			if i%5 == 4 {
				lens[i] = rng.IntN(1421)
			}
		}
		checkZUCBatch(t, s, k, key, zucBatch(rng, lens, c0, p.TagSize), fmt.Sprintf("counters from %#x", c0))
	}
}

// fuzzZUCSuite seals a batch shaped by the fuzzer (one body length per
// byte of shape, 0..2040, with runs of equal lengths) with the dispatched
// suite and compares every packet with the generic single-lane reference,
// then opens it.
func fuzzZUCSuite(t *testing.T, s suiteUnderTest, seed uint64, shape []byte) {
	rng := rand.New(rand.NewPCG(seed, uint64(s.ID)))
	p := s.ID.Params()
	k := randomDirectionKeys(rng, s.ID)
	key := s.newKey(t, k)
	shape = shape[:min(len(shape), MaxBatch)]
	if len(shape) == 0 {
		return
	}
	lens := make([]int, len(shape))
	for i, b := range shape {
		lens[i] = 8 * int(b)
		if b&1 != 0 {
			lens[i] -= int(b) % 7
		}
	}
	c0 := rng.Uint64N(p.MaxCounter - MaxBatch)
	checkZUCBatch(t, s, k, key, zucBatch(rng, lens, c0, p.TagSize), fmt.Sprintf("lens %v", lens))
}

func FuzzZUC128Suite(f *testing.F) {
	f.Add(uint64(1), []byte{178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 178, 20})
	f.Add(uint64(2), []byte{0, 1, 2, 3, 255, 7, 9})
	f.Add(uint64(3), []byte{100})
	f.Fuzz(func(t *testing.T, seed uint64, shape []byte) { fuzzZUCSuite(t, zuc128Suite, seed, shape) })
}

// Benchmarks. The machine the numbers come from is shared, so besides the
// wall-clock figures each benchmark reports the CPU time of its (locked)
// thread (internal/cputime): cpu-ns/op and cpu-MB/s of body bytes.

// benchmarkZUCSuite measures Seal and Open of batches (packets × body
// bytes; "mixed": 64 packets of random lengths 0..1420; "tso": 64 packets,
// every 16th 700 bytes and the rest 1420) with every
// implementation of ciphers/internal/zuc the CPU has, and gmsm's
// per-packet equivalent of Seal (gmsmSeal seals one packet in place) on
// the same batches.
func benchmarkZUCSuite(b *testing.B, s suiteUnderTest, gmsmSeal func(b *testing.B, k DirectionKeys, pkt []byte, size int)) {
	type shape struct {
		name string
		lens []int
	}
	var shapes []shape
	for _, sh := range []struct{ n, size int }{{64, 1420}, {16, 1420}, {8, 1420}, {2, 1420}, {1, 1420}, {64, 64}, {64, 576}} {
		lens := make([]int, sh.n)
		for i := range lens {
			lens[i] = sh.size
		}
		shapes = append(shapes, shape{fmt.Sprintf("%dx%d", sh.n, sh.size), lens})
	}
	rng := newTestRand("bench " + s.ID.String())
	mixed := make([]int, 64)
	for i := range mixed {
		mixed[i] = rng.IntN(1421)
	}
	shapes = append(shapes, shape{"mixed", mixed})
	tso := make([]int, 64) // TSO bursts: 15 full segments and a shorter last one
	for i := range tso {
		tso[i] = 1420
		if i%16 == 15 {
			tso[i] = 700
		}
	}
	shapes = append(shapes, shape{"tso", tso})
	k := randomDirectionKeys(rng, s.ID)
	key := s.newKey(b, k)
	tagSize := s.ID.Params().TagSize
	names := append(slices.Clone(impl.List("zuc")), impl.Generic)
	defer impl.Reset("zuc")
	for _, sh := range shapes {
		pkts := make([][]byte, len(sh.lens))
		total := 0
		for i, l := range sh.lens {
			pkts[i] = makePacket(uint64(i), 1, make([]byte, l), tagSize)
			total += l
		}
		reset := func() {
			for i, l := range sh.lens {
				pkts[i] = pkts[i][:HeaderSize+l]
			}
		}
		for _, name := range names {
			if !impl.Select("zuc", name) {
				continue
			}
			b.Run("Seal/"+sh.name+"/"+name, func(b *testing.B) {
				impl.Select("zuc", name)
				cputime.Loop(b, total, func() {
					reset()
					if err := key.Seal(pkts); err != nil {
						b.Fatal(err)
					}
				})
			})
			reset()
			if err := key.Seal(pkts); err != nil {
				b.Fatal(err)
			}
			sealed := clonePackets(pkts)
			b.Run("Open/"+sh.name+"/"+name, func(b *testing.B) {
				impl.Select("zuc", name)
				cputime.Loop(b, total, func() {
					for i := range pkts {
						pkts[i] = pkts[i][:len(sealed[i])]
						copy(pkts[i], sealed[i])
					}
					if m := key.Open(pkts); m.Count() != len(pkts) {
						b.Fatal("Open rejected a sealed packet")
					}
				})
			})
		}
		impl.Reset("zuc")
		b.Run("Seal/"+sh.name+"/gmsm", func(b *testing.B) {
			cputime.Loop(b, total, func() {
				reset()
				for i, pkt := range pkts {
					gmsmSeal(b, k, pkt[:HeaderSize+sh.lens[i]+tagSize], sh.lens[i])
				}
			})
		})
	}
}
