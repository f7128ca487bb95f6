package cpu

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// implies fails the test when a is set but b is not.
func implies(t *testing.T, f Features, name string, a, b bool) {
	t.Helper()
	if a && !b {
		t.Errorf("%s violated in %+v", name, f)
	}
}

func checkConsistent(t *testing.T, f Features) {
	t.Helper()
	implies(t, f, "GFNI => AVX2", f.GFNI, f.AVX2)
	implies(t, f, "VAES => AVX2 && AESNI", f.VAES, f.AVX2 && f.AESNI)
	implies(t, f, "VPCLMULQDQ => AVX2 && AESNI", f.VPCLMULQDQ, f.AVX2 && f.AESNI)
	implies(t, f, "AVX512 => AVX2", f.AVX512, f.AVX2)
	implies(t, f, "AVX512GFNI => AVX512 && GFNI", f.AVX512GFNI, f.AVX512 && f.GFNI)
	implies(t, f, "AVX512VAES => AVX512 && VAES && VPCLMULQDQ", f.AVX512VAES, f.AVX512 && f.VAES && f.VPCLMULQDQ)
	implies(t, f, "VBMI2 => AVX512", f.VBMI2, f.AVX512)
	implies(t, f, "VBMI => AVX512", f.VBMI, f.AVX512)
}

func TestFeaturesConsistent(t *testing.T) {
	t.Logf("X86 = %+v", X86)
	checkConsistent(t, X86)
}

func allSys() sysFeatures {
	return sysFeatures{
		avx: true, avx2: true, bmi2: true,
		aes: true, pclmulqdq: true, ssse3: true, sse41: true,
		avx512f: true, avx512bw: true, avx512vl: true, avx512dq: true,
		avx512gfni: true, avx512vaes: true, avx512vpclmq: true, avx512vbmi2: true,
	}
}

func TestCombine(t *testing.T) {
	allVEX := vexFeatures{gfni: true, vaes: true, vpclmulqdq: true}
	all := Features{AVX2: true, AESNI: true, GFNI: true, VAES: true, VPCLMULQDQ: true,
		AVX512: true, AVX512GFNI: true, AVX512VAES: true, VBMI2: true}
	noAVX512 := allSys()
	noAVX512.avx512f = false
	noBMI2 := allSys()
	noBMI2.bmi2 = false
	noAES := allSys()
	noAES.aes = false
	tests := []struct {
		name string
		sys  sysFeatures
		vex  vexFeatures
		off  map[string]bool
		want Features
	}{
		{"all", allSys(), allVEX, nil, all},
		{"gfni off", allSys(), allVEX, map[string]bool{"gfni": true},
			Features{AVX2: true, AESNI: true, VAES: true, VPCLMULQDQ: true, AVX512: true, AVX512VAES: true, VBMI2: true}},
		{"vpclmulqdq off", allSys(), allVEX, map[string]bool{"vpclmulqdq": true},
			Features{AVX2: true, AESNI: true, GFNI: true, VAES: true, AVX512: true, AVX512GFNI: true, VBMI2: true}},
		{"AVX2 + VEX GFNI, no AVX-512 (Alder Lake)", noAVX512, allVEX, nil,
			Features{AVX2: true, AESNI: true, GFNI: true, VAES: true, VPCLMULQDQ: true}},
		{"no BMI2 drops every vector tier", noBMI2, allVEX, nil, Features{AESNI: true}},
		{"no AES-NI keeps GFNI tiers", noAES, allVEX, nil,
			Features{AVX2: true, GFNI: true, AVX512: true, AVX512GFNI: true, VBMI2: true}},
		{"probe found nothing", allSys(), vexFeatures{}, nil,
			Features{AVX2: true, AESNI: true, AVX512: true, VBMI2: true}},
	}
	for _, tt := range tests {
		got := combine(tt.sys, tt.vex, tt.off)
		if got != tt.want {
			t.Errorf("%s: combine = %+v, want %+v", tt.name, got, tt.want)
		}
		checkConsistent(t, got)
	}
}

