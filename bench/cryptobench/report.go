package cryptobench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gmtun/gmtun/ciphers"
)

// ReportSchema is the version of the JSON layout of Report; it changes
// only when a field is renamed or removed.
const ReportSchema = 1

// Report is the outcome of Run, in the stable JSON schema of
// `gmtun bench --json`.
type Report struct {
	Schema    int    `json:"schema"`
	GoVersion string `json:"go_version"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	// CPU is the processor model, when the OS reports it.
	CPU string `json:"cpu,omitempty"`
	// Clock describes what the times measure.
	Clock string `json:"clock"`
	// GMSM is the version of github.com/emmansun/gmsm in the anchors.
	GMSM string `json:"gmsm"`
	// MinTimeNs and Count are the timing options of the run.
	MinTimeNs int64 `json:"min_time_ns"`
	Count     int   `json:"count"`
	// Tiers lists every tier probed, in the order given, and the anchors'
	// own process if it had to be started.
	Tiers []TierInfo `json:"tiers"`
	// Results are ordered by suite, operation, implementation (anchors
	// first), tier, size and batch.
	Results []Result `json:"results"`
}

func newReport(o Options) *Report {
	return &Report{
		Schema:    ReportSchema,
		GoVersion: runtime.Version(),
		GOOS:      runtime.GOOS,
		GOARCH:    runtime.GOARCH,
		CPU:       cpuModel(),
		Clock:     clockName,
		GMSM:      moduleVersion("github.com/emmansun/gmsm"),
		MinTimeNs: o.MinTime.Nanoseconds(),
		Count:     o.Count,
	}
}

// anchorKey identifies the anchor a result is compared with.
type anchorKey struct {
	suite, impl, op string
	size            int
}

// finish computes the ratios and orders the results.
func (r *Report) finish(o Options, tiers []TierSpec) {
	anchors := map[anchorKey]float64{}
	for _, res := range r.Results {
		if res.Impl != ImplGmtun {
			anchors[anchorKey{res.Suite, res.Impl, res.Op, res.Size}] = res.MBPerSec
		}
	}
	for i := range r.Results {
		res := &r.Results[i]
		if res.Impl == ImplGo {
			continue
		}
		if res.Impl == ImplGmtun {
			if a := anchors[anchorKey{res.Suite, ImplGMSM, res.Op, res.Size}]; a > 0 {
				res.VsGMSM = res.MBPerSec / a
			}
		}
		if res.Suite == ciphers.SM4GCM.String() || res.Suite == ciphers.UBlockGCM.String() {
			if a := anchors[anchorKey{AESGCM, ImplGo, res.Op, res.Size}]; a > 0 {
				res.VsAESGCM = res.MBPerSec / a
			}
		}
	}
	index := func(xs []string, x string) int {
		if i := slices.Index(xs, x); i >= 0 {
			return i
		}
		return len(xs)
	}
	var suites, tierNames []string
	for _, id := range o.Suites {
		suites = append(suites, id.String())
		if id == aesAnchorSuite(o.Suites) {
			suites = append(suites, AESGCM)
		}
	}
	for _, t := range tiers {
		tierNames = append(tierNames, t.Name)
	}
	suiteOf := func(res *Result) string {
		if res.Suite == AESGCM {
			return aesAnchorSuite(o.Suites).String() // listed with sm4-gcm (or ublock-gcm)
		}
		return res.Suite
	}
	slices.SortStableFunc(r.Results, func(a, b Result) int {
		return cmp.Or(
			cmp.Compare(index(suites, suiteOf(&a)), index(suites, suiteOf(&b))),
			cmp.Compare(index([]string{OpSeal, OpOpen}, a.Op), index([]string{OpSeal, OpOpen}, b.Op)),
			cmp.Compare(index([]string{ImplGMSM, ImplGo, ImplGmtun}, a.Impl), index([]string{ImplGMSM, ImplGo, ImplGmtun}, b.Impl)),
			cmp.Compare(index(tierNames, a.Tier), index(tierNames, b.Tier)),
			cmp.Compare(a.Size, b.Size),
			cmp.Compare(a.Batch, b.Batch),
		)
	})
}

// WriteJSON writes r as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes r as an aligned text table, or as a Markdown table
// when markdown is set, preceded by the tiers and what they selected.
func (r *Report) WriteTable(w io.Writer, markdown bool) error {
	var b strings.Builder
	cpu := r.CPU
	if cpu == "" {
		cpu = r.GOARCH
	}
	fmt.Fprintf(&b, "CPU: %s; %s/%s %s; gmsm %s\n", cpu, r.GOOS, r.GOARCH, r.GoVersion, r.GMSM)
	fmt.Fprintf(&b, "Clock: %s; median of %d runs of at least %v each\n", r.Clock, r.Count, time.Duration(r.MinTimeNs))
	b.WriteString("Tiers:\n")
	for _, t := range r.Tiers {
		mask := t.GODEBUG
		if mask == "" {
			mask = "no mask"
		}
		var ks []string
		for _, k := range t.Kernels {
			ks = append(ks, k.Primitive+"="+k.Selected)
		}
		if len(ks) == 0 {
			ks = append(ks, "no SIMD primitives registered")
		}
		line := fmt.Sprintf("  %s (%s): %s", t.Name, mask, strings.Join(ks, " "))
		if t.SameAs != "" {
			line += "; same kernels as " + t.SameAs + ", not measured again"
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\n")

	showOp := slices.ContainsFunc(r.Results, func(res Result) bool { return res.Op != OpSeal })
	head := []string{"suite", "impl", "tier", "kernels"}
	if showOp {
		head = append(head, "op")
	}
	head = append(head, "size", "batch", "MB/s", "ns/pkt", "×gmsm", "×AES-GCM")
	rightFrom := len(head) - 6
	rows := [][]string{head}
	for _, res := range r.Results {
		row := []string{res.Suite, res.Impl, res.Tier, res.Kernels}
		if showOp {
			row = append(row, res.Op)
		}
		row = append(row,
			strconv.Itoa(res.Size), strconv.Itoa(res.Batch),
			strconv.FormatFloat(res.MBPerSec, 'f', 1, 64),
			strconv.FormatFloat(res.NsPerPacket, 'f', 1, 64),
			fmtRatio(res.VsGMSM), fmtRatio(res.VsAESGCM))
		rows = append(rows, row)
	}
	widths := make([]int, len(head))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	pad := func(s string, w int, right bool) string {
		fill := strings.Repeat(" ", w-len([]rune(s)))
		if right {
			return fill + s
		}
		return s + fill
	}
	for ri, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = pad(c, widths[i], i >= rightFrom)
		}
		if markdown {
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
			if ri == 0 {
				seps := make([]string, len(row))
				for i := range row {
					if i >= rightFrom {
						seps[i] = strings.Repeat("-", widths[i]-1) + ":"
					} else {
						seps[i] = strings.Repeat("-", widths[i])
					}
				}
				b.WriteString("| " + strings.Join(seps, " | ") + " |\n")
			}
		} else {
			b.WriteString(strings.TrimRight(strings.Join(cells, "  "), " ") + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fmtRatio formats a ratio column ("-" when not measured).
func fmtRatio(x float64) string {
	if x <= 0 {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 2, 64) + "×"
}
