//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseCPUList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want cpuList
		str  string
	}{
		{"0", cpuList{0}, "0"},
		{" 3 ", cpuList{3}, "3"},
		{"0-1", cpuList{0, 1}, "0-1"},
		{"0,1", cpuList{0, 1}, "0-1"},
		{"2,0", cpuList{0, 2}, "0,2"},
		{"0-3,8-11", cpuList{0, 1, 2, 3, 8, 9, 10, 11}, "0-3,8-11"},
		{"1,1,0-2", cpuList{0, 1, 2}, "0-2"},
		{"5-5", cpuList{5}, "5"},
		{"0, 2-3 ,7", cpuList{0, 2, 3, 7}, "0,2-3,7"},
		{"1023", cpuList{1023}, "1023"},
	} {
		got, err := parseCPUList(c.in)
		if err != nil {
			t.Errorf("parseCPUList(%q): %v", c.in, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("parseCPUList(%q) = %v, want %v", c.in, got, c.want)
		}
		if s := got.String(); s != c.str {
			t.Errorf("parseCPUList(%q).String() = %q, want %q", c.in, s, c.str)
		}
		// The canonical form parses back to the same set.
		if again, err := parseCPUList(got.String()); err != nil || !slices.Equal(again, got) {
			t.Errorf("round trip of %q: %v, %v", got.String(), again, err)
		}
	}
	for _, in := range []string{"", " ", ",", "0,", "-1", "1-", "3-1", "a", "0x1", "+1", "1024", "0-1024", "0-7:2", "1 2", "99999999999999999999"} {
		if got, err := parseCPUList(in); err == nil {
			t.Errorf("parseCPUList(%q) = %v, want an error", in, got)
		}
	}
}

func TestCheckCPUsAllowed(t *testing.T) {
	var set unix.CPUSet
	set.Set(0)
	set.Set(2)
	if err := checkCPUsAllowed(cpuList{0, 2}, &set); err != nil {
		t.Error(err)
	}
	err := checkCPUsAllowed(cpuList{0, 1, 3}, &set)
	if err == nil || !strings.Contains(err.Error(), "CPU(s) 1,3 not available") {
		t.Errorf("CPUs 1 and 3 outside {0,2}: err = %v", err)
	}
}

func TestAllowedCPUs(t *testing.T) {
	status := []byte("Name:\tgmtun\nCpus_allowed:\t5\nCpus_allowed_list:\t0,2\nMems_allowed_list:\t0\n")
	got, err := allowedCPUs(status)
	if err != nil || !slices.Equal(got, cpuList{0, 2}) {
		t.Errorf("allowedCPUs = %v, %v; want [0 2]", got, err)
	}
	if _, err := allowedCPUs([]byte("Name:\tx\n")); err == nil {
		t.Error("status without Cpus_allowed_list accepted")
	}
	// This process's own line parses.
	own, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	if l, err := allowedCPUs(own); err != nil || len(l) == 0 {
		t.Errorf("own Cpus_allowed_list: %v, %v", l, err)
	}
}

func TestPlacement(t *testing.T) {
	var none placement
	argv := []string{"gmtun", "up"}
	if got := none.wrap(argv); !slices.Equal(got, argv) || none.env() != nil || none.describe() != "" {
		t.Errorf("zero placement changes something: %q %q %q", got, none.env(), none.describe())
	}
	p := placement{CPUs: cpuList{0, 1, 3}, GOMAXPROCS: 2}
	if got := p.wrap(argv); !slices.Equal(got, []string{"taskset", "-c", "0-1,3", "gmtun", "up"}) {
		t.Errorf("wrap = %q", got)
	}
	if !slices.Equal(p.env(), []string{"GOMAXPROCS=2"}) {
		t.Errorf("env = %q", p.env())
	}
	if d := p.describe(); d != "CPUs 0-1,3 (taskset -c), GOMAXPROCS=2" {
		t.Errorf("describe = %q", d)
	}
	// DaemonCommand puts taskset right before the daemon, after nice and
	// ip netns exec, which all execute it in the same process.
	bed := &Bed{Nice: -5, Daemons: p}
	cmd := bed.DaemonCommand("ns1", "gmtun", "up")
	want := []string{"nice", "-n", "-5", "ip", "netns", "exec", "ns1", "taskset", "-c", "0-1,3", "gmtun", "up"}
	if !slices.Equal(cmd.Args, want) {
		t.Errorf("DaemonCommand args = %q, want %q", cmd.Args, want)
	}
	// Other commands are not restricted.
	if c := bed.Command(context.Background(), "ns1", "iperf3", "-s"); slices.Contains(c.Args, "taskset") {
		t.Errorf("Command runs under taskset: %q", c.Args)
	}
}

