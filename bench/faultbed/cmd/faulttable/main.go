// Command faulttable turns the FIGURE lines that the fault bed's tests
// (cmd/gmtun TestNetnsFault) log into a Markdown table, headed by the date
// and CPU model, and lists the subtests that failed. `make bench-faults`
// pipes `go test -v` into it:
//
//	go test -v -run TestNetnsFault ./cmd/gmtun | faulttable
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

func main() {
	failed, err := table(os.Stdin, os.Stdout, cpuModel())
	if err != nil {
		fmt.Fprintln(os.Stderr, "faulttable:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}

// table writes the table of the figures in r to w and reports whether any
// test failed.
func table(r io.Reader, w io.Writer, cpu string) (failed bool, err error) {
	fmt.Fprintf(w, "Fault bed, %s, %s (%d CPUs)\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), cpu, runtime.NumCPU())
	fmt.Fprintln(w, "| scenario | metric | value |")
	fmt.Fprintln(w, "|---|---|---|")
	var fails []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "FIGURE\t"); i >= 0 {
			f := strings.SplitN(line[i+len("FIGURE\t"):], "\t", 3)
			if len(f) == 3 {
				fmt.Fprintf(w, "| %s | %s | %s |\n", f[0], f[1], f[2])
			}
			continue
		}
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "--- FAIL: ") {
			fails = append(fails, strings.TrimPrefix(t, "--- FAIL: "))
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	if len(fails) > 0 {
		fmt.Fprintf(w, "\nFAILED:\n")
		for _, f := range fails {
			fmt.Fprintf(w, "- %s\n", f)
		}
	}
	return len(fails) > 0, nil
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
