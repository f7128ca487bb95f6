// Package impltest runs a test once per registered implementation of a
// package (see ciphers/internal/impl), after Go's
// cryptotest.TestAllImplementations.
package impltest

import (
	"os"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/kernels/cpu"
)

// RequireEnv is the environment variable that turns skipped
// implementations into failures: RequireEnv=every fails any skip, and
// RequireEnv=all (set on CI) fails a skip on a CPU with every feature a
// tier uses (cpu.Features.Complete), where a skip can only be a dispatch
// bug; on a smaller CPU, a tier it lacks is a visible skip, and that it
// lacks it is checked against /proc/cpuinfo by kernels/cpu's
// TestFeaturesMatchCPUInfo. kernels/internal/kerneltest has the same rule
// for the kernel packages.
const RequireEnv = "GMTUN_REQUIRE_IMPLS"

// required reports whether a skip fails under RequireEnv.
func required() bool {
	env := os.Getenv(RequireEnv)
	return env == "every" || env == "all" && cpu.X86.Complete()
}

// TestAllImplementations runs f as a subtest once for every implementation
// registered for pkg and once more for impl.Generic, with exactly that
// implementation selected, and restores the CPU's choice afterwards. An
// implementation the CPU cannot run is a visible skip naming it, or a
// failure when RequireEnv requires it (see RequireEnv). The subtests must not call t.Parallel:
// the selection is process-wide.
func TestAllImplementations(t *testing.T, pkg string, f func(t *testing.T)) {
	t.Helper()
	names := impl.List(pkg)
	if len(names) == 0 && impl.Selected(pkg) != impl.Generic {
		t.Fatalf("impltest: %s has no registered implementations but does not select generic", pkg)
	}
	t.Cleanup(func() { impl.Reset(pkg) })
	for _, name := range append(names, impl.Generic) {
		t.Run(name, func(t *testing.T) {
			if !impl.Select(pkg, name) {
				if required() {
					t.Fatalf("impltest: %s implementation %q not supported by this CPU and %s=%s", pkg, name, RequireEnv, os.Getenv(RequireEnv))
				}
				t.Skipf("impltest: %s implementation %q not supported by this CPU", pkg, name)
			}
			defer impl.Reset(pkg)
			if got := impl.Selected(pkg); got != name {
				t.Fatalf("impltest: selected %q, registry reports %q", name, got)
			}
			f(t)
		})
	}
}
