package kerneltest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// highVector matches an operand only the EVEX encoding can name: X16-X31,
// Y16-Y31, or any ZMM register.
var highVector = regexp.MustCompile(`\b[XY](1[6-9]|2[0-9]|3[01])\b|\bZ[0-9]+\b`)

// VEXOnly scans generated Go assembly (asm) for the instruction mnemonic
// in the functions whose TEXT line evexOK rejects, and returns an error for
// each use of a register beyond the VEX encoding, and the number of uses
// checked. It guards instructions such as AESENCLAST that a tier must run
// in VEX form (no VAES): given a high register the Go assembler emits the
// EVEX form silently, which faults on CPUs without the extension but runs
// on a test machine that has it, so no run of the kernel catches it.
func VEXOnly(asm io.Reader, mnemonic string, evexOK func(text string) bool) (checked int, errs []error) {
	var fn string
	sc := bufio.NewScanner(asm)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if strings.HasPrefix(s, "TEXT ") {
			fn = s
		}
		f := strings.Fields(s)
		if len(f) == 0 || f[0] != mnemonic || evexOK(fn) {
			continue
		}
		checked++
		if highVector.MatchString(s) {
			errs = append(errs, fmt.Errorf("line %d (%s): %q needs the EVEX encoding", line, fn, strings.TrimSpace(s)))
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	return checked, errs
}

// RequireVEXOnly runs VEXOnly on the assembly file path and fails t for
// every register beyond VEX, and when no use of mnemonic was found (the
// test reads the wrong file).
func RequireVEXOnly(t testing.TB, path, mnemonic string, evexOK func(text string) bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, errs := VEXOnly(f, mnemonic, evexOK)
	for _, err := range errs {
		t.Error(err)
	}
	if n == 0 {
		t.Fatalf("no %s found in %s", mnemonic, path)
	}
}
