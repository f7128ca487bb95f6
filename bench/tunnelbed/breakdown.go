//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file is the pure part of -breakdown: it reads the samples of
// `perf script -F comm,pid,tid,period,ip,sym,dso` (a whole-machine
// cpu-clock profile with call chains, taken while iperf3 pushed one TCP
// stream through a tunnel), attributes every sample to a process class
// and, by its leaf frame, to a cost bucket, and normalizes the CPU time
// to seconds per 10⁹ bytes of iperf3 payload. perf.go runs perf.

// bucket is where a sample's CPU time went, judged by its leaf frame.
type bucket int

// The buckets, in table order.
const (
	bucketCrypto   bucket = iota // gmtun's kernels/ and ciphers/, wireguard-go's chacha20/poly1305
	bucketCopies                 // memmove, memcpy, copy_user_*, _copy_{to,from}_iter, rep_movs
	bucketChecksum               // csum_*, do_csum, the daemons' checksum helpers
	bucketKernel                 // every other kernel frame: syscalls and the TUN/UDP/veth/skb work
	bucketRuntime                // the Go runtime and scheduling: runtime.* but memmove, sync, GC
	bucketOther                  // the rest of the daemon's own code (tunnel, netio, …)
	numBuckets
)

// bucketKeys name the buckets in JSON; bucketLabels in the Markdown tables.
var (
	bucketKeys   = [numBuckets]string{"crypto", "copies", "checksums", "kernel", "runtime", "other"}
	bucketLabels = [numBuckets]string{
		"crypto", "copies", "checksums", "syscalls and kernel networking",
		"Go runtime and scheduling", "other daemon code",
	}
)

// procClass is who a sample's CPU time belongs to.
type procClass int

// The process classes.
const (
	classSideA  procClass = iota // the tunnel daemon in namespace A (sends: seals)
	classSideB                   // the tunnel daemon in namespace B (receives: opens)
	classIperf                   // iperf3 client and server (the load; their kernel TCP work included)
	classKernel                  // softirq on idle CPUs, ksoftirqd, kworker: kernel work for the traffic
	classPerf                    // perf itself
	classOther                   // every other process on the machine (other users of a shared machine)
	classIdle                    // idle CPUs
	numClasses
)

// classKeys name the process classes in JSON.
var classKeys = [numClasses]string{"a", "b", "iperf3", "kernel", "perf", "other", "idle"}

// matchKind is how a symRule's pattern is compared with a symbol.
type matchKind int

const (
	matchPrefix   matchKind = iota // the symbol starts with the pattern
	matchExact                     // the symbol is the pattern
	matchContains                  // the symbol contains the pattern, ignoring case
)

// symRule assigns the symbols it matches, in kernel or in user space, to a
// bucket.
type symRule struct {
	kernel  bool
	how     matchKind
	pattern string
	bucket  bucket
}

