package ciphers

import (
	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/ciphers/internal/sm4"
	"github.com/gmtun/gmtun/ciphers/internal/ublock"
)

// GenericTier is the name of the portable constant-time Go code in Tier
// and SuiteID.Tier: what every primitive runs without kernels.
const GenericTier = impl.Generic

// Tier reports which implementation a cipher primitive runs on this
// machine, for start-up logs, `gmtun version` and `gmtun show`.
type Tier struct {
	// Primitive names the dispatching package ("sm4", "ghash", "zuc", …).
	Primitive string `json:"primitive"`
	// Selected is the implementation in use, e.g. "AVX-512+GFNI" or
	// "generic".
	Selected string `json:"selected"`
	// Available lists the implementations this CPU can run, fastest
	// first, ending with "generic".
	Available []string `json:"available"`
}

// Tiers returns the implementation selected for every primitive with
// registered SIMD kernels, sorted by primitive name. With the purego
// build tag, or on CPUs without the features, every primitive reports
// "generic".
func Tiers() []Tier {
	var ts []Tier
	for _, pkg := range impl.Packages() {
		t := Tier{Primitive: pkg, Selected: impl.Selected(pkg)}
		for _, name := range impl.List(pkg) {
			if impl.Available(pkg, name) {
				t.Available = append(t.Available, name)
			}
		}
		t.Available = append(t.Available, impl.Generic)
		ts = append(ts, t)
	}
	return ts
}

// Tier returns the implementation that carries the suite's data plane on
// this machine: a kernel tier such as "AVX-512+GFNI", or "generic" for the
// portable constant-time Go code, which is several times slower.
func (id SuiteID) Tier() string {
	switch id {
	case SM4GCM:
		return impl.Selected(sm4ImplPackage)
	case ZUC256, ZUC128:
		return impl.Selected(zucImplPackage)
	case UBlockGCM:
		return impl.Selected(ublockImplPackage)
	}
	return impl.Generic
}

// The impl registry names of the primitives the suites run on.
const (
	sm4ImplPackage    = sm4.ImplPackage
	zucImplPackage    = "zuc" // as ciphers/internal/zuc registers it
	ublockImplPackage = ublock.ImplPackage
)

// TierMask is a GODEBUG mask that caps the kernel tiers a process selects,
// for starting processes that measure or test a narrower CPU than this one
// (`gmtun bench`): with the mask, SM4 runs Tier on a CPU with every
// feature, and each other primitive its fastest tier not switched off.
type TierMask struct {
	Tier    string // the SM4 tier the mask leaves, as Tier.Selected names it
	GODEBUG string // comma-separated "cpu.<feature>=off" fields
}

// TierMasks returns the masks that step an AVX-512 CPU down to each
// narrower SM4 tier, widest first (the names and masks are defined once,
// in kernels/cpu).
func TierMasks() []TierMask {
	var ms []TierMask
	for _, c := range impl.Caps() {
		ms = append(ms, TierMask{Tier: c.Tier, GODEBUG: c.GODEBUG})
	}
	return ms
}

// GenericMask is the GODEBUG mask under which every primitive runs
// GenericTier.
const GenericMask = impl.AllOff
