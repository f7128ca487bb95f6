package allowedips

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// naive is the linear-scan reference model.
type naive map[netip.Prefix]int

func (m naive) lookup(a netip.Addr) (int, bool) {
	best, bestBits, ok := 0, -1, false
	for p, v := range m {
		if p.Contains(a) && p.Bits() > bestBits {
			best, bestBits, ok = v, p.Bits(), true
		}
	}
	return best, ok
}

func (m naive) entries(v int) []netip.Prefix {
	var out []netip.Prefix
	for p, pv := range m {
		if pv == v {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, comparePrefix)
	return out
}

func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}

func mp(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func ma(s string) netip.Addr   { return netip.MustParseAddr(s) }

func TestBasic(t *testing.T) {
	var tbl Table[string]
	for p, v := range map[string]string{
		"10.0.0.0/8":      "a",
		"10.1.0.0/16":     "b",
		"10.1.2.0/24":     "c",
		"10.1.2.3/32":     "d",
		"0.0.0.0/0":       "default4",
		"fd00::/8":        "e",
		"fd00:1::/32":     "f",
		"fd00:1::1/128":   "g",
		"::ffff:0:0/96":   "mapped",
		"198.18.0.0/15":   "h",
		"198.19.255.0/24": "i",
	} {
		if err := tbl.Insert(mp(p), v); err != nil {
			t.Fatal(err)
		}
	}
	if tbl.Len() != 11 {
		t.Fatalf("Len = %d, want 11", tbl.Len())
	}
	cases := []struct {
		addr string
		want string
		ok   bool
	}{
		{"10.9.9.9", "a", true},
		{"10.1.9.9", "b", true},
		{"10.1.2.9", "c", true},
		{"10.1.2.3", "d", true},
		{"11.0.0.1", "default4", true},
		{"198.19.255.7", "i", true},
		{"198.18.3.4", "h", true},
		{"fd00::9", "e", true},
		{"fd00:1::2", "f", true},
		{"fd00:1::1", "g", true},
		{"fe80::1", "", false},
		{"::ffff:10.1.2.3", "mapped", true}, // IPv4-mapped is IPv6 space
	}
	for _, c := range cases {
		got, ok := tbl.Lookup(ma(c.addr))
		if got != c.want || ok != c.ok {
			t.Errorf("Lookup(%s) = %q,%v want %q,%v", c.addr, got, ok, c.want, c.ok)
		}
		raw := ma(c.addr).AsSlice()
		got, ok = tbl.LookupIP(raw)
		if got != c.want || ok != c.ok {
			t.Errorf("LookupIP(%s) = %q,%v want %q,%v", c.addr, got, ok, c.want, c.ok)
		}
	}
	if _, ok := tbl.LookupIP([]byte{1, 2, 3}); ok {
		t.Error("3-byte address matched")
	}
	if _, ok := tbl.Lookup(netip.Addr{}); ok {
		t.Error("zero Addr matched")
	}

	// Replace moves a prefix to a new value.
	if err := tbl.Insert(mp("10.1.0.0/16"), "z"); err != nil {
		t.Fatal(err)
	}
	if got, _ := tbl.Lookup(ma("10.1.9.9")); got != "z" || tbl.Len() != 11 {
		t.Errorf("after replace got %q len %d", got, tbl.Len())
	}
	if !tbl.Remove(mp("10.1.2.0/24")) || tbl.Remove(mp("10.1.2.0/24")) {
		t.Error("Remove returned wrong presence")
	}
	if got, _ := tbl.Lookup(ma("10.1.2.9")); got != "z" {
		t.Errorf("after remove got %q, want z", got)
	}
	if got, _ := tbl.Lookup(ma("10.1.2.3")); got != "d" {
		t.Errorf("/32 lost after removing its parent: %q", got)
	}
	if n := tbl.RemoveByValue("default4"); n != 1 {
		t.Errorf("RemoveByValue = %d", n)
	}
	if _, ok := tbl.Lookup(ma("11.0.0.1")); ok {
		t.Error("default route still present")
	}
	want := []netip.Prefix{mp("fd00::/8")}
	if got := tbl.Entries("e"); !slices.Equal(got, want) {
		t.Errorf("Entries(e) = %v", got)
	}
}

func TestInsertRejectsNonCanonical(t *testing.T) {
	var tbl Table[int]
	for _, p := range []netip.Prefix{mp("10.0.0.1/8"), {}, mp("fd00::1/64"), netip.PrefixFrom(ma("fe80::1%eth0"), 64)} {
		if err := tbl.Insert(p, 1); err == nil {
			t.Errorf("Insert(%v) accepted", p)
		}
		if err := CheckPrefix(p); err == nil {
			t.Errorf("CheckPrefix(%v) accepted", p)
		}
	}
	if tbl.Len() != 0 {
		t.Fatal("table changed")
	}
	if err := CheckPrefix(mp("10.0.0.0/8")); err != nil {
		t.Fatal(err)
	}
}

func randPrefix(rng *rand.Rand, v4 bool) netip.Prefix {
	// Draw from a small address pool so prefixes nest and collide often.
	if v4 {
		b := [4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256))}
		return netip.PrefixFrom(netip.AddrFrom4(b), rng.IntN(33)).Masked()
	}
	var b [16]byte
	b[0], b[1] = 0xfd, byte(rng.IntN(4))
	for i := 2; i < 16; i++ {
		b[i] = byte(rng.IntN(256))
	}
	return netip.PrefixFrom(netip.AddrFrom16(b), rng.IntN(129)).Masked()
}

