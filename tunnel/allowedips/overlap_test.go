package allowedips

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

func TestFirstOverlap(t *testing.T) {
	cases := []struct {
		in   []string
		a, b string // expected pair, "" for none
	}{
		{nil, "", ""},
		{[]string{"10.0.0.0/8"}, "", ""},
		{[]string{"10.0.0.0/8", "11.0.0.0/8", "fd00::/8", "::ffff:10.0.0.0/104"}, "", ""},
		{[]string{"10.1.0.0/16", "10.0.0.0/8"}, "10.0.0.0/8", "10.1.0.0/16"},
		{[]string{"10.0.0.0/24", "10.0.0.0/24"}, "10.0.0.0/24", "10.0.0.0/24"},
		{[]string{"0.0.0.0/0", "198.18.0.1/32"}, "0.0.0.0/0", "198.18.0.1/32"},
		{[]string{"fd00::/8", "fe80::/10", "fd12::/16"}, "fd00::/8", "fd12::/16"},
		// A nested pair hidden behind a disjoint one in input order.
		{[]string{"10.2.0.0/16", "10.1.0.0/16", "10.0.0.0/15", "10.3.0.0/16"}, "10.0.0.0/15", "10.1.0.0/16"},
		{[]string{"198.18.0.0/24", "198.18.1.0/24", "198.18.2.0/23"}, "", ""},
	}
	for _, c := range cases {
		var ps []netip.Prefix
		for _, s := range c.in {
			ps = append(ps, mp(s))
		}
		a, b, ok := FirstOverlap(ps)
		if c.a == "" {
			if ok {
				t.Errorf("%v: unexpected overlap %v %v", c.in, a, b)
			}
			continue
		}
		if !ok || a != mp(c.a) || b != mp(c.b) {
			t.Errorf("%v: got %v %v %v, want %s %s", c.in, a, b, ok, c.a, c.b)
		}
	}
}

// TestFirstOverlapRandom compares with the quadratic definition.
func TestFirstOverlapRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for r := 0; r < 3000; r++ {
		n := rng.IntN(12)
		ps := make([]netip.Prefix, n)
		for i := range ps {
			ps[i] = randPrefix(rng, rng.IntN(2) == 0)
			if rng.IntN(3) > 0 && ps[i].Bits() < 8 { // keep overlaps from being near-certain
				ps[i] = netip.PrefixFrom(ps[i].Addr(), 8+rng.IntN(8)).Masked()
			}
		}
		want := false
		for i := range ps {
			for j := i + 1; j < len(ps); j++ {
				if ps[i].Overlaps(ps[j]) {
					want = true
				}
			}
		}
		a, b, ok := FirstOverlap(ps)
		if ok != want {
			t.Fatalf("%v: ok=%v want %v", ps, ok, want)
		}
		if ok && (!a.Overlaps(b) || a.Bits() > b.Bits() || !a.Contains(b.Addr())) {
			t.Fatalf("%v: returned non-overlapping or misordered pair %v %v", ps, a, b)
		}
	}
}
