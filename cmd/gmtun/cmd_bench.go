package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gmtun/gmtun/bench/cryptobench"
	"github.com/gmtun/gmtun/ciphers"
)

func init() {
	register(&command{
		name:     "bench",
		synopsis: "[--suites LIST] [--sizes LIST] [--batches LIST] [--tiers LIST] [--time D] [--count N] [--open] [--json|--markdown]",
		summary:  "measure the data suites' throughput per core on this machine",
		order:    80,
		help: `Seals whole transport packets exactly as the tunnel does (16-byte header
with consecutive counters, body padded to 16 bytes, per-packet IV set-up,
tag, header authentication) with every selected suite, in batches, and
prints a table of suite × kernel tier × inner packet size × batch size in
MB/s of inner bytes and ns per packet, measured in the CPU time of the
measuring thread (median of --count runs of at least --time each).

The same run measures the per-packet equivalent of each suite built from
gmsm (and Go's AES-128-GCM next to sm4-gcm, or next to ublock-gcm, which gmsm
lacks, when sm4-gcm is not measured), one packet per call, and shows
each gmtun row's ratio to them (×gmsm, ×AES-GCM).

Each tier runs in a fresh child process of this binary with a GODEBUG mask:
` + benchTierTable() + `The table lists what each tier selected; a tier that selects the same
kernels as an earlier one is not measured again. The default grid takes a
few minutes; a progress line goes to standard error (--quiet silences it).
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			def := cryptobench.DefaultOptions()
			suites := fs.String("suites", "all", "comma-separated `LIST` of suites (sm4-gcm, zuc-256, zuc-128, ublock-gcm) or all")
			sizes := fs.String("sizes", joinInts(def.Sizes), "comma-separated `LIST` of inner packet sizes in bytes (1-65535)")
			batches := fs.String("batches", joinInts(def.Batches), "comma-separated `LIST` of batch sizes in packets (1-128)")
			tiers := fs.String("tiers", "all", "comma-separated `LIST` of tiers ("+strings.Join(benchTierNames(), ", ")+") or all")
			minTime := fs.Duration("time", def.MinTime, "minimum CPU time of each timed run of a cell")
			count := fs.Int("count", def.Count, "timed runs per cell; the median is reported")
			open := fs.Bool("open", false, "also measure the receive side (Key.Open)")
			noAnchors := fs.Bool("no-anchors", false, "skip the gmsm and AES-GCM reference measurements")
			asJSON := fs.Bool("json", false, "print one JSON document instead of the table")
			markdown := fs.Bool("markdown", false, "print the table in Markdown")
			quiet := fs.Bool("quiet", false, "print no progress on standard error")
			return func(args []string) int {
				if spec := e.getenv(cryptobench.ChildEnv); spec != "" {
					if err := cryptobench.ServeChild(spec, e.stdout); err != nil {
						return failf(e, exitFailure, "bench: %s", strings.TrimPrefix(err.Error(), "cryptobench: "))
					}
					return exitOK
				}
				if len(args) != 0 {
					return usageErrorf(e, "bench: unexpected argument %q; run 'gmtun bench --help'", args[0])
				}
				if *asJSON && *markdown {
					return usageErrorf(e, "bench: --json and --markdown exclude each other")
				}
				o := def
				o.MinTime, o.Count, o.Open, o.NoAnchors = *minTime, *count, *open, *noAnchors
				var err error
				if o.Suites, err = parseSuites(*suites); err != nil {
					return usageErrorf(e, "bench: --suites: %v", err)
				}
				if o.Sizes, err = parseIntList(*sizes, 1, cryptobench.MaxSize); err != nil {
					return usageErrorf(e, "bench: --sizes: %v", err)
				}
				if o.Batches, err = parseIntList(*batches, 1, ciphers.MaxBatch); err != nil {
					return usageErrorf(e, "bench: --batches: %v", err)
				}
				ts, err := parseTiers(*tiers)
				if err != nil {
					return usageErrorf(e, "bench: --tiers: %v", err)
				}
				if o.MinTime <= 0 {
					return usageErrorf(e, "bench: --time must be positive, got %v", o.MinTime)
				}
				if o.Count < 1 {
					return usageErrorf(e, "bench: --count must be at least 1, got %d", o.Count)
				}
				exe, err := os.Executable()
				if err != nil {
					return failf(e, exitFailure, "bench: cannot find this program's executable to start the tier processes: %v", err)
				}
				var progress func(cryptobench.Progress)
				term := e.isTerminal(e.stderr)
				if !*quiet {
					progress = func(p cryptobench.Progress) {
						line := fmt.Sprintf("gmtun bench: [%d/%d] %s: %v", p.Done+1, p.Total, p.Tier, p.Cell)
						if term {
							fmt.Fprintf(e.stderr, "\r%s\x1b[K", line)
						} else {
							fmt.Fprintln(e.stderr, line)
						}
					}
				}
				rep, err := cryptobench.Run(o, ts, cryptobench.Launcher{Path: exe, Args: []string{"bench"}, Env: os.Environ()}, progress)
				if progress != nil && term {
					fmt.Fprint(e.stderr, "\r\x1b[K")
				}
				if err != nil {
					return failf(e, exitFailure, "bench: %s", strings.TrimPrefix(err.Error(), "cryptobench: "))
				}
				if *asJSON {
					err = rep.WriteJSON(e.stdout)
				} else {
					err = rep.WriteTable(e.stdout, *markdown)
				}
				if err != nil {
					return failf(e, exitFailure, "bench: writing the results: %v", err)
				}
				return exitOK
			}
		},
	})
}

// joinInts formats xs as a comma-separated list.
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// splitList splits a comma-separated flag value, rejecting empty and
// repeated items.
func splitList(s string) ([]string, error) {
	items := strings.Split(s, ",")
	for i, it := range items {
		items[i] = strings.TrimSpace(it)
		if items[i] == "" {
			return nil, fmt.Errorf("empty item in %q", s)
		}
		if slices.Contains(items[:i], items[i]) {
			return nil, fmt.Errorf("%q is listed twice", items[i])
		}
	}
	return items, nil
}

// parseIntList parses a comma-separated list of integers in lo..hi.
func parseIntList(s string, lo, hi int) ([]int, error) {
	items, err := splitList(s)
	if err != nil {
		return nil, err
	}
	xs := make([]int, len(items))
	for i, it := range items {
		x, err := strconv.Atoi(it)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", it)
		}
		if x < lo || x > hi {
			return nil, fmt.Errorf("%d is outside %d..%d", x, lo, hi)
		}
		xs[i] = x
	}
	return xs, nil
}

// parseSuites parses --suites: suite names or "all".
func parseSuites(s string) ([]ciphers.SuiteID, error) {
	if s == "all" {
		return slices.Clone(ciphers.Suites[:]), nil
	}
	items, err := splitList(s)
	if err != nil {
		return nil, err
	}
	var ids []ciphers.SuiteID
	for _, it := range items {
		id, err := ciphers.ParseSuite(it)
		if err != nil {
			return nil, fmt.Errorf("unknown suite %q (known: sm4-gcm, zuc-256, zuc-128, ublock-gcm)", it)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// benchTierNames returns the names of the default tiers, in order.
func benchTierNames() []string {
	var names []string
	for _, t := range cryptobench.DefaultTiers() {
		names = append(names, t.Name)
	}
	return names
}

// benchTierTable lists the default tiers and their GODEBUG masks for the
// help text, one line each (the names and masks are defined once, in
// kernels/cpu, and reach here through ciphers and bench/cryptobench).
func benchTierTable() string {
	var b strings.Builder
	for _, t := range cryptobench.DefaultTiers() {
		mask := t.GODEBUG
		if mask == "" {
			mask = "no mask (the anchors run here)"
		}
		fmt.Fprintf(&b, "  %-13s %s\n", t.Name, mask)
	}
	return b.String()
}

// parseTiers parses --tiers: tier names or "all".
func parseTiers(s string) ([]cryptobench.TierSpec, error) {
	if s == "all" {
		return cryptobench.DefaultTiers(), nil
	}
	items, err := splitList(s)
	if err != nil {
		return nil, err
	}
	var ts []cryptobench.TierSpec
	for _, it := range items {
		t, ok := cryptobench.LookupTier(it)
		if !ok {
			return nil, fmt.Errorf("unknown tier %q (known: %s)", it, strings.Join(benchTierNames(), ", "))
		}
		ts = append(ts, t)
	}
	return ts, nil
}
