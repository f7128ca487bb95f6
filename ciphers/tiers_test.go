package ciphers

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
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

// tierMaskChildEnv makes the test binary print SuiteID.Tier of SM4-GCM and
// exit (TestTierMasks runs it under each mask).
const tierMaskChildEnv = "GMTUN_TEST_TIERMASK_CHILD"

// TestTierMasks runs this test binary under each of TierMasks and
// GenericMask and checks that SM4 runs the tier the mask is named after
// when this CPU has it, and never a wider one; under GenericMask every
// primitive runs GenericTier. It checks what `gmtun bench` labels its
// tiers with.
func TestTierMasks(t *testing.T) {
	if os.Getenv(tierMaskChildEnv) != "" {
		return
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	registered := impl.List(sm4ImplPackage)
	var available []string
	for _, tier := range Tiers() {
		if tier.Primitive == sm4ImplPackage {
			available = tier.Available
		}
	}
	for _, m := range TierMasks() {
		if !slices.Contains(registered, m.Tier) && len(registered) > 0 {
			t.Errorf("mask %q is named after %q, which is not an SM4 tier (%v)", m.GODEBUG, m.Tier, registered)
		}
	}
	masks := append(TierMasks(), TierMask{Tier: GenericTier, GODEBUG: GenericMask})
	for _, m := range masks {
		got := tiersUnder(t, m.GODEBUG)
		sm4 := got[sm4ImplPackage]
		switch {
		case m.Tier == GenericTier:
			for prim, sel := range got {
				if sel != GenericTier {
					t.Errorf("GODEBUG=%s: %s runs %q, want %s", m.GODEBUG, prim, sel, GenericTier)
				}
			}
		case len(registered) == 0:
			// no kernels in this build: nothing to cap
		case slices.Contains(available, m.Tier):
			if sm4 != m.Tier {
				t.Errorf("GODEBUG=%s: sm4 runs %q, want %q", m.GODEBUG, sm4, m.Tier)
			}
		default:
			if i := slices.Index(registered, sm4); i >= 0 && i < slices.Index(registered, m.Tier) {
				t.Errorf("GODEBUG=%s: sm4 runs %q, wider than %q", m.GODEBUG, sm4, m.Tier)
			}
		}
		t.Logf("GODEBUG=%s (%s): %v", m.GODEBUG, strings.ToLower(m.Tier), got)
	}
}

// tiersUnder runs TestTierMasksChild in a child with GODEBUG=mask and
// returns the implementation each primitive selected there.
func tiersUnder(t *testing.T, mask string) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTierMasksChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GODEBUG="+mask, tierMaskChildEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child under GODEBUG=%s: %v\n%s", mask, err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if prim, sel, ok := strings.Cut(strings.TrimPrefix(line, "tier "), "="); ok && strings.HasPrefix(line, "tier ") {
			got[prim] = sel
		}
	}
	if len(got) == 0 && len(impl.Packages()) > 0 {
		t.Fatalf("child under GODEBUG=%s reported no tiers:\n%s", mask, out)
	}
	return got
}

// TestTierMasksChild prints the selected implementations when run as
// TestTierMasks' child.
func TestTierMasksChild(t *testing.T) {
	if os.Getenv(tierMaskChildEnv) == "" {
		t.Skip("the child of TestTierMasks")
	}
	for _, tier := range Tiers() {
		fmt.Printf("tier %s=%s\n", tier.Primitive, tier.Selected)
	}
}
