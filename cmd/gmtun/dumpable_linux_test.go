package main

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDisableCoreDumps checks that the start-up hardening leaves the
// process non-dumpable (no core dump, no same-user ptrace).
func TestDisableCoreDumps(t *testing.T) {
	before, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, uintptr(before), 0, 0, 0) })
	if err := disableCoreDumps(); err != nil {
		t.Fatal(err)
	}
	if v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || v != 0 {
		t.Fatalf("PR_GET_DUMPABLE = %d, %v after disableCoreDumps; want 0", v, err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)[strings.Index(string(src), "func main() {"):]
	if i, j := strings.Index(body, "disableCoreDumps()"), strings.Index(body, "run(e,"); i < 0 || i > j {
		t.Error("main does not call disableCoreDumps before running a command")
	}
}
