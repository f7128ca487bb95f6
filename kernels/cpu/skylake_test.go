package cpu

import (
	"os"
	"strings"
	"testing"
)

// TestSkylakeSP checks that the SkylakeSP mask, on a CPU with every
// feature, leaves AVX-512 and AES-NI and switches off every feature
// Skylake-SP lacks.
func TestSkylakeSP(t *testing.T) {
	off := godebugOff(SkylakeSP, []string{"gfni", "vaes", "vpclmulqdq", "avx512vbmi2", "avx512vbmi"})
	sys := allSys()
	sys.avx512vbmi2 = !off["avx512vbmi2"]
	sys.avx512vbmi = !off["avx512vbmi"]
	f := combine(sys, vexFeatures{gfni: true, vaes: true, vpclmulqdq: true}, off)
	if !f.AVX512 || !f.AESNI || !f.AVX2 {
		t.Errorf("SkylakeSP switched off AVX-512, AVX2 or AES-NI: %+v", f)
	}
	if f.GFNI || f.VAES || f.VPCLMULQDQ || f.AVX512GFNI || f.AVX512VAES || f.VBMI2 || f.VBMI {
		t.Errorf("SkylakeSP left a feature Skylake-SP lacks: %+v", f)
	}
}

// TestSkylakeSPMaskInMakefile checks that the forced-tier run of the
// Makefile (SKYLAKESP) uses the same mask as SkylakeSP.
func TestSkylakeSPMaskInMakefile(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatalf("reading the repository's Makefile: %v", err)
	}
	want := "SKYLAKESP := " + SkylakeSP + "\n"
	if !strings.Contains(string(mk), want) {
		t.Errorf("Makefile lacks the line %q", want)
	}
}
