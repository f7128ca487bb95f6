package cpu

import (
	"slices"
	"strings"
	"testing"
)

// TestCaps checks that each mask of Caps switches off what its tier's name
// says, on a CPU with every feature: the mask parsed as kernels/cpu
// (probed features) and x/sys/cpu (avx512f) read it, then combined.
func TestCaps(t *testing.T) {
	want := map[string]func(Features) bool{
		TierAVX512AESNI: func(f Features) bool {
			return f.AVX512 && !f.GFNI && !f.VAES && !f.VPCLMULQDQ && !f.AVX512GFNI && f.AVX2 && f.AESNI
		},
		TierAVX2GFNI: func(f Features) bool { return !f.AVX512 && f.GFNI && f.VAES && f.VPCLMULQDQ },
		TierAVX2VAES: func(f Features) bool { return !f.AVX512 && !f.GFNI && f.VAES && f.VPCLMULQDQ },
		TierAVX2AESNI: func(f Features) bool {
			return !f.AVX512 && !f.GFNI && !f.VAES && !f.VPCLMULQDQ && f.AVX2 && f.AESNI
		},
	}
	caps := Caps()
	if len(caps) != len(want) {
		t.Fatalf("Caps() has %d masks, the test knows %d", len(caps), len(want))
	}
	var seen []string
	for _, c := range caps {
		check, ok := want[c.Tier]
		if !ok || slices.Contains(seen, c.Tier) {
			t.Errorf("Caps: unexpected or repeated tier %q", c.Tier)
			continue
		}
		seen = append(seen, c.Tier)
		for _, field := range strings.Split(c.GODEBUG, ",") {
			if !strings.HasPrefix(field, "cpu.") || !strings.HasSuffix(field, "=off") {
				t.Errorf("%s: mask field %q is not cpu.<name>=off", c.Tier, field)
			}
		}
		off := godebugOff(c.GODEBUG, []string{"avx512f", "gfni", "vaes", "vpclmulqdq"})
		sys := allSys()
		sys.avx512f = !off["avx512f"]
		f := combine(sys, vexFeatures{gfni: true, vaes: true, vpclmulqdq: true}, off)
		if !check(f) {
			t.Errorf("%s: mask %q leaves %+v", c.Tier, c.GODEBUG, f)
		}
	}
	if AllOff != "cpu.all=off" {
		t.Errorf("AllOff = %q", AllOff)
	}
}

// TestTierNames pins the spellings `gmtun show`, the logs, the metrics and
// `gmtun bench` print (docs/OPERATIONS.md shows them): changing one is a
// visible change of output.
func TestTierNames(t *testing.T) {
	for got, want := range map[string]string{
		TierAVX512GFNI: "AVX-512+GFNI", TierAVX512VBMI: "AVX-512+VBMI", TierAVX512: "AVX-512",
		TierAVX2GFNI: "AVX2+GFNI", TierAVX2VAES: "AVX2+VAES", TierAVX2VPCLMULQDQ: "AVX2+VPCLMULQDQ",
		TierAVX2AESNI: "AVX2+AES-NI", TierAVX2: "AVX2", TierPCLMULQDQ: "PCLMULQDQ", TierAVX512AESNI: "AVX-512+AES-NI",
	} {
		if got != want {
			t.Errorf("tier name %q, want %q", got, want)
		}
	}
}
