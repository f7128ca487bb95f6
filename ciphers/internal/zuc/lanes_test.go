package zuc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	"github.com/gmtun/gmtun/internal/cputime"
)

// noScratch runs the batch primitives on fresh memory (a nil *Scratch).
var noScratch *Scratch

// laneBatch is one call's worth of random inputs for the batch primitives.
type laneBatch struct {
	key128, key128b [KeySize128]byte // encryption, MAC key
	iv128           [Lanes][IVSize128]byte
	key256, key256b [KeySize256]byte
	iv256           [Lanes][IVSize256]byte
	data            [Lanes][]byte // nil = idle lane
	n               int
}

// newLaneBatch returns random keys and IVs and n lanes of the given
// lengths (-1 = idle lane); every buffer starts 0..3 bytes into its
// allocation so the kernels also see unaligned pointers.
func newLaneBatch(r *rand.Rand, lens []int) *laneBatch {
	b := &laneBatch{n: len(lens)}
	fill(r, b.key128[:])
	fill(r, b.key128b[:])
	fill(r, b.key256[:])
	fill(r, b.key256b[:])
	for i, l := range lens {
		fill(r, b.iv128[i][:])
		fill(r, b.iv256[i][:])
		if l < 0 {
			continue
		}
		off := r.IntN(4)
		buf := make([]byte, off+l)
		fill(r, buf)
		b.data[i] = buf[off : off+l : off+l]
	}
	return b
}

// clone returns copies of the lane buffers (nil stays nil).
func (b *laneBatch) clone() *[Lanes][]byte {
	var out [Lanes][]byte
	for i, d := range b.data {
		if d != nil {
			out[i] = append(make([]byte, 0, len(d)), d...)
		}
	}
	return &out
}

// checkLanes runs every batch primitive on b as dispatched and as the
// generic reference and fails on any difference, including writes to idle
// lanes' tags.
func checkLanes(t *testing.T, b *laneBatch, what string) {
	t.Helper()
	got, want := b.clone(), b.clone()
	noScratch.XORKeyStreams128(&b.key128, &b.iv128, got, b.n)
	XORKeyStreams128Generic(&b.key128, &b.iv128, want, b.n)
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: XORKeyStreams128 lane %d (len %d) differs from generic", what, i, len(want[i]))
		}
	}
	got, want = b.clone(), b.clone()
	noScratch.XORKeyStreams256(&b.key256, &b.iv256, got, b.n)
	XORKeyStreams256Generic(&b.key256, &b.iv256, want, b.n)
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: XORKeyStreams256 lane %d (len %d) differs from generic", what, i, len(want[i]))
		}
	}

	var t128, w128 [Lanes]uint32
	for i := range t128 {
		t128[i], w128[i] = 0xdeadbeef, 0xdeadbeef
	}
	msgs := b.clone()
	noScratch.EIA3Tags(&b.key128, &b.iv128, msgs, &t128, b.n)
	EIA3TagsGeneric(&b.key128, &b.iv128, msgs, &w128, b.n)
	if t128 != w128 {
		t.Fatalf("%s: EIA3Tags = %08x, generic %08x", what, t128, w128)
	}
	var t256, w256 [Lanes][MAC256TagSize]byte
	for i := range t256 {
		t256[i][0], w256[i][0] = 0xa5, 0xa5
	}
	noScratch.MAC256Tags(&b.key256, &b.iv256, msgs, &t256, b.n)
	MAC256TagsGeneric(&b.key256, &b.iv256, msgs, &w256, b.n)
	if t256 != w256 {
		t.Fatalf("%s: MAC256Tags differ from generic:\n got %x\nwant %x", what, t256, w256)
	}
	for i := range msgs {
		if !bytes.Equal(msgs[i], b.data[i]) {
			t.Fatalf("%s: a MAC primitive modified message %d", what, i)
		}
	}
	checkEncryptThenMAC(t, b, nil, what)
}

