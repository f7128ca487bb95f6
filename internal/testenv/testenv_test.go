package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMissingFailsUnderCI runs a child test that reports a missing
// prerequisite, once with CI=true (it must fail) and once without (it must skip).
func TestMissingFailsUnderCI(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		Missing(t, "a prerequisite the parent made up")
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, ci := range []string{"true", ""} {
		cmd := exec.Command(exe, "-test.run", "^TestMissingFailsUnderCI$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		if ci == "true" {
			if err == nil || !strings.Contains(string(out), "--- FAIL") {
				t.Errorf("CI=true: want a failure, got err=%v\n%s", err, out)
			}
		} else if err != nil || !strings.Contains(string(out), "--- SKIP") {
			t.Errorf("CI unset: want a skip, got err=%v\n%s", err, out)
		}
	}
}
