// Package impl is gmtun's registry of the SIMD implementations behind each
// cipher primitive, after the pattern of Go's crypto/internal/impl.
//
// A dispatching package owns one plain bool per implementation (true when
// the CPU can run it, computed once at start-up from kernels/cpu) and
// registers a pointer to it from init, fastest first. Its hot path reads
// those bools in a single if-chain: no function pointers, no map lookups.
// The registry lets tests and diagnostics see and switch them:
//
//   - List and Selected report what exists and what runs (for logging and
//     `gmtun version`);
//   - Select enables exactly one implementation (or none, for "generic"),
//     and Reset restores what the CPU detection chose.
//
// Select and Reset write the dispatch bools without synchronization; they
// are for tests and start-up only and must not run concurrently with any
// use of the package whose implementations they switch.
package impl

import (
	"slices"
	"strings"

	"github.com/gmtun/gmtun/kernels/cpu"
)

// Generic is the name of the portable reference implementation that runs
// when no registered implementation is enabled (kernels/cpu's one spelling
// of the tier). It is never registered.
const Generic = cpu.TierGeneric

// implementation is one registered implementation of a package.
type implementation struct {
	pkg, name string
	available bool  // the CPU can run it (the flag's value at Register)
	enabled   *bool // the dispatch flag of the owning package
}

// registry holds every implementation in registration order. It is
// written only by Register from package init functions.
var registry []implementation

// Register records that package pkg (a short lower-case name such as
// "sm4") has an implementation called name (human readable, e.g.
// "AVX-512+GFNI"), dispatched on *enabled. The value of *enabled at
// registration is taken as whether the CPU supports the implementation.
// Packages register their implementations fastest first, from init. It
// panics on a duplicate or malformed registration.
func Register(pkg, name string, enabled *bool) {
	if pkg == "" || strings.ContainsAny(pkg, "/ ") || name == "" || name == Generic || enabled == nil {
		panic("impl: invalid registration " + pkg + "/" + name)
	}
	for _, i := range registry {
		if i.pkg == pkg && (i.name == name || i.enabled == enabled) {
			panic("impl: duplicate registration " + pkg + "/" + name)
		}
	}
	registry = append(registry, implementation{pkg: pkg, name: name, available: *enabled, enabled: enabled})
}

// List returns the names of the implementations registered for pkg,
// fastest first, whether or not the CPU supports them. Generic is not
// included.
func List(pkg string) []string {
	var names []string
	for _, i := range registry {
		if i.pkg == pkg {
			names = append(names, i.name)
		}
	}
	return names
}

// Packages returns the names of the packages with registered
// implementations, sorted.
func Packages() []string {
	var pkgs []string
	for _, i := range registry {
		if !slices.Contains(pkgs, i.pkg) {
			pkgs = append(pkgs, i.pkg)
		}
	}
	slices.Sort(pkgs)
	return pkgs
}

// Available reports whether the CPU can run implementation name of pkg.
// Generic is always available.
func Available(pkg, name string) bool {
	if name == Generic {
		return true
	}
	for _, i := range registry {
		if i.pkg == pkg && i.name == name {
			return i.available
		}
	}
	return false
}

// Select enables implementation name of pkg and disables every other one
// of pkg, so that the package dispatches to it; name Generic disables
// them all. It returns false, changing nothing, when name is not
// registered for pkg or the CPU cannot run it. Not safe for concurrent
// use with pkg's functions; see the package comment.
func Select(pkg, name string) bool {
	if !Available(pkg, name) {
		return false
	}
	for _, i := range registry {
		if i.pkg == pkg {
			*i.enabled = i.name == name
		}
	}
	return true
}

// Reset restores the dispatch flags of pkg to what CPU detection chose at
// start-up. Not safe for concurrent use with pkg's functions.
func Reset(pkg string) {
	for _, i := range registry {
		if i.pkg == pkg {
			*i.enabled = i.available
		}
	}
}

// Selected returns the name of the implementation pkg dispatches to now:
// the first enabled one in registration order (the dispatch if-chains test
// them in that order), or Generic when none is enabled.
func Selected(pkg string) string {
	for _, i := range registry {
		if i.pkg == pkg && *i.enabled {
			return i.name
		}
	}
	return Generic
}
