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

// TestSuiteTier checks that every suite names the tier its primitive runs,
// so `gmtun up` logs the tier that really carries the traffic.
func TestSuiteTier(t *testing.T) {
	prim := map[SuiteID]string{SM4GCM: sm4ImplPackage, ZUC256: zucImplPackage, ZUC128: zucImplPackage, UBlockGCM: ublockImplPackage}
	selected := map[string]string{}
	for _, tier := range Tiers() {
		selected[tier.Primitive] = tier.Selected
	}
	for _, id := range Suites {
		p, ok := prim[id]
		if !ok {
			t.Fatalf("suite %v has no primitive in this test", id)
		}
		want := selected[p]
		if want == "" {
			want = "generic" // no kernels registered (purego, other architectures)
		}
		if got := id.Tier(); got != want {
			t.Errorf("%v.Tier() = %q, want %q (the %s tier)", id, got, want, p)
		}
	}
	if got := SuiteID(0x7f).Tier(); got != "generic" {
		t.Errorf("unknown suite Tier() = %q, want generic", got)
	}
}
