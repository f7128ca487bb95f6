//go:build linux

package main

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// The daemons of testdata/perf-script-sm4gcm.txt: gmtun sm4-gcm in A
// (sending) and in B (receiving).
var fixtureDaemons = [2]int{31713, 31714}

// fixturePeriod is the cpu-clock period of every sample in the fixture.
const fixturePeriod = 1001001e-9

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		sym    string
		kernel bool
		want   bucket
	}{
		{"github.com/gmtun/gmtun/kernels/sm4.xorKeyStream2AVX512GFNI.abi0", false, bucketCrypto},
		{"github.com/gmtun/gmtun/kernels/ghash.updateAVX512.abi0", false, bucketCrypto},
		{"github.com/gmtun/gmtun/ciphers/internal/sm4.openBatchKernel", false, bucketCrypto},
		{"golang.org/x/crypto/chacha20poly1305.(*chacha20poly1305).sealGeneric", false, bucketCrypto},
		{"golang.org/x/crypto/internal/poly1305.updateGeneric", false, bucketCrypto},
		{"golang.org/x/crypto/chacha20.(*Cipher).xorKeyStreamBlocks", false, bucketCrypto},
		{"runtime.memmove", false, bucketCopies},
		{"_copy_from_iter", true, bucketCopies},
		{"_copy_to_iter", true, bucketCopies},
		{"rep_movs_alternative", true, bucketCopies},
		{"copy_user_enhanced_fast_string", true, bucketCopies},
		{"memcpy_orig", true, bucketCopies},
		{"csum_partial", true, bucketChecksum},
		{"csum_partial_copy_generic", true, bucketChecksum}, // checksum wins over copy
		{"do_csum", true, bucketChecksum},
		{"__skb_checksum_complete", true, bucketChecksum},
		{"github.com/gmtun/gmtun/kernels/csum.copySumAVX2.abi0", false, bucketChecksum},
		{"github.com/gmtun/gmtun/kernels/csum.sumGeneric", false, bucketChecksum},
		{"github.com/gmtun/gmtun/tunnel/netio.sumAdd16", false, bucketChecksum},
		{"github.com/gmtun/gmtun/tunnel/netio.pseudoSum", false, bucketChecksum},
		{"github.com/gmtun/gmtun/tunnel/netio.completeChecksum", false, bucketChecksum},
		{"golang.zx2c4.com/wireguard/tun.checksumNoFold", false, bucketChecksum},
		{"__ip_append_data", true, bucketKernel},
		{"finish_task_switch.isra.0", true, bucketKernel},
		{"tun_get_user", true, bucketKernel},
		{"internal/runtime/syscall/linux.Syscall6", false, bucketKernel},
		{"syscall.RawSyscall6", false, bucketKernel},
		{"golang.org/x/sys/unix.recvmmsg", false, bucketKernel},
		{"runtime.(*gcControllerState).revise", false, bucketRuntime},
		{"runtime.scanObject", false, bucketRuntime},
		{"runtime.memclrNoHeapPointers", false, bucketRuntime},
		{"sync.(*Mutex).Lock", false, bucketRuntime},
		{"__vdso_clock_gettime", false, bucketRuntime},
		{"github.com/gmtun/gmtun/tunnel.(*Peer).receiveContainer", false, bucketOther},
		{"github.com/gmtun/gmtun/tunnel/netio.splitInto", false, bucketOther},
		{"golang.zx2c4.com/wireguard/device.(*Peer).RoutineSequentialSender", false, bucketOther},
		{"[unknown]", false, bucketOther},
		{"[unknown]", true, bucketKernel},
		// "crypto" as a user-space package prefix, not a substring.
		{"github.com/gmtun/gmtun/tunnel.cryptoless", false, bucketOther},
	} {
		if got := classify(tc.sym, tc.kernel); got != tc.want {
			t.Errorf("classify(%q, kernel=%v) = %s, want %s", tc.sym, tc.kernel, bucketKeys[got], bucketKeys[tc.want])
		}
	}
}