func TestParseFlagsDaemonPlacement(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil || len(o.daemons.CPUs) != 0 || o.daemons.GOMAXPROCS != 0 {
		t.Fatalf("default placement = %+v, %v", o.daemons, err)
	}
	o, err = parseFlags([]string{"-daemon-cpus", "1,0", "-daemon-gomaxprocs", "1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.daemons.CPUs, cpuList{0, 1}) || o.daemons.GOMAXPROCS != 1 {
		t.Errorf("placement = %+v", o.daemons)
	}
	o, err = parseFlags([]string{"-breakdown", "-gmtun", "g", "-daemon-cpus", "0"}, io.Discard)
	if err != nil || !slices.Equal(o.daemons.CPUs, cpuList{0}) {
		t.Errorf("-breakdown with -daemon-cpus: %+v, %v", o, err)
	}
	for _, args := range [][]string{
		{"-daemon-cpus", "x"}, {"-daemon-cpus", "2-1"}, {"-daemon-cpus", ","},
		{"-daemon-gomaxprocs", "-1"}, {"-daemon-gomaxprocs", "100000"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}

func TestCheckDaemonCPUs(t *testing.T) {
	var own unix.CPUSet
	if err := unix.SchedGetaffinity(0, &own); err != nil {
		t.Skip(err)
	}
	for c := range maxCPU {
		if own.IsSet(c) {
			if err := checkDaemonCPUs(cpuList{c}); err != nil {
				t.Errorf("own CPU %d: %v", c, err)
			}
			break
		}
	}
	missing := -1
	for c := maxCPU - 1; c >= 0; c-- {
		if !own.IsSet(c) {
			missing = c
			break
		}
	}
	if missing < 0 {
		t.Skip("this process may use every CPU number")
	}
	err := checkDaemonCPUs(cpuList{missing})
	if err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("unavailable CPU %d: err = %v", missing, err)
	}
	if err := checkDaemonCPUs(nil); err != nil {
		t.Errorf("no restriction: %v", err)
	}
}

func TestReportDaemonPlacement(t *testing.T) {
	r := testReport()
	summarizeReport(r, "wireguard-go")
	var b bytes.Buffer
	writeMarkdown(&b, r, "wireguard-go")
	if strings.Contains(b.String(), "restricted to") {
		t.Errorf("unrestricted report mentions a restriction:\n%s", b.String())
	}
	r.Settings.DaemonCPUs, r.Settings.DaemonGOMAXPROCS = cpuList{0}.String(), 1
	b.Reset()
	writeMarkdown(&b, r, "wireguard-go")
	if want := "Tunnel daemons (both sides) restricted to CPUs 0 (taskset -c), GOMAXPROCS=1;"; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
	br := &breakdownReport{Daemons: placement{CPUs: cpuList{0, 1}, GOMAXPROCS: 2}.describe()}
	b.Reset()
	writeBreakdown(&b, br)
	if want := "restricted to CPUs 0-1 (taskset -c), GOMAXPROCS=2;"; !strings.Contains(b.String(), want) {
		t.Errorf("breakdown report lacks %q:\n%s", want, b.String())
	}
}

// TestDaemonPlacement starts the stand-in gmtun (see fakeGmtun) in a bed
// with its daemons restricted to one CPU and GOMAXPROCS=1, and checks
// that both daemons run with that affinity and environment.
func TestDaemonPlacement(t *testing.T) {
	requireRoot(t, "taskset")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	own, err := allowedCPUs(mustRead(t, "/proc/self/status"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeGmtunEnv, "1")
	bed := upBed(t)
	bed.Daemons = placement{CPUs: cpuList{own[len(own)-1]}, GOMAXPROCS: 1}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	g := &gmtunTunnel{bin: self, suite: "sm4-gcm"}
	if err := g.Prepare(ctx, bed, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	sess, err := g.Start(ctx, bed)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Stop()
	notes, err := checkPlacement(bed.Daemons, sess)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || !strings.HasSuffix(notes[0], ": CPUs "+bed.Daemons.CPUs.String()+", GOMAXPROCS=1") {
		t.Errorf("notes = %q", notes)
	}
	for _, pid := range sess.PIDs() {
		env := mustRead(t, "/proc/"+strconv.Itoa(pid)+"/environ")
		if !slices.ContainsFunc(bytes.Split(env, []byte{0}), func(e []byte) bool { return string(e) == "GOMAXPROCS=1" }) {
			t.Errorf("daemon %d lacks GOMAXPROCS=1 in its environment", pid)
		}
		// The PID is the daemon itself, not taskset, nice or ip.
		comm := strings.TrimSpace(string(mustRead(t, "/proc/"+strconv.Itoa(pid)+"/comm")))
		if comm == "taskset" || comm == "nice" || comm == "ip" {
			t.Errorf("daemon PID %d is %s, not the daemon", pid, comm)
		}
	}
	// A placement the daemons do not have is reported.
	wrong := placement{CPUs: append(slices.Clone(bed.Daemons.CPUs), maxCPU-1)}
	if _, err := checkPlacement(wrong, sess); err == nil {
		t.Error("checkPlacement accepted CPUs the daemons do not run on")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
