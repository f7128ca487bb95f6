// Package kerneltest is what the kernel packages' tests share about tiers
// the CPU lacks: kernels may import nothing of gmtun but kernels/cpu (and
// ciphers/internal/impl/impltest is out of their reach), so this is their
// copy of its rule, defined once.
//
// A test of a tier the CPU cannot run is a visible skip naming the tier,
// or a failure when RequireEnv is "all" (set on the CI machine, which has
// every tier): a green run then means every kernel ran.
package kerneltest

import (
	"fmt"
	"os"
	"testing"
)

// RequireEnv is the environment variable that turns skipped tiers into
// failures; it is the same variable as ciphers/internal/impl/impltest's.
const RequireEnv = "GMTUN_REQUIRE_IMPLS"

// Unsupported skips tb because the CPU lacks what the message names, or
// fails it when RequireEnv=all. Benchmarks skip in either case (they are
// never how CI proves a tier).
func Unsupported(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if _, bench := tb.(*testing.B); !bench && os.Getenv(RequireEnv) == "all" {
		tb.Fatalf("%s, and %s=all", msg, RequireEnv)
	}
	tb.Skip(msg)
}
