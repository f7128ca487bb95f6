package kerneltest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/kernels/cpu"
)

// TestUnsupportedFailsWhenRequired: in a child process, Unsupported skips
// without RequireEnv, fails with RequireEnv=every, and with RequireEnv=all
// fails exactly on a CPU with every feature.
func TestUnsupportedFailsWhenRequired(t *testing.T) {
	if os.Getenv("KERNELTEST_CHILD") == "1" {
		Unsupported(t, "CPU lacks X")
		return
	}
	for _, c := range []struct {
		env      string
		wantFail bool
	}{{"", false}, {"every", true}, {"all", cpu.X86.Complete()}} {
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

func TestRequired(t *testing.T) {
	var full, partial cpu.Features
	full = cpu.Features{AVX2: true, AESNI: true, GFNI: true, VAES: true, VPCLMULQDQ: true, AVX512: true,
		AVX512GFNI: true, AVX512VAES: true, VBMI2: true, VBMI: true}
	partial = full
	partial.AVX512, partial.AVX512GFNI, partial.AVX512VAES, partial.VBMI2, partial.VBMI = false, false, false, false, false
	for _, c := range []struct {
		env  string
		f    cpu.Features
		want bool
	}{
		{"", full, false}, {"", partial, false},
		{"all", full, true}, {"all", partial, false},
		{"every", full, true}, {"every", partial, true},
	} {
		if got := required(c.env, c.f); got != c.want {
			t.Errorf("required(%q, complete=%v) = %v, want %v", c.env, c.f.Complete(), got, c.want)
		}
	}
}

// TestVEXOnly checks the scanner on a small listing: a high register in a
// guarded function is reported, the same in an exempt function is not.
func TestVEXOnly(t *testing.T) {
	asm := `TEXT ·fAESNI(SB), $0-8
	VAESENCLAST   k<>+0(SB), X3, X3
	VAESENCLAST   k<>+0(SB), X17, X17
	VPXORD        Z1, Z2, Z3
TEXT ·fVAES(SB), $0-8
	VAESENCLAST   Z1, Z2, Z2
`
	n, errs := VEXOnly(strings.NewReader(asm), "VAESENCLAST", func(text string) bool { return strings.Contains(text, "VAES(SB)") })
	if n != 2 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 3") {
		t.Fatalf("checked %d, errors %v; want 2 checked and one error at line 3", n, errs)
	}
}
