package main

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/bench/cryptobench"
	"github.com/gmtun/gmtun/ciphers"
)

// init turns this test binary into `gmtun` when `gmtun bench` starts it as
// a tier child (the child is os.Executable(), which here is the test
// binary, run with the arguments "bench").
func init() {
	if os.Getenv(cryptobench.ChildEnv) == "" {
		return
	}
	os.Exit(run(&env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, rand: rand.Reader,
		getenv: os.Getenv, isTerminal: isTerminal,
	}, os.Args[1:]))
}

// quickBench is a one-cell grid that finishes in well under a second.
var quickBench = []string{"bench", "--suites", "zuc-128", "--sizes", "64", "--batches", "4", "--time", "1ms", "--count", "1"}

func TestBenchTable(t *testing.T) {
	r := gmtun(append(quickBench, "--tiers", "best,generic")...)
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	out := r.stdout
	tiers := ciphers.Tiers()
	for _, k := range tiers {
		if !strings.Contains(out, k.Primitive+"="+k.Selected) {
			t.Errorf("table does not show tier %s=%s:\n%s", k.Primitive, k.Selected, out)
		}
	}
	if !strings.Contains(out, "generic (cpu.all=off):") {
		t.Errorf("table does not describe the generic tier:\n%s", out)
	}
	var header string
	var rows [][]string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "suite":
			header = line
		case header != "" && len(f) > 0:
			rows = append(rows, f)
		}
	}
	if !strings.Contains(header, "MB/s") || !strings.Contains(header, "ns/pkt") || !strings.Contains(header, "×gmsm") {
		t.Fatalf("no table header in:\n%s", out)
	}
	// Rows: the gmsm anchor, then gmtun in best (and generic unless it
	// selects the same kernels as best, as with -tags purego).
	if len(rows) < 2 || rows[0][1] != "gmsm" || rows[1][1] != "gmtun" || rows[1][2] != "best" {
		t.Fatalf("rows %q", rows)
	}
	best := rows[1]
	if want := strings.Fields(strings.ReplaceAll(kernelsForTest("zuc", tiers), " ", "_")); best[3] != want[0] {
		t.Errorf("best row kernels %q, want %q", best[3], want[0])
	}
	for _, row := range rows {
		n := len(row)
		if row[0] != "zuc-128" || row[n-6] != "64" {
			t.Errorf("row %q: wrong suite or size", row)
		}
		for _, col := range []string{row[n-4], row[n-3]} {
			if !positive(col) {
				t.Errorf("row %q: %q is not a positive number", row, col)
			}
		}
		if row[1] == "gmtun" && !positive(strings.TrimSuffix(row[n-2], "×")) {
			t.Errorf("row %q: no ratio to gmsm", row)
		}
	}
	if !strings.Contains(r.stderr, "gmtun bench: [1/") || !strings.Contains(r.stderr, "gmsm zuc-128 seal 64 B × 1") {
		t.Errorf("progress on stderr: %q", r.stderr)
	}
	if strings.Contains(r.stderr, "\r") {
		t.Errorf("progress on a non-terminal uses \\r: %q", r.stderr)
	}
}

// kernelsForTest is the selected implementation of primitive in ts, or
// "generic".
func kernelsForTest(primitive string, ts []ciphers.Tier) string {
	for _, k := range ts {
		if k.Primitive == primitive {
			return k.Selected
		}
	}
	return "generic"
}

func positive(s string) bool {
	var x float64
	err := json.Unmarshal([]byte(s), &x)
	return err == nil && x > 0
}

func TestBenchJSON(t *testing.T) {
	r := invocation{terminal: true}.run(append(quickBench, "--tiers", "best", "--json", "--open")...)
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var rep cryptobench.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if rep.Schema != cryptobench.ReportSchema || len(rep.Tiers) != 1 || !reflect.DeepEqual(rep.Tiers[0].Kernels, ciphers.Tiers()) {
		t.Errorf("report header %+v", rep)
	}
	ops := map[string]int{}
	for _, res := range rep.Results {
		ops[res.Impl+"/"+res.Op]++
		if res.MBPerSec <= 0 || res.NsPerPacket <= 0 || len(res.Samples) != 1 {
			t.Errorf("result %+v", res)
		}
		if res.Impl == cryptobench.ImplGmtun && (res.VsGMSM <= 0 || res.AllocsPerBatch != 0) {
			t.Errorf("gmtun result %+v: want a gmsm ratio and no allocations", res)
		}
	}
	if want := map[string]int{"gmsm/seal": 1, "gmsm/open": 1, "gmtun/seal": 1, "gmtun/open": 1}; !reflect.DeepEqual(ops, want) {
		t.Errorf("results %v, want %v", ops, want)
	}
	// On a terminal the progress line is redrawn in place and erased.
	if !strings.HasPrefix(r.stderr, "\rgmtun bench: [1/4]") || !strings.HasSuffix(r.stderr, "\r\x1b[K") || strings.Contains(r.stderr, "\n") {
		t.Errorf("terminal progress %q", r.stderr)
	}
}

func TestBenchMarkdownQuiet(t *testing.T) {
	r := gmtun(append(quickBench, "--tiers", "best", "--no-anchors", "--markdown", "--quiet")...)
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "| suite ") || !strings.Contains(r.stdout, "| zuc-128 | gmtun") || strings.Contains(r.stdout, "| gmsm ") {
		t.Errorf("markdown table:\n%s", r.stdout)
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"extra"}, `bench: unexpected argument "extra"; run 'gmtun bench --help'`},
		{[]string{"--suites", "aes"}, `bench: --suites: unknown suite "aes" (known: sm4-gcm, zuc-256, zuc-128, ublock-gcm)`},
		{[]string{"--suites", "zuc-128,zuc-128"}, `bench: --suites: "zuc-128" is listed twice`},
		{[]string{"--sizes", "64,x"}, `bench: --sizes: "x" is not a whole number`},
		{[]string{"--sizes", "0"}, `bench: --sizes: 0 is outside 1..65535`},
		{[]string{"--sizes", "64,,1420"}, `bench: --sizes: empty item in "64,,1420"`},
		{[]string{"--batches", "129"}, `bench: --batches: 129 is outside 1..128`},
		{[]string{"--tiers", "sse2"}, `bench: --tiers: unknown tier "sse2" (known: best, avx-512+aes-ni, avx2+gfni, avx2+vaes, avx2+aes-ni, generic)`},
		{[]string{"--time", "0s"}, `bench: --time must be positive, got 0s`},
		{[]string{"--count", "0"}, `bench: --count must be at least 1, got 0`},
		{[]string{"--json", "--markdown"}, `bench: --json and --markdown exclude each other`},
		{[]string{"--time", "soon"}, `bench: invalid value "soon" for flag -time: parse error; run 'gmtun bench --help'`},
	} {
		wantFailure(t, gmtun(append([]string{"bench"}, tc.args...)...), exitUsage, tc.msg)
	}
}

func TestBenchHelp(t *testing.T) {
	r := gmtun("bench", "--help")
	if r.code != exitOK {
		t.Fatalf("exit %d", r.code)
	}
	for _, want := range []string{"Usage: gmtun bench", "-suites LIST", "-tiers LIST", "-time duration", "cpu.avx512f=off", "-json"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, cryptobench.ChildEnv) {
		t.Error("help mentions the internal child variable")
	}
	if !strings.Contains(gmtun("help").stdout, "bench") {
		t.Error("gmtun help does not list bench")
	}
}
