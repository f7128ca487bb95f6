package cryptobench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/gmtun/gmtun/ciphers"
)

// ChildEnv is the environment variable that turns `gmtun bench` into a
// tier child. Its value is a JSON description of the child's work, set
// by Run; users never set it.
const ChildEnv = "GMTUN_BENCH_CHILD"

// TierSpec names a kernel tier and the GODEBUG mask that selects it
// (kernels/cpu and golang.org/x/sys/cpu read "cpu.<feature>=off").
type TierSpec struct {
	Name    string `json:"name"`    // short name, e.g. "avx2+gfni"
	GODEBUG string `json:"godebug"` // mask appended to GODEBUG; "" = none
}

// DefaultTiers returns the tiers `gmtun bench` measures by default, fastest
// first: no mask ("best"); then each of ciphers.TierMasks, named after the
// SM4 tier it leaves in lower case: GFNI, VAES, VPCLMULQDQ and VBMI off
// (an AVX-512 machine of the Skylake-SP class, "avx-512+aes-ni"), AVX-512
// off (an AVX2 + GFNI machine,
// "avx2+gfni"), GFNI off too ("avx2+vaes"), and VAES and VPCLMULQDQ off
// too (an AVX2 + AES-NI machine, "avx2+aes-ni"); last every feature off
// (the portable Go code, "generic").
func DefaultTiers() []TierSpec {
	ts := []TierSpec{{Name: "best", GODEBUG: ""}}
	for _, m := range ciphers.TierMasks() {
		ts = append(ts, TierSpec{Name: strings.ToLower(m.Tier), GODEBUG: m.GODEBUG})
	}
	return append(ts, TierSpec{Name: ciphers.GenericTier, GODEBUG: ciphers.GenericMask})
}

// LookupTier returns the default tier with the given name.
func LookupTier(name string) (TierSpec, bool) {
	for _, t := range DefaultTiers() {
		if t.Name == name {
			return t, true
		}
	}
	return TierSpec{}, false
}

// TierInfo is what a tier child reported about itself.
type TierInfo struct {
	TierSpec
	// Kernels is ciphers.Tiers() in the child: the implementation each
	// primitive selected under the tier's mask.
	Kernels []ciphers.Tier `json:"kernels"`
	// SameAs names an earlier tier that selected the same kernels; such
	// a tier is not measured again.
	SameAs string `json:"same_as,omitempty"`
}

// signature identifies the kernel set of t, for de-duplication.
func (t *TierInfo) signature() string {
	var b strings.Builder
	for _, k := range t.Kernels {
		fmt.Fprintf(&b, "%s=%s;", k.Primitive, k.Selected)
	}
	return b.String()
}

// Progress reports that a run is about to measure a cell.
type Progress struct {
	Tier string `json:"tier"`
	// Done cells of Total are finished; Cell is the next one.
	Done  int  `json:"done"`
	Total int  `json:"total"`
	Cell  Cell `json:"cell"`
}

// childSpec is the work of one tier child (the value of ChildEnv).
type childSpec struct {
	Tier    TierSpec `json:"tier"`
	Options Options  `json:"options"`
	Probe   bool     `json:"probe,omitempty"`   // report the tier only
	Gmtun   bool     `json:"gmtun,omitempty"`   // measure the gmtun cells
	Anchors bool     `json:"anchors,omitempty"` // measure the anchors
}