// symRules classify leaf frames; the first matching rule wins. User-space
// frames no rule matches are the daemon's own code (bucketOther); kernel
// frames no rule matches are bucketKernel. Keep the table small: it is
// the definition of the buckets (bench/README.md lists it).
var symRules = []symRule{
	// Kernel: checksums first, since csum_partial_copy_generic both
	// copies and sums (it counts as a checksum).
	{true, matchContains, "csum", bucketChecksum},
	{true, matchContains, "checksum", bucketChecksum},
	{true, matchPrefix, "memcpy", bucketCopies},
	{true, matchPrefix, "__memcpy", bucketCopies},
	{true, matchPrefix, "memmove", bucketCopies},
	{true, matchPrefix, "__memmove", bucketCopies},
	{true, matchPrefix, "copy_user", bucketCopies},
	{true, matchPrefix, "rep_movs", bucketCopies},
	{true, matchPrefix, "_copy_to_iter", bucketCopies},
	{true, matchPrefix, "_copy_from_iter", bucketCopies},
	{true, matchPrefix, "copy_page_to_iter", bucketCopies},
	{true, matchPrefix, "copy_page_from_iter", bucketCopies},
	{true, matchPrefix, "copyin", bucketCopies},
	{true, matchPrefix, "copyout", bucketCopies},
	{true, matchPrefix, "skb_copy_bits", bucketCopies},

	// User space. The checksum kernels before the crypto ones: csum.CopySum
	// both copies and sums (it counts as a checksum, as in the kernel).
	{false, matchPrefix, "github.com/gmtun/gmtun/kernels/csum.", bucketChecksum},
	// Crypto: gmtun's suites and kernels, Go's and x/crypto's
	// (wireguard-go's chacha20, poly1305, blake2s), gmsm (SM2 handshakes).
	{false, matchPrefix, "github.com/gmtun/gmtun/kernels/", bucketCrypto},
	{false, matchPrefix, "github.com/gmtun/gmtun/ciphers", bucketCrypto},
	{false, matchPrefix, "golang.org/x/crypto/", bucketCrypto},
	{false, matchPrefix, "crypto/", bucketCrypto},
	{false, matchPrefix, "github.com/emmansun/gmsm/", bucketCrypto},
	{false, matchPrefix, "runtime.memmove", bucketCopies},
	{false, matchPrefix, "runtime.typedmemmove", bucketCopies},
	{false, matchPrefix, "runtime.typedslicecopy", bucketCopies},
	{false, matchPrefix, "memcpy", bucketCopies},
	// Checksums: wireguard-go's tun.checksum*, gmtun's netio sum helpers.
	{false, matchContains, "checksum", bucketChecksum},
	{false, matchPrefix, "github.com/gmtun/gmtun/tunnel/netio.sum", bucketChecksum},
	{false, matchPrefix, "github.com/gmtun/gmtun/tunnel/netio.pseudoSum", bucketChecksum},
	// The user-space side of system calls belongs with the kernel's part.
	{false, matchPrefix, "syscall.", bucketKernel},
	{false, matchPrefix, "internal/runtime/syscall", bucketKernel},
	{false, matchPrefix, "runtime/internal/syscall", bucketKernel},
	{false, matchPrefix, "golang.org/x/sys/unix.", bucketKernel},
	{false, matchPrefix, "internal/poll.", bucketKernel},
	// Go runtime, GC and the hand-offs between goroutines.
	{false, matchPrefix, "runtime.", bucketRuntime},
	{false, matchPrefix, "internal/runtime/", bucketRuntime},
	{false, matchPrefix, "sync.", bucketRuntime},
	{false, matchPrefix, "sync/atomic.", bucketRuntime},
	{false, matchPrefix, "internal/sync.", bucketRuntime},
	{false, matchPrefix, "__vdso_", bucketRuntime}, // runtime.nanotime's clock_gettime
}

// classify returns the bucket of a leaf frame's symbol.
func classify(sym string, kernel bool) bucket {
	for _, r := range symRules {
		if r.kernel != kernel {
			continue
		}
		var ok bool
		switch r.how {
		case matchPrefix:
			ok = strings.HasPrefix(sym, r.pattern)
		case matchExact:
			ok = sym == r.pattern
		case matchContains:
			ok = strings.Contains(strings.ToLower(sym), r.pattern)
		}
		if ok {
			return r.bucket
		}
	}
	if kernel {
		return bucketKernel
	}
	return bucketOther
}

// idleSymbols are the leaf frames of an idle CPU (the swapper task halted
// or polling), by prefix.
var idleSymbols = []string{
	"pv_native_safe_halt", "native_safe_halt", "default_idle", "arch_cpu_idle", "acpi_idle",
	"acpi_safe_halt", "intel_idle", "mwait_idle", "poll_idle", "cpu_idle_poll", "cpuidle_enter",
	"do_idle", "haltpoll", "cpu_startup_entry", "hv_native_safe_halt",
}

// kernelThreadPrefixes are the command names of kernel threads that carry
// network work for whoever sent the packets.
var kernelThreadPrefixes = []string{"ksoftirqd/", "kworker/", "napi/", "irq/"}

