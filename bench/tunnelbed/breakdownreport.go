//go:build linux

package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// writeBreakdown renders a -breakdown report: a summary over the tunnels,
// then per tunnel the bucket table of its median run, its largest leaf
// symbols outside crypto and its kernel time by system call.
func writeBreakdown(w io.Writer, br *breakdownReport) {
	fmt.Fprintf(w, "## Data plane: where the CPU goes (tunnelbed -breakdown)\n\n")
	fmt.Fprintf(w, "Command: `%s`  \n", br.Command)
	fmt.Fprintf(w, "Date: %s, %s.\n\n", br.Started.UTC().Format("2006-01-02 15:04 UTC"), br.Finished.Sub(br.Started).Round(time.Second))
	writeMachine(w, &report{Machine: br.Machine})
	fmt.Fprintf(w, "Each run: one iperf3 TCP stream for %gs from A to B while `%s` samples the whole machine; "+
		"every sample is attributed to a process and, by its leaf frame, to a bucket (bench/README.md). "+
		"CPU-s/GB is sampled CPU seconds per 10⁹ bytes iperf3 received. Tables show each tunnel's median run "+
		"(by the daemons' total CPU-s/GB).\n\n", br.Seconds, br.Perf)
	if br.Daemons != "" {
		fmt.Fprintf(w, "Tunnel daemons (both sides) restricted to %s; iperf3 and the kernel's softirq work are not.\n\n", br.Daemons)
	}

	bare, _, haveBare := br.medianRun(bareVeth)
	fmt.Fprintf(w, "| tunnel | Gbit/s | × bare veth | daemons CPU-s/GB (runs) | crypto | plumbing | /proc CPU-s/GB | iperf3 | kernel threads | bed total | other processes |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, t := range br.Tunnels {
		r, totals, ok := br.medianRun(t.Name)
		if !ok {
			why := t.Error
			if why == "" {
				why = "no successful run"
			}
			fmt.Fprintf(w, "| %s | n/a: %s |||||||||\n", t.Name, mdEscape(firstLine(why)))
			continue
		}
		frac := "–"
		if haveBare && bare.Gbps > 0 {
			frac = fmt.Sprintf("%.2f", r.Gbps/bare.Gbps)
		}
		if t.Name == bareVeth {
			fmt.Fprintf(w, "| %s | %.2f | 1 | – | – | – | – | %.2f | %.2f | %.2f (%s) | %.2f |\n", t.Name, r.Gbps,
				r.classPerGB(classIperf), r.classPerGB(classKernel), r.bedPerGB(), joinFloats(totals), r.classPerGB(classOther))
			continue
		}
		g := r.perGB()
		fmt.Fprintf(w, "| %s | %.2f | %s | %.2f (%s) | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", t.Name, r.Gbps, frac,
			g.total(), joinFloats(totals), g.bucketTotal(bucketCrypto), g.plumbing(), r.ProcCPUSeconds/(r.Bytes/1e9),
			r.classPerGB(classIperf), r.classPerGB(classKernel), r.bedPerGB(), r.classPerGB(classOther))
	}
	fmt.Fprintf(w, "\nDaemons: both tunnel processes, from the perf samples; /proc: their utime+stime over the same "+
		"test (a cross-check). Kernel threads: softirqs on idle CPUs, ksoftirqd, kworker. Bed total: daemons + "+
		"iperf3 + kernel threads. Other processes: everything else that ran meanwhile (other users of the "+
		"machine; on a quiet machine about 0).\n\n")

	for _, t := range br.Tunnels {
		r, _, ok := br.medianRun(t.Name)
		if !ok || t.Name == bareVeth {
			continue
		}
		writeTunnelBreakdown(w, r)
	}
	var failed []string
	for _, r := range br.Runs {
		if r.Error != "" {
			failed = append(failed, fmt.Sprintf("%s run %d: %s", r.Tunnel, r.Run, firstLine(r.Error)))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "Failed runs:\n\n")
		for _, f := range failed {
			fmt.Fprintf(w, "- %s\n", mdEscape(f))
		}
		fmt.Fprintln(w)
	}
}

// writeTunnelBreakdown writes the bucket table, the largest plumbing
// symbols and the kernel entries of one run.
func writeTunnelBreakdown(w io.Writer, r breakdownRun) {
	g := r.perGB()
	fmt.Fprintf(w, "### %s: %.2f Gbit/s, run %d\n\n", r.Tunnel, r.Gbps, r.Run)
	fmt.Fprintf(w, "| bucket | A (sends, seals), CPU-s/GB | B (receives, opens), CPU-s/GB | total | share |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|\n")
	total := g.total()
	for b := range numBuckets {
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f | %s |\n", bucketLabels[b], g.Cells[0][b], g.Cells[1][b], g.bucketTotal(b), pct(g.bucketTotal(b), total))
	}
	fmt.Fprintf(w, "| **total** | **%.3f** | **%.3f** | **%.3f** | 100 %% |\n", g.side(0), g.side(1), total)
	fmt.Fprintf(w, "| plumbing (total − crypto) | %.3f | %.3f | %.3f | %s |\n\n",
		g.side(0)-g.Cells[0][bucketCrypto], g.side(1)-g.Cells[1][bucketCrypto], g.plumbing(), pct(g.plumbing(), total))

	fmt.Fprintf(w, "Largest leaf symbols outside crypto (CPU-s/GB):\n\n")
	fmt.Fprintf(w, "| symbol | bucket | A | B | total | share of plumbing |\n|---|---|---:|---:|---:|---:|\n")
	for _, s := range topSymbols(r.Profile, r.Bytes, 12, bucketCrypto) {
		fmt.Fprintf(w, "| `%s` | %s | %.3f | %.3f | %.3f | %s |\n", mdEscape(s.Name), s.Bucket, s.PerGB[0], s.PerGB[1], s.total(), pct(s.total(), g.plumbing()))
	}
	fmt.Fprintf(w, "\nKernel time of the daemons by entry (system call; \"+ softirq\": the packet delivery the call triggered):\n\n")
	fmt.Fprintf(w, "| entry | A | B | total |\n|---|---:|---:|---:|\n")
	for _, e := range topEntries(r.Profile, r.Bytes, 10) {
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f |\n", e.Name, e.PerGB[0], e.PerGB[1], e.total())
	}
	fmt.Fprintln(w)
}

// pct formats part/whole as a percentage.
func pct(part, whole float64) string {
	if whole <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f %%", 100*part/whole)
}

// joinFloats formats xs with two decimals, separated by commas.
func joinFloats(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(s, ", ")
}

// mdEscape makes s safe inside a Markdown table cell.
func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
