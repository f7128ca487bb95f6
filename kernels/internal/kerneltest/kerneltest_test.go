package kerneltest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestUnsupportedFailsWhenRequired: in a child process, Unsupported skips
// without RequireEnv and fails with RequireEnv=all.
func TestUnsupportedFailsWhenRequired(t *testing.T) {
	if os.Getenv("KERNELTEST_CHILD") == "1" {
		Unsupported(t, "CPU lacks X")
		return
	}
	for _, c := range []struct {
		env      string
		wantFail bool
	}{{"", false}, {"all", true}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUnsupportedFailsWhenRequired$", "-test.v")
		cmd.Env = append(os.Environ(), "KERNELTEST_CHILD=1", RequireEnv+"="+c.env)
		out, err := cmd.CombinedOutput()
		failed := err != nil
		if failed != c.wantFail || !strings.Contains(string(out), "CPU lacks X") {
			t.Errorf("%s=%q: failed=%v, want %v; output:\n%s", RequireEnv, c.env, failed, c.wantFail, out)
		}
		if !c.wantFail && !strings.Contains(string(out), "SKIP") {
			t.Errorf("%s=%q: no skip reported:\n%s", RequireEnv, c.env, out)
		}
	}
}