// checkEncryptThenMAC runs the encrypt-then-MAC primitives on b as
// methods of s (nil: fresh memory, as the package-level functions), each
// lane's body being its data past a 16-byte header (the whole data if
// shorter), and compares them with the generic ones; then opens forged and
// genuine lanes (checkVerifyThenDecrypt).
func checkEncryptThenMAC(t *testing.T, b *laneBatch, s *Scratch, what string) {
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
	got, want := b.clone(), b.clone()
	var t128, w128 [Lanes]uint32
	s.EncryptThenMAC128(&b.key128, &b.key128b, &b.iv128, &eia, split(got), got, &t128, b.n)
	EncryptThenMAC128Generic(&b.key128, &b.key128b, &b.iv128, &eia, split(want), want, &w128, b.n)
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: EncryptThenMAC128 lane %d ciphertext differs from generic", what, i)
		}
	}
	if t128 != w128 {
		t.Fatalf("%s: EncryptThenMAC128 tags %08x, generic %08x", what, t128, w128)
	}
	got, want = b.clone(), b.clone()
	var t256, w256 [Lanes][MAC256TagSize]byte
	s.EncryptThenMAC256(&b.key256, &b.key256b, &b.iv256, split(got), got, &t256, b.n)
	EncryptThenMAC256Generic(&b.key256, &b.key256b, &b.iv256, split(want), want, &w256, b.n)
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: EncryptThenMAC256 lane %d ciphertext differs from generic", what, i)
		}
	}
	if t256 != w256 {
		t.Fatalf("%s: EncryptThenMAC256 tags differ from generic:\n got %x\nwant %x", what, t256, w256)
	}
	checkVerifyThenDecrypt(t, b, s, what)
}

func TestLanesEqualLengths(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		lengths := []int{4095, 4096, 4097, 4112, 4140, 8192, 65535}
		step := 1
		if testing.Short() {
			step = 13
		}
		for l := 0; l <= 320; l += step {
			lengths = append(lengths, l)
		}
		for l := 321; l < 4096; l += 37 * step {
			lengths = append(lengths, l)
		}
		for _, l := range lengths {
			for _, n := range []int{1, 2, Lanes} {
				if l >= 8192 && n == 2 {
					continue
				}
				lens := make([]int, n)
				for i := range lens {
					lens[i] = l
				}
				checkLanes(t, newLaneBatch(r, lens), fmt.Sprintf("%d lanes of %d bytes", n, l))
			}
		}
	})
}

// TestLanesSmallEncryptThenMAC covers the one-call encrypt-then-MAC
// paths (1..Lanes/4 packets in one 8-lane call, up to Lanes/2 in one
// 16-lane call, Lanes/2+1..Lanes in one paired call of two 16-lane
// states where the kernels have it): every length 0..2100 with lanes of nearly
// equal lengths, and lengths past the MTU-sized keystream buffer (the
// fallback to separate calls), on fresh memory and on one Scratch reused
// by every call.
func TestLanesSmallEncryptThenMAC(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(15, 16))
		var shared Scratch
		step := 1
		if testing.Short() {
			step = 17
		}
		lengths := []int{1532, 1533, 1552, 1553, 2040, 2041, 4000, 8192, 65535}
		for l := 0; l <= 2100; l += step {
			lengths = append(lengths, l)
		}
		for i, l := range lengths {
			n := 1 + i%Lanes // every one-call size
			lens := make([]int, n)
			for j := range lens {
				lens[j] = max(0, l-r.IntN(8))
			}
			b := newLaneBatch(r, lens)
			s := &shared
			if i%2 == 1 {
				s = nil
			}
			checkEncryptThenMAC(t, b, s, fmt.Sprintf("%d packets of about %d bytes", n, l))
		}
	})
}

