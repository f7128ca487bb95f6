package depcheck

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestMakeTestRunsEveryStep: every prerequisite of `make test` has a
// recipe. GNU make treats a target named in .PHONY but without a rule as
// done, so a deleted recipe (purego and forced-tiers once went missing
// that way) would silently drop a step from CI.
func TestMakeTestRunsEveryStep(t *testing.T) {
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var prereqs []string
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "test:"); ok {
			prereqs = strings.Fields(rest)
		}
	}
	if len(prereqs) < 5 {
		t.Fatalf("make test has %d steps (%v); the Makefile's test target was not found", len(prereqs), prereqs)
	}
	for _, p := range prereqs {
		rule := regexp.MustCompile(`^` + regexp.QuoteMeta(p) + `:([^=]|$)`)
		found := false
		for i, l := range lines {
			if rule.MatchString(l) && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("make test depends on %q, which has no recipe", p)
		}
	}
}