// childLine is one line a child writes to its standard output.
type childLine struct {
	Tier     *TierInfo `json:"tier,omitempty"`
	Progress *Progress `json:"progress,omitempty"`
	Result   *Result   `json:"result,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// ServeChild does the work described by spec (the value of ChildEnv) in
// this process and writes JSON lines to w: the tier first, then a progress
// line before and a result line after every cell. A failure is also
// written as an error line.
func ServeChild(spec string, w io.Writer) error {
	var cs childSpec
	if err := json.Unmarshal([]byte(spec), &cs); err != nil {
		return fmt.Errorf("cryptobench: bad %s value: %v", ChildEnv, err)
	}
	enc := json.NewEncoder(w)
	fail := func(err error) error {
		enc.Encode(childLine{Error: err.Error()})
		return err
	}
	if err := cs.Options.Validate(); err != nil {
		return fail(err)
	}
	info := TierInfo{TierSpec: cs.Tier, Kernels: ciphers.Tiers()}
	if err := enc.Encode(childLine{Tier: &info}); err != nil || cs.Probe {
		return err
	}
	cells := cs.Options.Cells(cs.Gmtun, cs.Anchors)
	for i, c := range cells {
		if err := enc.Encode(childLine{Progress: &Progress{Tier: cs.Tier.Name, Done: i, Total: len(cells), Cell: c}}); err != nil {
			return err
		}
		r, err := Measure(c, cs.Options.MinTime, cs.Options.Count)
		if err != nil {
			return fail(err)
		}
		r.Tier = cs.Tier.Name
		switch c.Impl {
		case ImplGmtun:
			r.Kernels = kernelsFor(c.Suite, info.Kernels)
		case ImplGMSM:
			r.Kernels = "gmsm " + moduleVersion("github.com/emmansun/gmsm")
		default:
			r.Kernels = "crypto/aes " + runtime.Version()
		}
		if err := enc.Encode(childLine{Result: &r}); err != nil {
			return err
		}
	}
	return nil
}

// moduleVersion returns the version of module path in this binary's build
// information, or "(unknown)".
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				if m.Replace != nil {
					m = m.Replace
				}
				return m.Version
			}
		}
	}
	return "(unknown)"
}

// Launcher says how to start a tier child: Path with Args must run
// `gmtun bench` (which serves ChildEnv), in environment Env plus the
// tier's GODEBUG mask and ChildEnv.
type Launcher struct {
	Path string   // the executable (os.Executable() for gmtun)
	Args []string // arguments after the program name, e.g. "bench"
	Env  []string // the base environment, e.g. os.Environ()
}

// command returns the child process for cs.
func (l *Launcher) command(cs *childSpec) (*exec.Cmd, error) {
	spec, err := json.Marshal(cs)
	if err != nil {
		return nil, err
	}
	godebug := ""
	for _, kv := range l.Env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			godebug = v
		}
	}
	if cs.Tier.GODEBUG != "" {
		if godebug != "" {
			godebug += ","
		}
		godebug += cs.Tier.GODEBUG // later fields override earlier ones
	}
	cmd := exec.Command(l.Path, l.Args...)
	cmd.Env = append(append([]string(nil), l.Env...), "GODEBUG="+godebug, ChildEnv+"="+string(spec))
	return cmd, nil
}

// runChild runs one child to completion, passing each line it writes to
// handle, and returns a one-sentence error if it fails.
func (l *Launcher) runChild(cs *childSpec, handle func(*childLine) error) error {
	cmd, err := l.command(cs)
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cryptobench: tier %s: %v", cs.Tier.Name, err)
	}
	var childErr, handleErr error
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var line childLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			handleErr = fmt.Errorf("cryptobench: tier %s: unreadable child output %.80q", cs.Tier.Name, sc.Text())
			break
		}
		if line.Error != "" {
			childErr = fmt.Errorf("cryptobench: tier %s: %s", cs.Tier.Name, strings.TrimPrefix(line.Error, "cryptobench: "))
			continue
		}
		if handleErr = handle(&line); handleErr != nil {
			break
		}
	}
	if handleErr != nil {
		cmd.Process.Kill()
	}
	io.Copy(io.Discard, out)
	waitErr := cmd.Wait()
	switch {
	case handleErr != nil:
		return handleErr
	case childErr != nil:
		return childErr
	case waitErr != nil:
		return fmt.Errorf("cryptobench: tier %s: child failed (%v): %s", cs.Tier.Name, waitErr, lastLine(stderr.String()))
	}
	return nil
}

// lastLine returns the last non-empty line of s that is not a GODEBUG
// diagnostic about an unknown feature name (the runtime and
// golang.org/x/sys/cpu print those for the masks kernels/cpu adds).
func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "GODEBUG") {
			return l
		}
	}
	return "no diagnostic"
}

// Run measures o in every tier of tiers, each in a child started by l,
// and returns the report with ratios against the anchors. It first probes
// every tier and measures only the first of tiers that select the same
// kernels. The anchors run in the first tier without a mask, or in a child
// of their own ("anchors") when no such tier is selected. progress, if not
// nil, is called before every cell with counts over the whole run.
func Run(o Options, tiers []TierSpec, l Launcher, progress func(Progress)) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if len(tiers) == 0 {
		return nil, errors.New("cryptobench: no tier selected")
	}
	rep := newReport(o)
	seen := map[string]string{}
	var plan []*childSpec
	anchorsPlaced := o.NoAnchors
	for _, t := range tiers {
		var info *TierInfo
		err := l.runChild(&childSpec{Tier: t, Options: o, Probe: true}, func(line *childLine) error {
			if line.Tier != nil {
				info = line.Tier
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if info == nil {
			return nil, fmt.Errorf("cryptobench: tier %s: the child reported nothing", t.Name)
		}
		info.TierSpec = t
		sig := info.signature()
		if first, dup := seen[sig]; dup {
			info.SameAs = first
		} else {
			seen[sig] = t.Name
			cs := &childSpec{Tier: t, Options: o, Gmtun: true}
			if !anchorsPlaced && t.GODEBUG == "" {
				cs.Anchors, anchorsPlaced = true, true
			}
			plan = append(plan, cs)
		}
		rep.Tiers = append(rep.Tiers, *info)
	}
	if !anchorsPlaced {
		plan = append(plan, &childSpec{Tier: TierSpec{Name: "anchors"}, Options: o, Anchors: true})
	}

	total := 0
	for _, cs := range plan {
		total += len(o.Cells(cs.Gmtun, cs.Anchors))
	}
	done := 0
	for _, cs := range plan {
		err := l.runChild(cs, func(line *childLine) error {
			switch {
			case line.Tier != nil && !cs.Gmtun:
				info := *line.Tier
				info.TierSpec = cs.Tier
				rep.Tiers = append(rep.Tiers, info)
			case line.Progress != nil && progress != nil:
				p := *line.Progress
				p.Done, p.Total = done, total
				progress(p)
			case line.Result != nil:
				rep.Results = append(rep.Results, *line.Result)
				done++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if done != total {
		return nil, fmt.Errorf("cryptobench: expected %d results, the children reported %d", total, done)
	}
	rep.finish(o, tiers)
	return rep, nil
}