func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		comm string
		pid  int
		leaf string
		want procClass
	}{
		{"gmtun", 31713, "x", classSideA},
		{"gmtun", 31714, "x", classSideB},
		{"gmtun", 18053, "x", classOther}, // another gmtun on the machine
		{"iperf3", 18084, "x", classIperf},
		{"perf", 31385, "fdget", classPerf},
		{"perf-exec", 31395, "x", classPerf},
		{"tunnelbed", 777, "x", classPerf}, // perf's own PID, whatever the name
		{"ksoftirqd/0", 14, "tcp_wfree", classKernel},
		{"kworker/u8:1-wr", 99, "x", classKernel},
		{"swapper", 0, "pv_native_safe_halt", classIdle},
		{"swapper", 0, "default_idle_call", classIdle},
		{"swapper", 0, "net_rx_action", classKernel}, // a softirq on an idle CPU
		{"config.test", 12570, "[unknown]", classOther},
	} {
		if got := classOf(tc.comm, tc.pid, tc.leaf, fixtureDaemons, 777); got != tc.want {
			t.Errorf("classOf(%q, %d, %q) = %s, want %s", tc.comm, tc.pid, tc.leaf, classKeys[got], classKeys[tc.want])
		}
	}
	// Without a tunnel (zero PIDs) a PID 0 sample is never a daemon.
	if got := classOf("swapper", 0, "pv_native_safe_halt", [2]int{}, 0); got != classIdle {
		t.Errorf("bare: swapper idle = %s", classKeys[got])
	}
}

func TestKernelEntry(t *testing.T) {
	for _, tc := range []struct {
		frames []string
		want   string
	}{
		{[]string{"_copy_from_iter", "ip_generic_getfrag", "__ip_append_data", "ip_make_skb", "udp_sendmsg",
			"____sys_sendmsg", "___sys_sendmsg", "__sys_sendmmsg", "__x64_sys_sendmmsg", "do_syscall_64",
			"entry_SYSCALL_64_after_hwframe", "internal/runtime/syscall/linux.Syscall6"}, "sendmmsg"},
		// __x64_sys_writev inlined into the dispatcher: the frame under it names the call.
		{[]string{"_copy_from_iter", "tun_get_user", "tun_chr_write_iter", "vfs_writev", "do_writev",
			"do_syscall_64", "entry_SYSCALL_64_after_hwframe"}, "writev"},
		{[]string{"tun_chr_read_iter", "vfs_read", "ksys_read", "x64_sys_call", "do_syscall_64"}, "read"},
		{[]string{"__udp_enqueue_schedule_skb", "udp_queue_rcv_skb", "ip_local_deliver", "__netif_receive_skb",
			"process_backlog", "net_rx_action", "handle_softirqs", "do_softirq", "__local_bh_enable_ip",
			"ip_finish_output2", "udp_send_skb", "__sys_sendmmsg", "__x64_sys_sendmmsg", "do_syscall_64"}, "sendmmsg + softirq"},
		{[]string{"finish_task_switch.isra.0", "__schedule", "schedule", "exit_to_user_mode_loop", "do_syscall_64"}, "syscall exit"},
		{[]string{"do_epoll_pwait.part.0", "do_syscall_64"}, "epoll_pwait"},
		{[]string{"do_syscall_64", "entry_SYSCALL_64_after_hwframe"}, "syscall entry"},
		{[]string{"tcp_v4_rcv", "net_rx_action", "handle_softirqs", "irq_exit_rcu", "sysvec_apic_timer_interrupt",
			"asm_sysvec_apic_timer_interrupt", "runtime.memmove"}, "softirq"},
		{[]string{"clear_page_erms", "do_anonymous_page", "handle_mm_fault", "exc_page_fault", "asm_exc_page_fault",
			"__sys_recvmmsg", "__x64_sys_recvmmsg", "do_syscall_64"}, "page fault"},
		{[]string{"irqentry_exit_to_user_mode", "asm_sysvec_apic_timer_interrupt"}, "other"},
	} {
		if got := kernelEntry(tc.frames); got != tc.want {
			t.Errorf("kernelEntry(%v) = %q, want %q", tc.frames[:2], got, tc.want)
		}
	}
}