// classOf returns the process class of a sample.
func classOf(comm string, pid int, leafSym string, daemons [2]int, perfPID int) procClass {
	switch {
	case pid > 0 && pid == daemons[0]:
		return classSideA
	case pid > 0 && pid == daemons[1]:
		return classSideB
	case comm == "iperf3":
		return classIperf
	case pid > 0 && pid == perfPID, comm == "perf", strings.HasPrefix(comm, "perf-exec"):
		return classPerf
	case pid == 0:
		for _, p := range idleSymbols {
			if strings.HasPrefix(leafSym, p) {
				return classIdle
			}
		}
		return classKernel // softirq taken on an idle CPU
	}
	for _, p := range kernelThreadPrefixes {
		if strings.HasPrefix(comm, p) {
			return classKernel
		}
	}
	return classOther
}

// kernelEntry names why a tunnel daemon was in the kernel, from its call
// chain (leaf first): the system call it was in ("sendmmsg", "writev";
// the frame under do_syscall_64, since the kernel may inline the
// __x64_sys_* stubs), with " + softirq" when the leaf runs in a softirq
// raised inside the call (the kernel delivering packets the call sent);
// "syscall exit" for the scheduling and signal work on the way back;
// "softirq" for a softirq taken on an interrupt; "page fault"; or "other".
func kernelEntry(frames []string) string {
	softirq := false
	for i, f := range frames {
		switch {
		case f == "handle_softirqs" || f == "__do_softirq" || f == "net_rx_action":
			softirq = true
		case f == "exc_page_fault" || f == "asm_exc_page_fault":
			return "page fault"
		case f == "do_syscall_64" || f == "do_fast_syscall_32" || f == "do_el0_svc" || f == "el0_svc_common":
			name := "syscall entry"
			for j := i - 1; j >= 0; j-- {
				if frames[j] != "x64_sys_call" && frames[j] != "invoke_syscall" {
					name = syscallName(frames[j])
					break
				}
			}
			if softirq {
				return name + " + softirq"
			}
			return name
		}
	}
	if softirq {
		return "softirq"
	}
	return "other"
}

// syscallPrefixes are stripped from the function under the system call
// dispatcher to name the call ("__x64_sys_sendmmsg", "ksys_read",
// "do_writev", "__sys_recvmmsg").
var syscallPrefixes = []string{"__x64_sys_", "__ia32_sys_", "__arm64_sys_", "__do_sys_", "__se_sys_", "ksys_", "__sys_", "do_sys_", "do_"}

// syscallName turns a kernel function called by the system call
// dispatcher into the name of the call.
func syscallName(f string) string {
	if strings.Contains(f, "exit_to_user_mode") {
		return "syscall exit"
	}
	if i := strings.IndexByte(f, '.'); i > 0 {
		f = f[:i] // ".isra.0", ".part.0", ".constprop.0"
	}
	for _, p := range syscallPrefixes {
		if strings.HasPrefix(f, p) && len(f) > len(p) {
			return f[len(p):]
		}
	}
	return f
}

// symCost is the CPU time sampled in one leaf symbol.
type symCost struct {
	Bucket  string  `json:"bucket"`
	Seconds float64 `json:"cpu_seconds"`
}

// profile is one parsed perf recording: CPU seconds per process class and
// bucket and, for the two tunnel daemons, per leaf symbol and per kernel
// entry.
type profile struct {
	Samples int `json:"samples"`
	// Seconds maps class → bucket → sampled CPU seconds.
	Seconds map[string]map[string]float64 `json:"cpu_seconds"`
	// Symbols maps side ("a", "b") → leaf symbol → cost.
	Symbols map[string]map[string]*symCost `json:"symbols"`
	// Kernel maps side → kernelEntry → CPU seconds of kernel-space leaves.
	Kernel map[string]map[string]float64 `json:"kernel_entries"`
}

func newProfile() *profile {
	p := &profile{
		Seconds: map[string]map[string]float64{},
		Symbols: map[string]map[string]*symCost{"a": {}, "b": {}},
		Kernel:  map[string]map[string]float64{"a": {}, "b": {}},
	}
	for _, c := range classKeys {
		p.Seconds[c] = map[string]float64{}
	}
	return p
}