func randAddr(rng *rand.Rand, v4 bool) netip.Addr {
	p := randPrefix(rng, v4)
	if rng.IntN(2) == 0 {
		return p.Addr() // hit a prefix boundary
	}
	if v4 {
		return netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256))})
	}
	var b [16]byte
	b[0], b[1] = 0xfd, byte(rng.IntN(4))
	for i := 2; i < 16; i++ {
		b[i] = byte(rng.IntN(256))
	}
	return netip.AddrFrom16(b)
}

func checkAgainst(t *testing.T, tbl *Table[int], m naive, rng *rand.Rand, probes int) {
	t.Helper()
	for i := 0; i < probes; i++ {
		a := randAddr(rng, rng.IntN(2) == 0)
		got, ok := tbl.Lookup(a)
		want, wok := m.lookup(a)
		if got != want || ok != wok {
			t.Fatalf("Lookup(%v) = %d,%v want %d,%v", a, got, ok, want, wok)
		}
	}
	if tbl.Len() != len(m) {
		t.Fatalf("Len = %d, model %d", tbl.Len(), len(m))
	}
	for v := 0; v < 8; v++ {
		if got, want := tbl.Entries(v), m.entries(v); !slices.Equal(got, want) {
			t.Fatalf("Entries(%d) = %v want %v", v, got, want)
		}
	}
}

func TestRandomVsNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rounds := 30
	if testing.Short() {
		rounds = 5
	}
	for r := 0; r < rounds; r++ {
		var tbl Table[int]
		m := naive{}
		for i := 0; i < 400; i++ {
			p := randPrefix(rng, rng.IntN(2) == 0)
			switch op := rng.IntN(10); {
			case op < 7:
				v := rng.IntN(8)
				if err := tbl.Insert(p, v); err != nil {
					t.Fatal(err)
				}
				m[p] = v
			case op < 9:
				_, had := m[p]
				if tbl.Remove(p) != had {
					t.Fatalf("Remove(%v) presence mismatch", p)
				}
				delete(m, p)
			default:
				v := rng.IntN(8)
				n := 0
				for q, qv := range m {
					if qv == v {
						delete(m, q)
						n++
					}
				}
				if got := tbl.RemoveByValue(v); got != n {
					t.Fatalf("RemoveByValue(%d) = %d want %d", v, got, n)
				}
			}
		}
		checkAgainst(t, &tbl, m, rng, 2000)
		// Drain everything: the trie must become empty (no leaked branch nodes).
		for p := range m {
			if !tbl.Remove(p) {
				t.Fatalf("Remove(%v) missing", p)
			}
		}
		if tbl.root4 != nil || tbl.root6 != nil || tbl.Len() != 0 {
			t.Fatal("table not empty after removing everything")
		}
	}
}

// TestInvariants checks the path-compression invariant: every value-less
// node has exactly two children, every child extends its parent's prefix.
func TestInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tbl Table[int]
	var ps []netip.Prefix
	for i := 0; i < 2000; i++ {
		p := randPrefix(rng, i%2 == 0)
		ps = append(ps, p)
		if err := tbl.Insert(p, i%5); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			tbl.Remove(ps[rng.IntN(len(ps))])
		}
	}
	tbl.RemoveByValue(2)
	var check func(n *node[int], parentBits int)
	check = func(n *node[int], parentBits int) {
		if n == nil {
			return
		}
		if int(n.bits) <= parentBits {
			t.Fatalf("child /%d not longer than parent /%d", n.bits, parentBits)
		}
		if n.key.and(maskOf(n.bits)) != n.key || n.mask != maskOf(n.bits) {
			t.Fatal("node key not masked or mask stale")
		}
		if !n.has && (n.child[0] == nil || n.child[1] == nil) {
			t.Fatal("value-less node without two children")
		}
		for b, c := range n.child {
			if c != nil && (c.key.and(n.mask) != n.key || c.key.bit(n.bits) != uint8(b)) {
				t.Fatal("child on the wrong side")
			}
			check(c, int(n.bits))
		}
	}
	check(tbl.root4, -1)
	check(tbl.root6, -1)
}

func TestLookupNoAllocs(t *testing.T) {
	var tbl Table[*int]
	rng := rand.New(rand.NewPCG(5, 6))
	v := new(int)
	for i := 0; i < 1000; i++ {
		if err := tbl.Insert(randPrefix(rng, i%2 == 0), v); err != nil {
			t.Fatal(err)
		}
	}
	a4, a6 := ma("10.1.2.3"), ma("fd01::1")
	raw4, raw6 := a4.AsSlice(), a6.AsSlice()
	allocs := testing.AllocsPerRun(1000, func() {
		tbl.Lookup(a4)
		tbl.Lookup(a6)
		tbl.LookupIP(raw4)
		tbl.LookupIP(raw6)
	})
	if allocs != 0 {
		t.Fatalf("lookups allocate %v times", allocs)
	}
}

