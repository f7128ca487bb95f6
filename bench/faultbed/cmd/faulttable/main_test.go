package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	in := "=== RUN   TestNetnsFault\n    netns_fault_test.go:1: FIGURE\tsoak 1h\tRSS\t14→15 MiB\n" +
		"        --- FAIL: TestNetnsFault/flood/x (1.00s)\n--- PASS: TestNetnsFault/y (2.00s)\n"
	var out bytes.Buffer
	failed, err := table(strings.NewReader(in), &out, "Test CPU")
	if err != nil || !failed {
		t.Fatalf("failed %v, err %v", failed, err)
	}
	for _, want := range []string{"Test CPU", "| soak 1h | RSS | 14→15 MiB |", "- TestNetnsFault/flood/x (1.00s)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "TestNetnsFault/y") {
		t.Errorf("a passing test is listed:\n%s", out.String())
	}
}