// classSeconds is the CPU seconds of class c over every bucket.
func (p *profile) classSeconds(c procClass) float64 {
	var s float64
	for _, v := range p.Seconds[classKeys[c]] {
		s += v
	}
	return s
}

// sample is one perf sample being parsed.
type sample struct {
	comm   string
	pid    int
	period int64 // nanoseconds of cpu-clock
	frames []string
	leafIP uint64
	leafDS string
}

// headerRE matches a sample's header line: "COMM PID/TID PERIOD" (COMM may
// contain spaces).
var headerRE = regexp.MustCompile(`^(.*\S)\s+(-?\d+)/(-?\d+)\s+(\d+)\s*$`)

// frameRE matches a call chain line: "\tIP SYMBOL (DSO)". SYMBOL may carry
// a "+0xOFF" suffix and contain spaces and parentheses.
var frameRE = regexp.MustCompile(`^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$`)

// isKernelFrame reports whether a frame is in the kernel: by its DSO
// ("[kernel.kallsyms]", a module "[veth]") or, on x86-64, by an address in
// the upper half.
func isKernelFrame(ip uint64, dso string) bool {
	if strings.HasPrefix(dso, "[kernel") || strings.HasSuffix(dso, ".ko") {
		return true
	}
	if strings.HasPrefix(dso, "[") && dso != "[unknown]" && dso != "[vdso]" && dso != "[vsyscall]" && !strings.HasPrefix(dso, "[heap") && !strings.HasPrefix(dso, "[stack") {
		return true // modules appear as [name]
	}
	return ip >= 0xffff800000000000
}

// stripOffset drops a "+0x1a" suffix from a symbol.
func stripOffset(sym string) string {
	if i := strings.LastIndex(sym, "+0x"); i > 0 {
		return sym[:i]
	}
	return sym
}

// parsePerfScript reads `perf script -F comm,pid,tid,period,ip,sym,dso`
// output (samples separated by blank lines, leaf frame first) and
// attributes each sample. daemons are the PIDs of the tunnel daemons in A
// and B (0 for none); perfPID is perf's own PID (0 if unknown).
func parsePerfScript(r io.Reader, daemons [2]int, perfPID int) (*profile, error) {
	p := newProfile()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 256<<10), 4<<20)
	var cur *sample
	line := 0
	flush := func() {
		if cur == nil {
			return
		}
		p.add(cur, daemons, perfPID)
		cur = nil
	}
	for sc.Scan() {
		line++
		t := sc.Text()
		if strings.TrimSpace(t) == "" {
			flush()
			continue
		}
		if t[0] != ' ' && t[0] != '\t' {
			flush()
			m := headerRE.FindStringSubmatch(t)
			if m == nil {
				return nil, fmt.Errorf("tunnelbed: perf script line %d: not a sample header: %q", line, t)
			}
			pid, _ := strconv.Atoi(m[2])
			period, _ := strconv.ParseInt(m[4], 10, 64)
			cur = &sample{comm: m[1], pid: pid, period: period}
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("tunnelbed: perf script line %d: frame outside a sample", line)
		}
		m := frameRE.FindStringSubmatch(t)
		if m == nil {
			return nil, fmt.Errorf("tunnelbed: perf script line %d: not a frame: %q", line, t)
		}
		if len(cur.frames) == 0 {
			cur.leafIP, _ = strconv.ParseUint(m[1], 16, 64)
			cur.leafDS = m[3]
		}
		cur.frames = append(cur.frames, stripOffset(m[2]))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tunnelbed: reading perf script: %w", err)
	}
	flush()
	if p.Samples == 0 {
		return nil, fmt.Errorf("tunnelbed: perf recorded no samples")
	}
	return p, nil
}