// TestParsePerfScriptFixture parses 33 samples recorded with perf 6.1 on
// Linux 6.18 during a gmtun sm4-gcm iperf3 test and picked by their leaf
// frames (testdata/README.md lists what is in the file).
func TestParsePerfScriptFixture(t *testing.T) {
	f, err := os.Open("testdata/perf-script-sm4gcm.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := parsePerfScript(f, fixtureDaemons, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Samples != 33 {
		t.Errorf("samples = %d, want 33", p.Samples)
	}
	want := map[string]map[string]int{
		"a":      {"crypto": 3, "copies": 3, "checksums": 2, "kernel": 5, "runtime": 1, "other": 1},
		"b":      {"crypto": 3, "copies": 2, "checksums": 1, "kernel": 1, "other": 1},
		"iperf3": {"kernel": 2, "other": 1},
		"kernel": {"kernel": 2},
		"perf":   {"kernel": 2},
		"other":  {"other": 2, "copies": 1},
		"idle":   {},
	}
	for class, buckets := range want {
		for _, b := range bucketKeys {
			got, wantSec := p.Seconds[class][b], float64(buckets[b])*fixturePeriod
			if math.Abs(got-wantSec) > 1e-9 {
				t.Errorf("%s/%s = %.6f s, want %d samples = %.6f s", class, b, got, buckets[b], wantSec)
			}
		}
	}
	wantEntries := map[string]map[string]int{
		"a": {"sendmmsg": 4, "sendmmsg + softirq": 1, "page fault": 1},
		"b": {"writev": 2, "page fault": 1},
	}
	for side, entries := range wantEntries {
		if len(p.Kernel[side]) != len(entries) {
			t.Errorf("side %s kernel entries %v, want %v", side, p.Kernel[side], entries)
		}
		for e, n := range entries {
			if got := p.Kernel[side][e]; math.Abs(got-float64(n)*fixturePeriod) > 1e-9 {
				t.Errorf("side %s entry %q = %.6f s, want %d samples", side, e, got, n)
			}
		}
	}
	if c := p.Symbols["a"]["github.com/gmtun/gmtun/tunnel/netio.sumAdd"]; c == nil || c.Bucket != "checksums" ||
		math.Abs(c.Seconds-2*fixturePeriod) > 1e-9 {
		t.Errorf("side a sumAdd = %+v, want 2 samples of checksums", c)
	}

	// 2 GB moved: CPU-s/GB is half the seconds.
	g := normalize(p, 2e9)
	if math.Abs(g.Cells[0][bucketCrypto]-3*fixturePeriod/2) > 1e-12 {
		t.Errorf("A crypto = %v CPU-s/GB, want %v", g.Cells[0][bucketCrypto], 3*fixturePeriod/2)
	}
	if math.Abs(g.total()-23*fixturePeriod/2) > 1e-12 {
		t.Errorf("total = %v CPU-s/GB, want 23 samples / 2 GB", g.total())
	}
	if math.Abs(g.plumbing()-17*fixturePeriod/2) > 1e-12 {
		t.Errorf("plumbing = %v CPU-s/GB, want 17 samples / 2 GB", g.plumbing())
	}
	top := topSymbols(p, 2e9, 3, bucketCrypto)
	if len(top) != 3 || top[0].Name != "_copy_from_iter" || top[0].PerGB != [2]float64{fixturePeriod, fixturePeriod} {
		t.Errorf("top symbols = %+v, want _copy_from_iter first (2 samples on each side)", top)
	}
	for _, s := range top {
		if s.Bucket == "crypto" {
			t.Errorf("top symbols outside crypto include %s", s.Name)
		}
	}
	entries := topEntries(p, 2e9, 10)
	if entries[0].Name != "sendmmsg" || entries[0].PerGB[0] != 4*fixturePeriod/2 {
		t.Errorf("top entry = %+v, want sendmmsg with 4 samples on A", entries[0])
	}
}

