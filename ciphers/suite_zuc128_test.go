package ciphers

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gmtun/gmtun/ciphers/zuc"
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
	runZUCSuiteTests(t, zuc128Suite)
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
	b.Run("Seal/64x1420", func(b *testing.B) { benchmarkSuiteSeal(b, zuc128Suite, 64, 1420) })
	b.Run("Open/64x1420", func(b *testing.B) { benchmarkSuiteOpen(b, zuc128Suite, 64, 1420) })
	b.Run("Seal/64x64", func(b *testing.B) { benchmarkSuiteSeal(b, zuc128Suite, 64, 64) })
}