// TestLanesScratchReuse runs every primitive as a method of one Scratch
// over a random sequence of calls (full and partial groups, both lane
// halves, mixed, long and lone packets), so each call starts from the
// state and keystream another left behind, and compares the results with
// the generic primitives.
func TestLanesScratchReuse(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(17, 18))
		var s Scratch
		rounds := 200
		if testing.Short() {
			rounds = 40
		}
		for round := range rounds {
			n := 1 + r.IntN(Lanes)
			lens := make([]int, n)
			base := []int{0, 64, 576, 1420, 3000, 9000}[r.IntN(6)]
			for j := range lens {
				lens[j] = base + r.IntN(100)
				if r.IntN(8) == 0 {
					lens[j] = -1
				}
			}
			b := newLaneBatch(r, lens)
			what := fmt.Sprintf("round %d lens %v", round, lens)
			switch r.IntN(3) {
			case 0:
				checkEncryptThenMAC(t, b, &s, what)
			case 1:
				got, want := b.clone(), b.clone()
				s.XORKeyStreams128(&b.key128, &b.iv128, got, b.n)
				XORKeyStreams128Generic(&b.key128, &b.iv128, want, b.n)
				s.XORKeyStreams256(&b.key256, &b.iv256, got, b.n)
				XORKeyStreams256Generic(&b.key256, &b.iv256, want, b.n)
				for i := range got {
					if !bytes.Equal(got[i], want[i]) {
						t.Fatalf("%s: keystream lane %d differs from generic", what, i)
					}
				}
			default:
				var t128, w128 [Lanes]uint32
				var t256, w256 [Lanes][MAC256TagSize]byte
				s.EIA3Tags(&b.key128, &b.iv128, &b.data, &t128, b.n)
				EIA3TagsGeneric(&b.key128, &b.iv128, &b.data, &w128, b.n)
				s.MAC256Tags(&b.key256, &b.iv256, &b.data, &t256, b.n)
				MAC256TagsGeneric(&b.key256, &b.iv256, &b.data, &w256, b.n)
				if t128 != w128 || t256 != w256 {
					t.Fatalf("%s: tags differ from generic", what)
				}
			}
		}
	})
}

func TestLanesMixed(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		rounds := 300
		if testing.Short() {
			rounds = 40
		}
		for round := range rounds {
			n := r.IntN(Lanes + 1)
			lens := make([]int, n)
			for i := range lens {
				switch r.IntN(8) {
				case 0:
					lens[i] = -1 // idle
				case 1:
					lens[i] = r.IntN(8) // partial words, empty
				case 2:
					lens[i] = 1420 - r.IntN(4)
				case 3:
					lens[i] = 4000 + r.IntN(300) // around the MAC scratch limit
				default:
					lens[i] = r.IntN(1437)
				}
			}
			checkLanes(t, newLaneBatch(r, lens), fmt.Sprintf("round %d lens %v", round, lens))
		}
		// One long lane among short ones, and the x8 halves unevenly used.
		checkLanes(t, newLaneBatch(r, []int{65535, 3, 64, 64, 7, -1, 0, 1}), "one long lane")
		checkLanes(t, newLaneBatch(r, []int{-1, -1, -1, -1, -1, -1, -1, -1, 100, 200, 300}), "upper half only")
		checkLanes(t, newLaneBatch(r, []int{5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 9}), "sparse")
	})
}

// TestLanesLongMAC covers MACs whose keystream exceeds one lane buffer of
// the kernel tiers, which run in chunks: lengths around the chunk
// boundaries (the MAC keystream of 2016..2040 bytes fills a buffer, a
// chunk is 1984 bytes), random lengths up to 64 KiB, 8192 and 65535,
// lone packets, full calls, long lanes among short and idle ones, and the
// 8-lane halves unevenly loaded.
func TestLanesLongMAC(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(13, 14))
		lengths := []int{2015, 2016, 2017, 2039, 2040, 2041, 2044, 2048, 3967, 3968, 3969, 4000, 4001,
			5951, 5952, 5953, 8192, 8193, 65535, 65536}
		rounds := 12
		if testing.Short() {
			rounds = 4
		}
		for range rounds {
			lengths = append(lengths, 2048+r.IntN(65536-2048+1))
		}
		for _, l := range lengths {
			for _, n := range []int{1, 2, 9, Lanes} {
				lens := make([]int, n)
				for i := range lens {
					lens[i] = l
				}
				checkLanes(t, newLaneBatch(r, lens), fmt.Sprintf("%d lanes of %d bytes", n, l))
			}
		}
		for round := range rounds {
			n := 2 + r.IntN(Lanes-1)
			lens := make([]int, n)
			for i := range lens {
				switch r.IntN(5) {
				case 0:
					lens[i] = -1
				case 1:
					lens[i] = r.IntN(9)
				case 2:
					lens[i] = r.IntN(1500)
				default:
					lens[i] = 2000 + r.IntN(20000)
				}
			}
			lens[r.IntN(n)] = 2048 + r.IntN(16384) // at least one long lane
			checkLanes(t, newLaneBatch(r, lens), fmt.Sprintf("round %d lens %v", round, lens))
		}
		checkLanes(t, newLaneBatch(r, []int{8192, 3, -1, 100, 0, 1, -1, -1, 2041}), "long lanes in both halves")
		checkLanes(t, newLaneBatch(r, []int{-1, -1, -1, -1, -1, -1, -1, -1, 65535, 5}), "upper half only")
		checkLanes(t, newLaneBatch(r, []int{10, 20, 30, -1, -1, -1, -1, -1, 9000, 12000}), "short lower half, long upper half")
		checkLanes(t, newLaneBatch(r, []int{9000, 2, -1, -1, -1, -1, -1, -1, 20, 30}), "long lower half, short upper half")
	})
}

