package ciphers

import (
	"slices"
	"testing"
)

func TestTiers(t *testing.T) {
	tiers := Tiers()
	for i, tier := range tiers {
		if i > 0 && tiers[i-1].Primitive >= tier.Primitive {
			t.Errorf("Tiers not sorted by primitive: %q before %q", tiers[i-1].Primitive, tier.Primitive)
		}
		if n := len(tier.Available); n == 0 || tier.Available[n-1] != "generic" {
			t.Errorf("%s: Available = %v, want a list ending with generic", tier.Primitive, tier.Available)
		}
		if !slices.Contains(tier.Available, tier.Selected) {
			t.Errorf("%s: Selected %q is not among Available %v", tier.Primitive, tier.Selected, tier.Available)
		}
		if tier.Selected != tier.Available[0] {
			t.Errorf("%s: Selected %q, but the fastest available is %q", tier.Primitive, tier.Selected, tier.Available[0])
		}
	}
}
