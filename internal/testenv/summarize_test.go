package testenv

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestSummarizeAwk runs `make unit`'s filter (.ci/summarize.awk) on the
// output of a failing package: CI shows only the tail of a run, so the
// failed test's error must come last, and a daemon's goroutine dump must not
// push it out of view.
func TestSummarizeAwk(t *testing.T) {
	awk, err := exec.LookPath("awk")
	if err != nil {
		Missing(t, "awk: %v", err)
	}
	var in strings.Builder
	in.WriteString("=== RUN   TestOther\n    other_test.go:11: no tool\n--- SKIP: TestOther (0.00s)\n")
	in.WriteString("ok  \texample/pass\t0.1s\n")
	in.WriteString("=== RUN   TestBed\n=== RUN   TestBed/fine\n    bed_test.go:5: FIGURE\tfine\t1\n")
	in.WriteString("=== RUN   TestBed/soak\n    bed_test.go:20: site b dropped 3 as replay during an unimpaired soak\n")
	in.WriteString("    site_test.go:300: log of site b:\n")
	for i := range 100 {
		fmt.Fprintf(&in, "        time=T level=DEBUG msg=\"line %d\"\n", i)
	}
	in.WriteString("        SIGQUIT: quit\n        PC=0x1 m=0 sigcode=0\n")
	for i := range 500 {
		fmt.Fprintf(&in, "        runtime.f%d()\n        \t/usr/local/go/src/runtime/proc.go:%d +0x1\n", i, i)
	}
	in.WriteString("        rip    0x491361\n        gs     0x0\n")
	in.WriteString("--- FAIL: TestBed (9.00s)\n    --- PASS: TestBed/fine (1.00s)\n    --- FAIL: TestBed/soak (8.00s)\nFAIL\nFAIL\texample/bed\t9.1s\nFAIL\n")

	cmd := exec.Command(awk, "-f", "../../.ci/summarize.awk")
	cmd.Stdin = strings.NewReader(in.String())
	outb, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("awk: %v\n%s", err, outb)
	}
	out := string(outb)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 80 {
		t.Errorf("%d lines printed for 1,100 lines of a failing package; want the log shortened and the dump left out:\n%s", len(lines), out)
	}
	for _, want := range []string{
		"ok  \texample/pass\t0.1s",
		"FAIL\texample/bed\t9.1s",
		"[goroutine dump after SIGQUIT: 1004 lines, in bin/unit.log]",
		`msg="line 99"`, // a log's last lines are kept
		"1 tests skipped",
		"  " + "    other_test.go:11: no tool",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "runtime.f") || strings.Contains(out, `msg="line 50"`) {
		t.Errorf("the goroutine dump or the middle of a long log was printed:\n%s", out)
	}
	// The tail: the failed tests, the soak's error with them, the figure of
	// the passing subtest not.
	i := strings.LastIndex(out, "Failed tests")
	if i < 0 {
		t.Fatalf("no failure summary:\n%s", out)
	}
	tail := out[i:]
	for _, want := range []string{"--- FAIL: TestBed\n", "--- FAIL: TestBed/soak\n", "site b dropped 3 as replay"} {
		if !strings.Contains(tail, want) {
			t.Errorf("the failure summary lacks %q:\n%s", want, tail)
		}
	}
	if strings.Contains(tail, "FIGURE") || strings.Contains(tail, "log of site b") {
		t.Errorf("the failure summary has lines of a passing test or a long block:\n%s", tail)
	}
	if !strings.HasSuffix(strings.TrimRight(out, "\n"), "site b dropped 3 as replay during an unimpaired soak") {
		t.Errorf("the error is not the last line:\n%s", tail)
	}
}