func TestLanesLongAllocs(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(15, 16))
		lens := make([]int, Lanes)
		for i := range lens {
			lens[i] = 8192 + 997*i
		}
		b := newLaneBatch(r, lens)
		var t128 [Lanes]uint32
		var t256 [Lanes][MAC256TagSize]byte
		var bodies [Lanes][]byte
		for i := range bodies[:8] {
			bodies[i] = b.data[i][16:]
		}
		a := testing.AllocsPerRun(5, func() {
			noScratch.EIA3Tags(&b.key128, &b.iv128, &b.data, &t128, b.n)
			noScratch.MAC256Tags(&b.key256, &b.iv256, &b.data, &t256, b.n)
			noScratch.EIA3Tags(&b.key128, &b.iv128, &b.data, &t128, 1)
			noScratch.MAC256Tags(&b.key256, &b.iv256, &b.data, &t256, 1)
			noScratch.EncryptThenMAC128(&b.key128, &b.key128b, &b.iv128, &b.iv128, &bodies, &b.data, &t128, 8)
			noScratch.EncryptThenMAC256(&b.key256, &b.key256b, &b.iv256, &bodies, &b.data, &t256, 8)
		})
		if a != 0 {
			t.Errorf("%v allocations per batch of long packets, want 0", a)
		}
	})
}

func TestLanesAllocs(t *testing.T) {
	impltest.TestAllImplementations(t, "zuc", func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		lens := make([]int, Lanes)
		for i := range lens {
			lens[i] = 1400 + i
		}
		b := newLaneBatch(r, lens)
		bufs := b.clone()
		var t128 [Lanes]uint32
		var t256 [Lanes][MAC256TagSize]byte
		var eia [Lanes][IVSize128]byte
		var bodies [Lanes][]byte
		for i := range bodies[:8] {
			bodies[i] = bufs[i][16:]
		}
		a := testing.AllocsPerRun(20, func() {
			noScratch.EncryptThenMAC128(&b.key128, &b.key128b, &b.iv128, &eia, &bodies, bufs, &t128, 8)
			noScratch.EncryptThenMAC256(&b.key256, &b.key256b, &b.iv256, &bodies, bufs, &t256, 8)
			noScratch.XORKeyStreams128(&b.key128, &b.iv128, bufs, b.n)
			noScratch.EIA3Tags(&b.key128, &b.iv128, bufs, &t128, b.n)
			noScratch.XORKeyStreams256(&b.key256, &b.iv256, bufs, b.n)
			noScratch.MAC256Tags(&b.key256, &b.iv256, bufs, &t256, b.n)
		})
		if a != 0 {
			t.Errorf("%v allocations per batch, want 0", a)
		}
	})
}

// FuzzLanes compares the dispatched batch primitives with the generic ones
// on fuzzer-chosen lane counts and lengths (the seed corpus runs in go
// test).
func FuzzLanes(f *testing.F) {
	f.Add(uint64(1), []byte{16, 0, 5, 200, 255, 3})
	f.Add(uint64(2), []byte{100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100})
	f.Add(uint64(3), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint64(4), []byte{255, 0})
	f.Fuzz(func(t *testing.T, seed uint64, shape []byte) {
		r := rand.New(rand.NewPCG(seed, 9))
		n := min(len(shape), Lanes)
		lens := make([]int, n)
		for i := range lens {
			// 0..2295 bytes, with idle lanes for 0xff.
			lens[i] = int(shape[i]) * 9
			if shape[i] == 0xff {
				lens[i] = -1
			}
		}
		checkLanes(t, newLaneBatch(r, lens), fmt.Sprintf("lens %v", lens))
	})
}

