//go:build !purego

package cpu

import (
	"os"
	"strings"
	"testing"
)

// TestFeaturesMatchCPUInfo checks the detection against the kernel's own
// view of the CPU, /proc/cpuinfo's flags (CPUID as the kernel read it,
// with the OS support it enabled): each tier flag must be what the flags
// imply through the same combine rule. This is what lets the tier tests
// skip a tier the CPU lacks even under GMTUN_REQUIRE_IMPLS=all on a CPU
// that is not Complete (kernels/internal/kerneltest): the lack is checked
// here, independently of CPUID decoding.
func TestFeaturesMatchCPUInfo(t *testing.T) {
	if strings.Contains(os.Getenv("GODEBUG"), "cpu.") {
		t.Skip("GODEBUG switches CPU features off; the detection differs from /proc/cpuinfo on purpose")
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and /proc/cpuinfo unreadable: %v", err)
		}
		t.Skipf("/proc/cpuinfo: %v", err)
	}
	var flags map[string]bool
	for _, line := range strings.Split(string(b), "\n") {
		if name, rest, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "flags" {
			flags = map[string]bool{}
			for _, f := range strings.Fields(rest) {
				flags[f] = true
			}
			break
		}
	}
	if flags == nil {
		t.Fatal("/proc/cpuinfo has no flags line")
	}
	sys := sysFeatures{
		avx: flags["avx"], avx2: flags["avx2"], bmi2: flags["bmi2"],
		aes: flags["aes"], pclmulqdq: flags["pclmulqdq"], ssse3: flags["ssse3"], sse41: flags["sse4_1"],
		avx512f: flags["avx512f"], avx512bw: flags["avx512bw"], avx512vl: flags["avx512vl"], avx512dq: flags["avx512dq"],
		avx512gfni: flags["gfni"] && flags["avx512f"], avx512vaes: flags["vaes"] && flags["avx512f"],
		avx512vpclmq: flags["vpclmulqdq"] && flags["avx512f"],
		avx512vbmi2:  flags["avx512_vbmi2"], avx512vbmi: flags["avx512vbmi"],
	}
	vex := vexFeatures{gfni: flags["gfni"], vaes: flags["vaes"], vpclmulqdq: flags["vpclmulqdq"]}
	want := combine(sys, vex, nil)
	t.Logf("detected %+v", X86)
	if X86 != want {
		t.Errorf("detection disagrees with /proc/cpuinfo:\n detected %+v\n cpuinfo  %+v", X86, want)
	}
}
