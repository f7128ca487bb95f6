package cryptobench

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
)

// TestMain lets the test binary serve as a tier child for TestRun.
func TestMain(m *testing.M) {
	if spec := os.Getenv(ChildEnv); spec != "" {
		if err := ServeChild(spec, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestBatchHeaders(t *testing.T) {
	const n, size = 5, 1420
	b := newBatch(n, size)
	check := func(first uint64) {
		t.Helper()
		for i, p := range b.pkts {
			if len(p) != headerSize+1424 || cap(p)-len(p) < ciphers.MaxTagSize {
				t.Fatalf("packet %d: len %d cap %d, want len %d and room for a 16-byte tag", i, len(p), cap(p), headerSize+1424)
			}
			if p[0] != 0x14 || p[1] != 1 || p[2] != 0 || p[3] != 0 {
				t.Errorf("packet %d: header starts % x", i, p[:4])
			}
			if got := binary.LittleEndian.Uint32(p[4:8]); got != receiverIndex {
				t.Errorf("packet %d: receiver index %#x", i, got)
			}
			if got := binary.LittleEndian.Uint64(p[8:16]); got != first+uint64(i) {
				t.Errorf("packet %d: counter %d, want %d", i, got, first+uint64(i))
			}
		}
	}
	check(0)
	b.pkts[2] = b.pkts[2][:len(b.pkts[2])+4] // as a seal leaves it
	b.stamp()
	check(n)
	if paddedLen(1) != 16 || paddedLen(16) != 16 || paddedLen(1420) != 1424 {
		t.Errorf("paddedLen(1, 16, 1420) = %d, %d, %d", paddedLen(1), paddedLen(16), paddedLen(1420))
	}
}

// TestAnchorsMatchSuites checks that each gmsm anchor computes the same
// packets as the gmtun suite it stands for, so the ratios compare equal
// work, and that each can open what the other sealed.
func TestAnchorsMatchSuites(t *testing.T) {
	for _, id := range ciphers.Suites {
		if !hasGMSMAnchor(id) {
			if _, err := newAnchorCodec(id.String(), ImplGMSM); err == nil {
				t.Errorf("%v: a gmsm anchor for a suite gmsm does not implement", id)
			}
			continue
		}
		for _, size := range []int{1, 64, 1420} {
			t.Run(fmt.Sprintf("%v/%d", id, size), func(t *testing.T) {
				key, err := ciphers.NewKey(id, benchKeys(id))
				if err != nil {
					t.Fatal(err)
				}
				codec, err := newAnchorCodec(id.String(), ImplGMSM)
				if err != nil {
					t.Fatal(err)
				}
				ours, theirs := newBatch(3, size), newBatch(3, size)
				ours.counter, theirs.counter = 1<<32+7, 1<<32+7 // exercise the BEARER bits of zuc-128
				ours.stamp()
				theirs.stamp()
				plain := bytes.Clone(ours.pkts[1])
				if err := key.Seal(ours.pkts); err != nil {
					t.Fatal(err)
				}
				for i, p := range theirs.pkts {
					if theirs.pkts[i], err = codec.seal(p); err != nil {
						t.Fatal(err)
					}
				}
				tag := id.Params().TagSize
				for i := range ours.pkts {
					if len(ours.pkts[i]) != headerSize+paddedLen(size)+tag {
						t.Fatalf("gmtun packet %d has %d bytes", i, len(ours.pkts[i]))
					}
					if !bytes.Equal(ours.pkts[i], theirs.pkts[i]) {
						t.Fatalf("packet %d: gmtun and gmsm differ\ngmtun % x\ngmsm  % x", i, ours.pkts[i], theirs.pkts[i])
					}
				}
				got, ok, err := codec.open(bytes.Clone(ours.pkts[1]))
				if err != nil || !ok || !bytes.Equal(got, plain) {
					t.Fatalf("gmsm open of a gmtun packet: ok %v, err %v, plaintext equal %v", ok, err, bytes.Equal(got, plain))
				}
				forged := bytes.Clone(ours.pkts[1])
				forged[9] ^= 1 // the counter is authenticated
				if _, ok, _ := codec.open(forged); ok {
					t.Fatal("gmsm anchor opened a packet with a modified header")
				}
			})
		}
	}
}

func TestAESGCMAnchorRoundTrip(t *testing.T) {
	codec, err := newAnchorCodec(AESGCM, ImplGo)
	if err != nil {
		t.Fatal(err)
	}
	b := newBatch(1, 100)
	plain := bytes.Clone(b.pkts[0])
	sealed, err := codec.seal(b.pkts[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(sealed) != len(plain)+16 || bytes.Equal(sealed[headerSize:len(plain)], plain[headerSize:]) {
		t.Fatalf("AES-GCM seal: %d bytes, body changed %v", len(sealed), !bytes.Equal(sealed[headerSize:len(plain)], plain[headerSize:]))
	}
	got, ok, err := codec.open(sealed)
	if err != nil || !ok || !bytes.Equal(got, plain) {
		t.Fatalf("AES-GCM open: ok %v err %v equal %v", ok, err, bytes.Equal(got, plain))
	}
	// The harness adds no allocation of its own: Go's GCM allocates
	// nothing, so the anchor step must not either.
	for _, op := range []string{OpSeal, OpOpen} {
		s, err := newAnchorStepper(AESGCM, ImplGo, op, 1420, 1)
		if err != nil {
			t.Fatal(err)
		}
		if allocs := testing.AllocsPerRun(20, func() { s.step() }); allocs != 0 {
			t.Errorf("AES-GCM anchor %s: %v allocations per packet, want 0", op, allocs)
		}
	}
	if _, err := newAnchorCodec("zuc-128", ImplGo); err == nil {
		t.Error("newAnchorCodec accepted a Go zuc-128 anchor")
	}
}

// TestStepZeroAllocs asserts the measured gmtun step (headers, re-slicing
// and one Seal or Open call per batch) allocates nothing.
func TestStepZeroAllocs(t *testing.T) {
	for _, id := range ciphers.Suites {
		for _, op := range []string{OpSeal, OpOpen} {
			for _, n := range []int{1, 16, 64} {
				s, err := newSuiteStepper(id, op, 1420, n)
				if err != nil {
					t.Fatal(err)
				}
				var stepErr error
				allocs := testing.AllocsPerRun(20, func() {
					if err := s.step(); err != nil {
						stepErr = err
					}
				})
				if stepErr != nil {
					t.Fatalf("%v %s batch %d: %v", id, op, n, stepErr)
				}
				if allocs != 0 {
					t.Errorf("%v %s batch %d: %v allocations per batch, want 0", id, op, n, allocs)
				}
			}
		}
	}
}

// TestOpenStepDetectsFailure checks that an open cell notices a packet
// that does not verify instead of timing the rejection path.
func TestOpenStepDetectsFailure(t *testing.T) {
	for _, c := range []Cell{
		{Suite: "zuc-128", Impl: ImplGmtun, Op: OpOpen, Size: 64, Batch: 4},
		{Suite: "sm4-gcm", Impl: ImplGMSM, Op: OpOpen, Size: 64, Batch: 1},
	} {
		s, err := newStepper(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.step(); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		var sealed [][]byte
		switch s := s.(type) {
		case *suiteOpen:
			sealed = s.sealed
		case *codecOpen:
			sealed = s.sealed
		}
		sealed[0][len(sealed[0])-1] ^= 0x80
		if err := s.step(); err != errNotVerified {
			t.Errorf("%v: step with a corrupted tag returned %v, want errNotVerified", c, err)
		}
	}
}

func TestMeasure(t *testing.T) {
	for _, c := range []Cell{
		{Suite: "sm4-gcm", Impl: ImplGmtun, Op: OpSeal, Size: 576, Batch: 8},
		{Suite: "zuc-256", Impl: ImplGMSM, Op: OpOpen, Size: 64, Batch: 1},
	} {
		r, err := Measure(c, 10*time.Millisecond, 3) // long enough that one stray allocation elsewhere stays under the 0.05 bound below
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Samples) != 3 || r.NsPerPacket <= 0 || r.MBPerSec <= 0 || r.ProcessNsPerPacket <= 0 {
			t.Fatalf("%v: %+v", c, r)
		}
		found := false
		for _, s := range r.Samples {
			if s <= 0 {
				t.Errorf("%v: sample %v", c, s)
			}
			found = found || s == r.NsPerPacket
		}
		if !found {
			t.Errorf("%v: median %v is not one of the samples %v", c, r.NsPerPacket, r.Samples)
		}
		if want := float64(c.Size) / r.NsPerPacket * 1e3; r.MBPerSec != want {
			t.Errorf("%v: %v MB/s, want size/ns·1000 = %v", c, r.MBPerSec, want)
		}
		// The count is process-wide (runtime.MemStats), so a stray
		// allocation elsewhere shows as a small fraction; TestStepZeroAllocs
		// is the exact check.
		if c.Impl == ImplGmtun && r.AllocsPerBatch >= 0.05 {
			t.Errorf("%v: %v allocations per batch", c, r.AllocsPerBatch)
		}
	}
	if _, err := Measure(Cell{Suite: "sm4-gcm", Impl: ImplGmtun, Op: OpSeal, Size: 64, Batch: 1}, 0, 1); err == nil {
		t.Error("Measure accepted a zero minimum time")
	}
	if _, err := Measure(Cell{Suite: "sm4-gcm", Impl: ImplGmtun, Op: "mangle", Size: 64, Batch: 1}, time.Millisecond, 1); err == nil {
		t.Error("Measure accepted an unknown operation")
	}
}

func TestMedianIndex(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{5}, 5},
		{[]float64{3, 1, 2}, 2},
		{[]float64{9, 1, 7, 3}, 3},
		{[]float64{4, 4, 1, 9, 8}, 4},
	} {
		if got := tc.xs[medianIndex(tc.xs)]; got != tc.want {
			t.Errorf("median of %v = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

func TestOptions(t *testing.T) {
	o := DefaultOptions()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	// 3 gmsm anchors (none for ublock-gcm) and 1 AES-GCM anchor per size;
	// 4 suites × 4 sizes × 4 batches.
	if got, want := len(o.Cells(true, true)), 4*4+4*4*4; got != want {
		t.Errorf("default cells: %d, want %d", got, want)
	}
	o.Open = true
	if got, want := len(o.Cells(false, true)), 2*4*4; got != want {
		t.Errorf("anchor cells with --open: %d, want %d", got, want)
	}
	o.NoAnchors = true
	if got := len(o.Cells(false, true)); got != 0 {
		t.Errorf("anchor cells with NoAnchors: %d", got)
	}
	for name, mutate := range map[string]func(*Options){
		"no suite":     func(o *Options) { o.Suites = nil },
		"bad suite":    func(o *Options) { o.Suites = []ciphers.SuiteID{9} },
		"no size":      func(o *Options) { o.Sizes = nil },
		"size 0":       func(o *Options) { o.Sizes = []int{0} },
		"size too big": func(o *Options) { o.Sizes = []int{MaxSize + 1} },
		"batch 0":      func(o *Options) { o.Batches = []int{0} },
		"batch 129":    func(o *Options) { o.Batches = []int{ciphers.MaxBatch + 1} },
		"time 0":       func(o *Options) { o.MinTime = 0 },
		"count 0":      func(o *Options) { o.Count = 0 },
	} {
		o := DefaultOptions()
		mutate(&o)
		err := o.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "cryptobench: ") {
			t.Errorf("%s: Validate() = %v", name, err)
		}
	}
}

func TestKernelsFor(t *testing.T) {
	ts := []ciphers.Tier{
		{Primitive: "ghash", Selected: "VPCLMULQDQ"},
		{Primitive: "sm4", Selected: "AVX-512+GFNI"},
		{Primitive: "zuc", Selected: "AVX2+GFNI"},
	}
	if got := kernelsFor("sm4-gcm", ts); got != "VPCLMULQDQ/AVX-512+GFNI" {
		t.Errorf("sm4-gcm: %q", got)
	}
	if got := kernelsFor("zuc-256", ts); got != "AVX2+GFNI" {
		t.Errorf("zuc-256: %q", got)
	}
	if got := kernelsFor("zuc-128", ts[:2]); got != "VPCLMULQDQ/AVX-512+GFNI" {
		t.Errorf("zuc-128 without a zuc primitive: %q", got)
	}
	if got := kernelsFor("sm4-gcm", nil); got != "generic" {
		t.Errorf("no tiers: %q", got)
	}
}

func TestDefaultTiers(t *testing.T) {
	names := map[string]bool{}
	for _, tier := range DefaultTiers() {
		if names[tier.Name] {
			t.Errorf("duplicate tier %q", tier.Name)
		}
		names[tier.Name] = true
		if got, ok := LookupTier(tier.Name); !ok || got != tier {
			t.Errorf("LookupTier(%q) = %v, %v", tier.Name, got, ok)
		}
	}
	if _, ok := LookupTier("sse2"); ok {
		t.Error("LookupTier found an unknown tier")
	}
	if DefaultTiers()[0].GODEBUG != "" {
		t.Error("the first default tier must be unmasked (it hosts the anchors)")
	}
	// The names and masks are `gmtun bench --tiers` arguments, listed in
	// its help and docs/OPERATIONS.md: derived from kernels/cpu's tier
	// names and masks, they must still read the same.
	want := []TierSpec{
		{Name: "best"},
		{Name: "avx-512+aes-ni", GODEBUG: "cpu.gfni=off,cpu.vaes=off,cpu.vpclmulqdq=off,cpu.avx512vbmi2=off,cpu.avx512vbmi=off"},
		{Name: "avx2+gfni", GODEBUG: "cpu.avx512f=off"},
		{Name: "avx2+vaes", GODEBUG: "cpu.avx512f=off,cpu.gfni=off"},
		{Name: "avx2+aes-ni", GODEBUG: "cpu.avx512f=off,cpu.gfni=off,cpu.vaes=off,cpu.vpclmulqdq=off"},
		{Name: "generic", GODEBUG: "cpu.all=off"},
	}
	if got := DefaultTiers(); !slices.Equal(got, want) {
		t.Errorf("DefaultTiers() = %v, want %v", got, want)
	}
}

func selfLauncher(t *testing.T) Launcher {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no executable path:", err)
	}
	return Launcher{Path: exe, Env: os.Environ()}
}

// TestRun runs two tier children of this test binary on a one-cell grid.
func TestRun(t *testing.T) {
	o := Options{Suites: []ciphers.SuiteID{ciphers.SM4GCM}, Sizes: []int{64}, Batches: []int{4}, MinTime: time.Millisecond, Count: 1}
	best, _ := LookupTier("best")
	generic, _ := LookupTier("generic")
	var progress []Progress
	rep, err := Run(o, []TierSpec{best, generic}, selfLauncher(t), func(p Progress) { progress = append(progress, p) })
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tiers) != 2 || rep.Tiers[0].Name != "best" || rep.Tiers[1].Name != "generic" {
		t.Fatalf("tiers %+v", rep.Tiers)
	}
	if !reflect.DeepEqual(rep.Tiers[0].Kernels, ciphers.Tiers()) {
		t.Errorf("best tier reported %+v, this process selects %+v", rep.Tiers[0].Kernels, ciphers.Tiers())
	}
	for _, k := range rep.Tiers[1].Kernels {
		if k.Selected != "generic" {
			t.Errorf("generic tier selected %s for %s", k.Selected, k.Primitive)
		}
	}
	genericMeasured := rep.Tiers[1].SameAs == ""
	if !genericMeasured && rep.Tiers[1].SameAs != "best" {
		t.Errorf("generic tier same as %q", rep.Tiers[1].SameAs)
	}
	want := []string{"gmsm/best", "go/best", "gmtun/best"}
	if genericMeasured {
		want = append(want, "gmtun/generic")
	}
	var got []string
	for _, r := range rep.Results {
		got = append(got, r.Impl+"/"+r.Tier)
		if r.MBPerSec <= 0 || r.NsPerPacket <= 0 || r.Size != 64 || r.Kernels == "" {
			t.Errorf("result %+v", r)
		}
		if r.Impl == ImplGmtun && (r.VsGMSM <= 0 || r.VsAESGCM <= 0 || r.Batch != 4) {
			t.Errorf("gmtun result without ratios: %+v", r)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
	if len(progress) != len(want) || progress[0].Done != 0 || progress[len(progress)-1].Done != len(want)-1 || progress[0].Total != len(want) {
		t.Errorf("progress %+v", progress)
	}
	for _, r := range rep.Results {
		if r.Impl == ImplGmtun && r.Tier == "best" {
			if want := kernelsFor("sm4-gcm", ciphers.Tiers()); r.Kernels != want {
				t.Errorf("best kernels %q, want %q", r.Kernels, want)
			}
		}
	}
}

// TestRunAnchorsOwnChild checks that anchors run unmasked even when only
// a masked tier is selected.
func TestRunAnchorsOwnChild(t *testing.T) {
	o := Options{Suites: []ciphers.SuiteID{ciphers.ZUC128}, Sizes: []int{64}, Batches: []int{1}, MinTime: time.Millisecond, Count: 1}
	generic, _ := LookupTier("generic")
	rep, err := Run(o, []TierSpec{generic}, selfLauncher(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tiers) != 2 || rep.Tiers[1].Name != "anchors" || rep.Tiers[1].GODEBUG != "" {
		t.Fatalf("tiers %+v", rep.Tiers)
	}
	if len(rep.Results) != 2 || rep.Results[0].Impl != ImplGMSM || rep.Results[0].Tier != "anchors" ||
		rep.Results[1].Tier != "generic" || rep.Results[1].VsGMSM <= 0 {
		t.Fatalf("results %+v", rep.Results)
	}
}

func TestRunChildFailure(t *testing.T) {
	o := DefaultOptions()
	best, _ := LookupTier("best")
	_, err := Run(o, []TierSpec{best}, Launcher{Path: "/nonexistent/gmtun"}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "cryptobench: tier best: ") {
		t.Errorf("Run with a missing binary: %v", err)
	}
	l := selfLauncher(t)
	l.Env = append(l.Env, "GODEBUG=panicnil=1") // the child still works: a base GODEBUG is kept
	cs := &childSpec{Tier: TierSpec{Name: "x", GODEBUG: "cpu.avx2=off"}, Options: o}
	cmd, err := l.command(cs)
	if err != nil {
		t.Fatal(err)
	}
	var gotDebug string
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			gotDebug = v
		}
	}
	if gotDebug != "panicnil=1,cpu.avx2=off" {
		t.Errorf("child GODEBUG %q", gotDebug)
	}
	bad := o
	bad.Count = 0
	var out bytes.Buffer
	spec, _ := json.Marshal(childSpec{Tier: best, Options: bad})
	if err := ServeChild(string(spec), &out); err == nil || !strings.Contains(out.String(), `"error":"cryptobench: run count`) {
		t.Errorf("ServeChild with count 0: %v, output %q", err, out.String())
	}
	if err := ServeChild("{", &out); err == nil {
		t.Error("ServeChild accepted malformed JSON")
	}
}

func TestReportOutput(t *testing.T) {
	rep := &Report{
		Schema: ReportSchema, GoVersion: "go1.x", GOOS: "linux", GOARCH: "amd64", CPU: "Test CPU", Clock: clockName,
		GMSM: "v0", MinTimeNs: int64(time.Millisecond), Count: 1,
		Tiers: []TierInfo{
			{TierSpec: TierSpec{Name: "best"}, Kernels: []ciphers.Tier{{Primitive: "sm4", Selected: "AVX-512+GFNI"}}},
			{TierSpec: TierSpec{Name: "generic", GODEBUG: "cpu.all=off"}, SameAs: "best"},
		},
		Results: []Result{
			{Cell: Cell{Suite: "sm4-gcm", Impl: ImplGmtun, Op: OpSeal, Size: 1420, Batch: 64}, Tier: "best", Kernels: "AVX-512+GFNI",
				MBPerSec: 3000, NsPerPacket: 473.3, VsGMSM: 10.5, VsAESGCM: 0.8},
			{Cell: Cell{Suite: "sm4-gcm", Impl: ImplGMSM, Op: OpSeal, Size: 1420, Batch: 1}, Tier: "best", Kernels: "gmsm v0",
				MBPerSec: 285.7, NsPerPacket: 4970},
		},
	}
	var text bytes.Buffer
	if err := rep.WriteTable(&text, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(text.String(), "\n"), "\n")
	header := lines[len(lines)-3]
	if !strings.HasPrefix(header, "suite") || !strings.Contains(header, "MB/s") || !strings.Contains(header, "×AES-GCM") {
		t.Fatalf("header %q in\n%s", header, text.String())
	}
	row := lines[len(lines)-2]
	for _, want := range []string{"sm4-gcm", "gmtun", "best", "1420", "64", "3000.0", "473.3", "10.50×", "0.80×"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	// Right-aligned numeric columns end at the same rune position.
	if a, b := len([]rune(lines[len(lines)-2])), len([]rune(lines[len(lines)-1])); a != b {
		t.Errorf("rows of different width %d and %d:\n%s", a, b, text.String())
	}
	if !strings.Contains(text.String(), "generic (cpu.all=off): no SIMD primitives registered; same kernels as best") {
		t.Errorf("tier lines missing:\n%s", text.String())
	}
	var md bytes.Buffer
	rep.WriteTable(&md, true)
	if !strings.Contains(md.String(), "| suite ") || !strings.Contains(md.String(), "-: |") {
		t.Errorf("markdown table:\n%s", md.String())
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	r0 := back["results"].([]any)[0].(map[string]any)
	for _, k := range []string{"suite", "impl", "tier", "kernels", "op", "size", "batch", "mb_per_s", "ns_per_packet", "vs_gmsm", "vs_aes_gcm", "allocs_per_batch"} {
		if _, ok := r0[k]; !ok {
			t.Errorf("JSON result lacks %q: %v", k, r0)
		}
	}
	if back["schema"].(float64) != ReportSchema {
		t.Errorf("schema %v", back["schema"])
	}
}
