// Package kerneltest is what the kernel packages' tests share about tiers
// the CPU lacks: kernels may import nothing of gmtun but kernels/cpu (and
// ciphers/internal/impl/impltest is out of their reach), so this is their
// copy of its rule, defined once.
//
// A test of a tier the CPU cannot run is a visible skip naming the tier,
// or a failure when RequireEnv asks for it (see Required): on CI, where
// RequireEnv=all, a green run then means every kernel the CPU has ran,
// and on a CPU with every feature, every kernel. That the CPU lacks what
// a skipped tier needs is checked independently of the kernels' own
// detection by kernels/cpu's TestFeaturesMatchCPUInfo (/proc/cpuinfo).
package kerneltest

import (
	"fmt"
	"os"
	"testing"

	"github.com/gmtun/gmtun/kernels/cpu"
)

// RequireEnv is the environment variable that turns skipped tiers into
// failures; it is the same variable as ciphers/internal/impl/impltest's.
const RequireEnv = "GMTUN_REQUIRE_IMPLS"

// Required reports whether a tier may not be skipped: RequireEnv=every
// (whatever the CPU), or RequireEnv=all on a CPU with every feature a
// tier uses (cpu.Features.Complete), where a skip can only be a dispatch
// bug.
func Required() bool { return required(os.Getenv(RequireEnv), cpu.X86) }

func required(env string, f cpu.Features) bool {
	return env == "every" || env == "all" && f.Complete()
}

// Unsupported skips tb because the CPU lacks what the message names, or
// fails it when Required. Benchmarks skip in either case (they are never
// how CI proves a tier).
func Unsupported(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if _, bench := tb.(*testing.B); !bench && Required() {
		tb.Fatalf("%s, and %s=%s", msg, RequireEnv, os.Getenv(RequireEnv))
	}
	tb.Skip(msg)
}