func TestParsePerfScriptErrors(t *testing.T) {
	for name, in := range map[string]string{
		"empty":        "",
		"no header":    "\t  ffffffff81bad234 _copy_from_iter ([kernel.kallsyms])\n",
		"bad header":   "gmtun 31713\n\t  1 x (y)\n",
		"bad frame":    "gmtun 31713/31720    1001001 \n\tgarbage\n",
		"only headers": "\n\n",
	} {
		if p, err := parsePerfScript(strings.NewReader(in), fixtureDaemons, 0); err == nil {
			t.Errorf("%s: parsed %d samples, want an error", name, p.Samples)
		}
	}
	// A comm with spaces and a sample without frames still count.
	in := "Timer thread 12/13    2000000 \n\t  ffffffff81000000 pv_native_safe_halt ([kernel.kallsyms])\n\nswapper 0/0    1000000 \n"
	p, err := parsePerfScript(strings.NewReader(in), [2]int{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Samples != 2 || p.Seconds["other"]["kernel"] != 2e-3 || p.Seconds["kernel"]["other"] != 1e-3 {
		t.Errorf("got %d samples, %v", p.Samples, p.Seconds)
	}
}

// fakeRun is a run with a profile of the given CPU seconds in A and B
// (all crypto on A, all kernel on B) over 1 GB.
func fakeRun(tunnel string, run int, a, b, iperf float64) breakdownRun {
	p := newProfile()
	p.Samples = 1
	p.Seconds["a"]["crypto"] = a
	p.Seconds["b"]["kernel"] = b
	p.Seconds["iperf3"]["kernel"] = iperf
	p.Seconds["idle"]["kernel"] = 5
	return breakdownRun{Tunnel: tunnel, Run: run, Gbps: 4, Bytes: 1e9, ProcCPUSeconds: a + b, Profile: p}
}

func TestMedianRunAndReport(t *testing.T) {
	br := &breakdownReport{
		Command: "tunnelbed -breakdown", Started: time.Unix(0, 0), Finished: time.Unix(60, 0), Seconds: 10,
		Perf:    "perf record",
		Tunnels: []tunnelInfo{{Name: bareVeth}, {Name: "gmtun sm4-gcm"}, {Name: "wireguard-go", Error: "no go"}},
		Runs: []breakdownRun{
			fakeRun("gmtun sm4-gcm", 1, 1, 2, 0.5),   // total 3
			fakeRun("gmtun sm4-gcm", 2, 0.5, 0.5, 1), // total 1
			fakeRun("gmtun sm4-gcm", 3, 1, 1, 0.2),   // total 2: the median
			{Tunnel: "gmtun sm4-gcm", Run: 4, Error: "boom"},
			fakeRun(bareVeth, 1, 0, 0, 0.3),
		},
	}
	br.Runs[4].Gbps = 16
	r, totals, ok := br.medianRun("gmtun sm4-gcm")
	if !ok || r.Run != 3 {
		t.Fatalf("median run = %d (ok %v), want run 3", r.Run, ok)
	}
	if len(totals) != 3 || totals[0] != 3 || totals[1] != 1 || totals[2] != 2 {
		t.Errorf("totals = %v, want [3 1 2]", totals)
	}
	if _, _, ok := br.medianRun("wireguard-go"); ok {
		t.Error("a tunnel without runs has a median run")
	}
	if got := r.busyPerGB(); got != 2.2 {
		t.Errorf("busy CPU-s/GB = %v, want 2.2 (idle left out)", got)
	}
	var buf bytes.Buffer
	writeBreakdown(&buf, br)
	out := buf.String()
	for _, want := range []string{
		"| gmtun sm4-gcm | 4.00 | 0.25 | 2.00 (3.00, 1.00, 2.00) | 1.00 | 1.00 | 2.00 |",
		"| bare veth | 16.00 | 1 |",
		"| wireguard-go | n/a: no go |",
		"### gmtun sm4-gcm: 4.00 Gbit/s, run 3",
		"| crypto | 1.000 | 0.000 | 1.000 | 50 % |",
		"| syscalls and kernel networking | 0.000 | 1.000 | 1.000 | 50 % |",
		"| **total** | **1.000** | **1.000** | **2.000** | 100 % |",
		"| plumbing (total − crypto) | 0.000 | 1.000 | 1.000 | 50 % |",
		"- gmtun sm4-gcm run 4: boom",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestBreakdownFlags(t *testing.T) {
	o, err := parseFlags([]string{"-breakdown", "-gmtun", "bin/gmtun", "-suites", "sm4-gcm,zuc-256"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !o.breakdown || o.runs != 1 || len(o.tests) != 1 || o.tests[0] != testTCP1 || o.quietWait != 10*time.Second {
		t.Errorf("breakdown defaults: runs %d, tests %v, quiet-wait %v", o.runs, o.tests, o.quietWait)
	}
	o, err = parseFlags([]string{"-breakdown", "-runs", "3", "-time", "5s"}, &bytes.Buffer{})
	if err != nil || o.runs != 3 || o.duration != 5*time.Second {
		t.Errorf("-breakdown -runs 3 -time 5s: %+v, %v", o, err)
	}
	for _, args := range [][]string{
		{"-breakdown", "-tests", "udp"},
		{"-breakdown", "-demo", "-gmtun", "x"},
	} {
		if _, err := parseFlags(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestFindPerf(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	_, err := findPerf(t.Context())
	if err == nil || !strings.Contains(err.Error(), "perf, which is not installed") {
		t.Errorf("no perf in PATH: %v", err)
	}
	// A perf that cannot run on this kernel (Debian's wrapper without a
	// matching perf_X.Y) is refused with its first line of output.
	broken := "#!/bin/sh\necho 'WARNING: perf not found for kernel 9.9'\nexit 1\n"
	if err := os.WriteFile(dir+"/perf", []byte(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = findPerf(t.Context())
	if err == nil || !strings.Contains(err.Error(), "perf not found for kernel 9.9") {
		t.Errorf("broken perf: %v", err)
	}
	working := "#!/bin/sh\necho 'perf version 6.1'\n"
	if err := os.WriteFile(dir+"/perf", []byte(working), 0o755); err != nil {
		t.Fatal(err)
	}
	if bin, err := findPerf(t.Context()); err != nil || bin != dir+"/perf" {
		t.Errorf("working perf: %q, %v", bin, err)
	}
}
