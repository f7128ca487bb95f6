package main

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/ciphers"
)

// TestLogSuiteTiers checks the start-up lines that name the tier carrying
// each suite: an info line on a kernel tier, a loud warning on the generic
// code. The generic case runs in a child process with every CPU feature
// switched off through GODEBUG (cpu.all=off), as an operator's machine
// without the features would be.
func TestLogSuiteTiers(t *testing.T) {
	var buf bytes.Buffer
	logSuiteTiers(newLogger(&buf, slog.LevelInfo, "text", "gm0", false), ciphers.Suites[:])
	out := buf.String()
	for _, s := range ciphers.Suites {
		tier := s.Tier()
		want := `level=INFO msg="suite ` + s.String() + " runs on the " + tier + ` kernels" iface=gm0`
		if tier == "generic" {
			want = `level=WARN msg="WARNING: suite ` + s.String() + " runs on the portable generic code"
		}
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}

	if os.Getenv("GMTUN_TIERS_CHILD") == "1" {
		// The child: with every CPU feature off, each suite must be on
		// the generic code, and so must have got the warning above.
		for _, s := range ciphers.Suites {
			if tier := s.Tier(); tier != "generic" {
				t.Errorf("%v runs on %q with GODEBUG=cpu.all=off, want generic", s, tier)
			}
		}
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^TestLogSuiteTiers$", "-test.v")
	cmd.Env = append(os.Environ(), "GMTUN_TIERS_CHILD=1", "GODEBUG=cpu.all=off")
	child, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child with GODEBUG=cpu.all=off: %v\n%s", err, child)
	}
}