func TestGODEBUGParse(t *testing.T) {
	names := []string{"gfni", "vaes", "vpclmulqdq"}
	tests := []struct {
		env  string
		want map[string]bool
	}{
		{"", map[string]bool{}},
		{"cpu.gfni=off", map[string]bool{"gfni": true}},
		{"cpu.gfni=off,cpu.vaes=off,cpu.vpclmulqdq=off", map[string]bool{"gfni": true, "vaes": true, "vpclmulqdq": true}},
		{"cpu.all=off", map[string]bool{"gfni": true, "vaes": true, "vpclmulqdq": true}},
		{"cpu.all=off,cpu.vaes=on", map[string]bool{"gfni": true, "vaes": false, "vpclmulqdq": true}},
		{"gctrace=1,cpu.avx2=off,cpu.gfni=maybe,cpu.vaes,cpu.vaes=off", map[string]bool{"vaes": true}},
		{"xcpu.gfni=off,cpu.gfnii=off", map[string]bool{}},
	}
	for _, tt := range tests {
		got := godebugOff(tt.env, names)
		for _, n := range names {
			if got[n] != tt.want[n] {
				t.Errorf("godebugOff(%q)[%s] = %v, want %v", tt.env, n, got[n], tt.want[n])
			}
		}
	}
}

const helperEnv = "GMTUN_CPU_TEST_HELPER"

// TestHelperPrintFeatures is run as a subprocess by TestGODEBUGSubprocess;
// it prints X86 as JSON and does nothing in a normal run.
func TestHelperPrintFeatures(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper for TestGODEBUGSubprocess")
	}
	b, err := json.Marshal(X86)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.Write(append(append([]byte("FEATURES "), b...), '\n'))
}

func featuresWithGODEBUG(t *testing.T, godebug string) Features {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPrintFeatures$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "GODEBUG="+godebug)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("subprocess: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "FEATURES "); ok {
			var f Features
			if err := json.Unmarshal([]byte(rest), &f); err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("subprocess printed no features:\n%s", out)
	return Features{}
}

func TestGODEBUGSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	base := featuresWithGODEBUG(t, "")
	// Under a forced-tier run (GODEBUG set for this process) X86 is the
	// reduced set, while the subprocess runs with GODEBUG cleared.
	if os.Getenv("GODEBUG") == "" && base != X86 {
		t.Fatalf("subprocess without GODEBUG = %+v, want %+v", base, X86)
	}
	if !base.GFNI {
		t.Logf("this CPU has no GFNI: only checking that the switch keeps it off")
	}
	f := featuresWithGODEBUG(t, "cpu.gfni=off")
	if f.GFNI || f.AVX512GFNI {
		t.Errorf("cpu.gfni=off: GFNI=%v AVX512GFNI=%v, want both false", f.GFNI, f.AVX512GFNI)
	}
	want := base
	want.GFNI, want.AVX512GFNI = false, false
	if f != want {
		t.Errorf("cpu.gfni=off changed other flags: %+v, want %+v", f, want)
	}
	f = featuresWithGODEBUG(t, "cpu.vaes=off,cpu.vpclmulqdq=off")
	if f.VAES || f.VPCLMULQDQ || f.AVX512VAES || f.GFNI != base.GFNI {
		t.Errorf("cpu.vaes=off,cpu.vpclmulqdq=off: %+v", f)
	}
	f = featuresWithGODEBUG(t, "cpu.avx512f=off")
	if f.AVX512 || f.AVX512GFNI || f.AVX512VAES || f.VBMI2 || f.GFNI != base.GFNI || f.AVX2 != base.AVX2 {
		t.Errorf("cpu.avx512f=off: %+v (VEX GFNI must survive)", f)
	}
	if f := featuresWithGODEBUG(t, "cpu.all=off"); f != (Features{}) {
		t.Errorf("cpu.all=off: %+v, want no features", f)
	}
}
