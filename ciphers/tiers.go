package ciphers

import "github.com/gmtun/gmtun/ciphers/internal/impl"

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