func FuzzTable(f *testing.F) {
	f.Add([]byte{0, 10, 0, 0, 0, 8, 1, 10, 1, 2, 3, 32})
	f.Add([]byte{1, 0xfd, 0, 0, 0, 16, 2, 0xfd, 0, 0, 0, 64})
	f.Fuzz(func(t *testing.T, data []byte) {
		var tbl Table[int]
		m := naive{}
		// Each 6-byte record: op, 4 address bytes (expanded for IPv6), length.
		for len(data) >= 6 {
			op, a, l := data[0], [4]byte(data[1:5]), int(data[5])
			data = data[6:]
			var p netip.Prefix
			if op&1 == 0 {
				p = netip.PrefixFrom(netip.AddrFrom4(a), l%33).Masked()
			} else {
				var b [16]byte
				copy(b[:], a[:])
				copy(b[12:], a[:])
				p = netip.PrefixFrom(netip.AddrFrom16(b), l%129).Masked()
			}
			switch (op >> 1) % 4 {
			case 0, 1:
				if err := tbl.Insert(p, int(op>>3)); err != nil {
					t.Fatal(err)
				}
				m[p] = int(op >> 3)
			case 2:
				_, had := m[p]
				if tbl.Remove(p) != had {
					t.Fatal("Remove presence mismatch")
				}
				delete(m, p)
			case 3:
				got, ok := tbl.Lookup(p.Addr())
				want, wok := m.lookup(p.Addr())
				if got != want || ok != wok {
					t.Fatalf("Lookup(%v) = %d,%v want %d,%v", p.Addr(), got, ok, want, wok)
				}
			}
		}
		if tbl.Len() != len(m) {
			t.Fatalf("Len %d model %d", tbl.Len(), len(m))
		}
	})
}

func BenchmarkLookup(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{16, 1024, 65536} {
		var tbl Table[int]
		for i := 0; i < n; i++ {
			v4 := rng.IntN(2) == 0
			var p netip.Prefix
			if v4 {
				p = netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), 0}), 16+rng.IntN(17)).Masked()
			} else {
				p = randPrefix(rng, false)
			}
			_ = tbl.Insert(p, i)
		}
		addrs := make([][]byte, 256)
		for i := range addrs {
			if i%2 == 0 {
				addrs[i] = []byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))}
			} else {
				addrs[i] = randAddr(rng, false).AsSlice()
			}
		}
		b.Run("prefixes="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				tbl.LookupIP(addrs[i&255])
			}
		})
	}
}

// TestFreeze: a frozen table answers as before, lookups run concurrently
// without its lock (the race detector sees no conflict), and every
// mutation panics without changing it.
func TestFreeze(t *testing.T) {
	var tb Table[int]
	for i, s := range []string{"198.18.0.0/15", "198.18.1.0/24", "fd00::/8", "fd00:1::/32"} {
		if err := tb.Insert(netip.MustParsePrefix(s), i+1); err != nil {
			t.Fatal(err)
		}
	}
	tb.Freeze()
	want := map[string]int{"198.18.1.7": 2, "198.19.0.1": 1, "fd00:1::9": 4, "fd00:2::9": 3, "192.0.2.1": 0}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				for a, v := range want {
					ip := netip.MustParseAddr(a)
					if got, ok := tb.Lookup(ip); got != v || ok != (v != 0) {
						t.Errorf("Lookup(%s) = %d, %v; want %d", a, got, ok, v)
						return
					}
					if got, _ := tb.LookupIP(ip.AsSlice()); got != v {
						t.Errorf("LookupIP(%s) = %d; want %d", a, got, v)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for name, mutate := range map[string]func(){
		"Insert":        func() { tb.Insert(netip.MustParsePrefix("192.0.2.0/24"), 9) },
		"Remove":        func() { tb.Remove(netip.MustParsePrefix("198.18.1.0/24")) },
		"RemoveByValue": func() { tb.RemoveByValue(1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s on a frozen table did not panic", name)
				}
			}()
			mutate()
		}()
	}
	if tb.Len() != 4 {
		t.Fatalf("a frozen table changed: %d prefixes", tb.Len())
	}
}

// BenchmarkLookupIPParallel is the data plane's lookup from every core at
// once, on a table under its read lock and on a frozen one.
func BenchmarkLookupIPParallel(b *testing.B) {
	for _, frozen := range []bool{false, true} {
		b.Run(fmt.Sprintf("frozen=%v", frozen), func(b *testing.B) {
			var tb Table[int]
			for i := range 256 {
				tb.Insert(netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(i), 0}), 24), i+1)
			}
			if frozen {
				tb.Freeze()
			}
			ip := []byte{198, 18, 77, 9}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if v, _ := tb.LookupIP(ip); v != 78 {
						b.Fatal("wrong lookup")
					}
				}
			})
		})
	}
}