// add attributes one sample.
func (p *profile) add(s *sample, daemons [2]int, perfPID int) {
	leaf := "[unknown]"
	if len(s.frames) > 0 {
		leaf = s.frames[0]
	}
	kernel := len(s.frames) > 0 && isKernelFrame(s.leafIP, s.leafDS)
	c := classOf(s.comm, s.pid, leaf, daemons, perfPID)
	b := classify(leaf, kernel)
	sec := float64(s.period) / 1e9
	p.Samples++
	p.Seconds[classKeys[c]][bucketKeys[b]] += sec
	if c != classSideA && c != classSideB {
		return
	}
	side := classKeys[c]
	sc := p.Symbols[side][leaf]
	if sc == nil {
		sc = &symCost{Bucket: bucketKeys[b]}
		p.Symbols[side][leaf] = sc
	}
	sc.Seconds += sec
	if kernel {
		p.Kernel[side][kernelEntry(s.frames)] += sec
	}
}

// perGB is a breakdown normalized to CPU seconds per 10⁹ payload bytes.
type perGB struct {
	// Cells[side][bucket]: side 0 is A, 1 is B.
	Cells [2][numBuckets]float64
}

// normalize divides the tunnel daemons' CPU time by the gigabytes moved.
func normalize(p *profile, bytes float64) perGB {
	var g perGB
	if bytes <= 0 {
		return g
	}
	gb := bytes / 1e9
	for side, c := range []procClass{classSideA, classSideB} {
		for b := range numBuckets {
			g.Cells[side][b] = p.Seconds[classKeys[c]][bucketKeys[b]] / gb
		}
	}
	return g
}

// side returns the total CPU-s/GB of one side.
func (g perGB) side(i int) float64 {
	var s float64
	for _, v := range g.Cells[i] {
		s += v
	}
	return s
}

// total is both sides' CPU-s/GB.
func (g perGB) total() float64 { return g.side(0) + g.side(1) }

// bucketTotal is both sides' CPU-s/GB in bucket b.
func (g perGB) bucketTotal(b bucket) float64 { return g.Cells[0][b] + g.Cells[1][b] }

// plumbing is everything but crypto, both sides.
func (g perGB) plumbing() float64 { return g.total() - g.bucketTotal(bucketCrypto) }

// topCost is a leaf symbol's or kernel entry's CPU-s/GB on each side.
type topCost struct {
	Name   string     `json:"name"`
	Bucket string     `json:"bucket,omitempty"`
	PerGB  [2]float64 `json:"cpu_s_per_gb"` // side A, side B
}

// total is both sides' CPU-s/GB.
func (t topCost) total() float64 { return t.PerGB[0] + t.PerGB[1] }

// topSymbols returns the n most expensive leaf symbols of both daemons
// together, leaving out bucket skip (use numBuckets to keep all).
func topSymbols(p *profile, bytes float64, n int, skip bucket) []topCost {
	m := map[string]*topCost{}
	for i, side := range []string{"a", "b"} {
		for sym, c := range p.Symbols[side] {
			if skip < numBuckets && c.Bucket == bucketKeys[skip] {
				continue
			}
			t := m[sym]
			if t == nil {
				t = &topCost{Name: sym, Bucket: c.Bucket}
				m[sym] = t
			}
			t.PerGB[i] += c.Seconds / (bytes / 1e9)
		}
	}
	return top(m, n)
}

// topEntries returns the n largest kernel entries of both daemons.
func topEntries(p *profile, bytes float64, n int) []topCost {
	m := map[string]*topCost{}
	for i, side := range []string{"a", "b"} {
		for e, s := range p.Kernel[side] {
			t := m[e]
			if t == nil {
				t = &topCost{Name: e}
				m[e] = t
			}
			t.PerGB[i] += s / (bytes / 1e9)
		}
	}
	return top(m, n)
}

// top sorts m by total cost, largest first (ties by name), and keeps n.
func top(m map[string]*topCost, n int) []topCost {
	out := make([]topCost, 0, len(m))
	for _, t := range m {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(x, y topCost) int {
		if d := y.total() - x.total(); d != 0 {
			if d > 0 {
				return 1
			}
			return -1
		}
		return strings.Compare(x.Name, y.Name)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
