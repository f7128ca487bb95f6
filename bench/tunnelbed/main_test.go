//go:build linux

package main

import (
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFlagsDefaults(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.runs != 3 || o.duration != 10*time.Second || !o.wireguard || o.gmtun != "" || !o.install || o.nice != -5 {
		t.Errorf("defaults = %+v", o)
	}
	if !slices.Equal(o.tests, []string{"ping", "tcp1", "tcp4", "udp"}) || !slices.Equal(o.suites, []string{"sm4-gcm", "zuc-256", "zuc-128", "ublock-gcm"}) {
		t.Errorf("default lists = %q, %q", o.tests, o.suites)
	}
	if o.gmtunRunToCompletion() != "" {
		t.Errorf("run_to_completion written by default: %q", o.gmtunRunToCompletion())
	}
	o, err = parseFlags([]string{"-run-to-completion", "false"}, io.Discard)
	if err != nil || o.gmtunRunToCompletion() != "false" {
		t.Errorf("-run-to-completion false: %q, %v", o.gmtunRunToCompletion(), err)
	}
}

func TestParseFlagsDemo(t *testing.T) {
	if _, err := parseFlags([]string{"-demo"}, io.Discard); err == nil {
		t.Error("-demo without -gmtun accepted")
	}
	o, err := parseFlags([]string{"-demo", "-gmtun", "bin/gmtun", "-suites", "zuc-256, sm4-gcm"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.wireguard || o.runs != 1 || o.duration != 5*time.Second || !slices.Equal(o.tests, []string{"ping", "tcp1"}) {
		t.Errorf("demo defaults = %+v", o)
	}
	if !slices.Equal(o.suites, []string{"zuc-256", "sm4-gcm"}) {
		t.Errorf("suites = %q", o.suites)
	}
	// Explicit flags win over the demo defaults.
	o, err = parseFlags([]string{"-demo", "-gmtun", "g", "-runs", "2", "-wireguard"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.runs != 2 || !o.wireguard {
		t.Errorf("explicit flags overridden by demo: %+v", o)
	}
}

func TestParseFlagsRejects(t *testing.T) {
	for _, args := range [][]string{
		{"-runs", "0"}, {"-time", "500ms"}, {"-tests", "ping,bogus"}, {"-udp-len", "1400"},
		{"-nice", "-21"}, {"-wireguard=false"}, {"extra"}, {"-unknown"}, {"-run-to-completion", "yes"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}

func TestEstimateBoundsRun(t *testing.T) {
	o, err := parseFlags([]string{"-gmtun", "g"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// 4 tunnels × 3 runs × (3 × 10 s of iperf3 at least) must fit.
	if d := estimate(o); d < 4*3*30*time.Second || d > 3*time.Hour {
		t.Errorf("estimate = %v", d)
	}
}

// The measured wireguard-go must be the one this module requires.
func TestWireguardPinMatchesGoMod(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(wireguardGoModule) + `\s+(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("go.mod does not require %s", wireguardGoModule)
	}
	if string(m[1]) != wireguardGoVersion {
		t.Errorf("go.mod requires %s %s, the bed builds %s", wireguardGoModule, m[1], wireguardGoVersion)
	}
}

func TestOwnerPID(t *testing.T) {
	for name, want := range map[string]int{
		"gmtb-1234-a": 1234, "gmtb-1234-b": 1234, "gmtb-1234-c": 0, "gmtb-x-a": 0,
		"gmtun-t-1234": 0, "gmtb-0-a": 0, "gmtb--5-a": 0, "other": 0,
	} {
		if got := ownerPID(name); got != want {
			t.Errorf("ownerPID(%q) = %d, want %d", name, got, want)
		}
	}
	b := NewBed()
	if ownerPID(b.NSA) != os.Getpid() || ownerPID(b.NSB) != os.Getpid() {
		t.Errorf("bed names %q/%q do not carry this PID", b.NSA, b.NSB)
	}
	// IFNAMSIZ is 16 including the NUL, even for the largest PID.
	b.ID = "4194304"
	if n := b.IfaceName("a"); len(n) > 15 || !strings.HasPrefix(n, "gmtb") {
		t.Errorf("IfaceName = %q", n)
	}
	if !ownerAlive(os.Getpid()) {
		t.Error("this test binary (tunnelbed.test) is not recognised as a live owner")
	}
	if ownerAlive(1) {
		t.Error("PID 1 recognised as a tunnelbed owner")
	}
}