// BenchmarkLanes measures each batch primitive on 64 packets of 1420
// bytes (four calls of Lanes), once per implementation, in CPU time
// (cpu-MB/s): EEA3 alone is the keystream XOR of ZUC-128.
func BenchmarkLanes(b *testing.B) {
	const batch, size = 64, 1420
	r := rand.New(rand.NewPCG(9, 10))
	var groups [batch / Lanes]*laneBatch
	for g := range groups {
		lens := make([]int, Lanes)
		for i := range lens {
			lens[i] = size
		}
		groups[g] = newLaneBatch(r, lens)
	}
	var t128 [Lanes]uint32
	var t256 [Lanes][MAC256TagSize]byte
	prims := []struct {
		name string
		f    func(b *laneBatch)
	}{
		{"EEA3", func(b *laneBatch) { noScratch.XORKeyStreams128(&b.key128, &b.iv128, &b.data, Lanes) }},
		{"EIA3", func(b *laneBatch) { noScratch.EIA3Tags(&b.key128, &b.iv128, &b.data, &t128, Lanes) }},
		{"ZUC256", func(b *laneBatch) { noScratch.XORKeyStreams256(&b.key256, &b.iv256, &b.data, Lanes) }},
		{"MAC256", func(b *laneBatch) { noScratch.MAC256Tags(&b.key256, &b.iv256, &b.data, &t256, Lanes) }},
	}
	names := append(impl.List("zuc"), impl.Generic)
	defer impl.Reset("zuc")
	for _, p := range prims {
		for _, name := range names {
			if !impl.Select("zuc", name) {
				continue
			}
			b.Run(p.name+"/"+name, func(b *testing.B) {
				impl.Select("zuc", name)
				cputime.Loop(b, batch*size, func() {
					for _, g := range groups {
						p.f(g)
					}
				})
			})
		}
	}
}

// BenchmarkLanesLong measures the MAC and encrypt-then-MAC primitives on
// long packets (8192 bytes, over the MTU-sized keystream buffer), for a
// full call of Lanes packets and for a lone packet, per implementation,
// in CPU time.
func BenchmarkLanesLong(b *testing.B) {
	const size = 8192
	r := rand.New(rand.NewPCG(11, 12))
	var t128 [Lanes]uint32
	var t256 [Lanes][MAC256TagSize]byte
	names := append(impl.List("zuc"), impl.Generic)
	defer impl.Reset("zuc")
	for _, n := range []int{Lanes, 1} {
		lens := make([]int, n)
		for i := range lens {
			lens[i] = size
		}
		g := newLaneBatch(r, lens)
		var bodies [Lanes][]byte
		for i := range n {
			bodies[i] = g.data[i][16:]
		}
		prims := []struct {
			name string
			f    func()
		}{
			{"EIA3", func() { noScratch.EIA3Tags(&g.key128, &g.iv128, &g.data, &t128, n) }},
			{"MAC256", func() { noScratch.MAC256Tags(&g.key256, &g.iv256, &g.data, &t256, n) }},
			{"ETM128", func() {
				noScratch.EncryptThenMAC128(&g.key128, &g.key128b, &g.iv128, &g.iv128, &bodies, &g.data, &t128, n)
			}},
			{"ETM256", func() {
				noScratch.EncryptThenMAC256(&g.key256, &g.key256b, &g.iv256, &bodies, &g.data, &t256, n)
			}},
		}
		for _, p := range prims {
			for _, name := range names {
				if !impl.Select("zuc", name) {
					continue
				}
				b.Run(fmt.Sprintf("%s/%dx%d/%s", p.name, n, size, name), func(b *testing.B) {
					impl.Select("zuc", name)
					cputime.Loop(b, n*size, p.f)
				})
			}
		}
	}
}
