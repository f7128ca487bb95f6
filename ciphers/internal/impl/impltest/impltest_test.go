package impltest

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
)

// A fake package with one supported and one unsupported implementation.
var fakeFast, fakeSlow = false, true

const fakePkg = "impltestfake"

func init() {
	impl.Register(fakePkg, "Fast", &fakeFast)
	impl.Register(fakePkg, "Slow", &fakeSlow)
}

func TestRunsEachSupported(t *testing.T) {
	if required() {
		t.Skip("the fake package has an unsupported implementation by design")
	}
	var ran []string
	TestAllImplementations(t, fakePkg, func(t *testing.T) {
		ran = append(ran, impl.Selected(fakePkg))
		if impl.Selected(fakePkg) == "Slow" && (!fakeSlow || fakeFast) {
			t.Errorf("flags during Slow: fast=%v slow=%v", fakeFast, fakeSlow)
		}
		if impl.Selected(fakePkg) == impl.Generic && (fakeSlow || fakeFast) {
			t.Errorf("flags during generic: fast=%v slow=%v", fakeFast, fakeSlow)
		}
	})
	if !slices.Equal(ran, []string{"Slow", impl.Generic}) {
		t.Fatalf("ran %v, want [Slow generic]", ran)
	}
	if fakeFast || !fakeSlow {
		t.Fatal("flags not restored")
	}
}

// TestRequireAll checks in a subprocess that an unsupported implementation
// fails instead of skipping when GMTUN_REQUIRE_IMPLS=every.
func TestRequireAll(t *testing.T) {
	if os.Getenv("IMPLTEST_HELPER") == "1" {
		TestAllImplementations(t, fakePkg, func(t *testing.T) {})
		return
	}
	if testing.Short() {
		t.Skip("spawns a subprocess")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRequireAll$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "IMPLTEST_HELPER=1", RequireEnv+"=every")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("subprocess passed with %s=every:\n%s", RequireEnv, out)
	}
	if !strings.Contains(string(out), `"Fast" not supported`) {
		t.Fatalf("failure does not name the implementation:\n%s", out)
	}
	cmd = exec.Command(os.Args[0], "-test.run=^TestRequireAll$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "IMPLTEST_HELPER=1", RequireEnv+"=")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "SKIP: TestRequireAll/Fast") {
		t.Fatalf("without %s the unsupported implementation should skip (err %v):\n%s", RequireEnv, err, out)
	}
}
