package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gmtun/gmtun/control"
	"github.com/gmtun/gmtun/tunnel"
)

var showNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func sampleStatus(name string) control.Status {
	hs := showNow.Add(-(time.Hour + 2*time.Minute + 1*time.Second))
	reload := showNow.Add(-5 * time.Second)
	return control.Status{
		Interface:  name,
		PublicKey:  "PUBA",
		ListenPort: 51900,
		MTU:        1420,
		Suites:     []string{"sm4-gcm", "zuc-128"},
		Kernels: []control.Kernel{
			{Primitive: "sm4", Selected: "AVX-512+GFNI", Available: []string{"AVX-512+GFNI", "generic"}},
			{Primitive: "zuc", Selected: "generic", Available: []string{"generic"}},
		},
		DataPath:        "run to completion",
		CPUs:            2,
		Offload:         control.Offload{TUNVNetHdr: true, TUNTSO: true, TUNQueues: 2, UDPGSO4: true, UDPGRO4: true, UDPGRO6: true},
		ConfigFile:      "/etc/gmtun/" + name + ".toml",
		Started:         showNow.Add(-2 * time.Hour),
		LastReload:      &reload,
		LastReloadError: "x.toml:3: bad",
		Peers: []control.Peer{
			{Name: "site-b", PublicKey: "PUBB", Endpoint: "198.18.0.2:51900",
				AllowedIPs: []string{"198.19.0.2/32", "fd00:19::2/128"}, Suite: "sm4-gcm", LastHandshake: &hs,
				RxBytes: 1536, TxBytes: 3 << 20, RxPackets: 2, TxPackets: 3, PersistentKeepalive: 25, Roaming: true},
			{Name: "site-c", PublicKey: "PUBC", AllowedIPs: []string{}, RxBytes: 1, Roaming: false},
		},
		Drops:            map[string]uint64{"replay": 2, "auth_failed": 7, "no_route": 0},
		HandshakeInvalid: map[string]uint64{},
	}
}

func TestWriteStatus(t *testing.T) {
	st := sampleStatus("gm0")
	var b strings.Builder
	writeStatus(&b, &st, showNow)
	want := `interface: gm0
  public key: PUBA
  listening port: 51900
  mtu: 1420
  suites: sm4-gcm, zuc-128
  kernels: sm4 AVX-512+GFNI, zuc generic
  data path: run to completion on 2 CPU(s)
  offload: tun tso on, uso off, 2 queue(s); udp gso on/off, gro on/on (ipv4/ipv6)
  drops: auth_failed 7, replay 2
  batches: seal none yet; open none yet
  last reload: 5 seconds ago (failed: x.toml:3: bad)

peer: site-b
  public key: PUBB
  endpoint: 198.18.0.2:51900
  allowed ips: 198.19.0.2/32, fd00:19::2/128
  suite: sm4-gcm
  latest handshake: 1 hour, 2 minutes, 1 second ago
  transfer: 1.50 KiB received, 3.00 MiB sent
  persistent keepalive: every 25 seconds

peer: site-c
  public key: PUBC
  endpoint: (none)
  allowed ips: (none)
  latest handshake: never
  transfer: 1 byte received, 0 bytes sent
  roaming: off
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	st.FwMark = 0x51
	st.Drops = map[string]uint64{"replay": 0}
	st.HandshakeInvalid = map[string]uint64{"screen": 4}
	st.LastReload, st.LastReloadError = nil, ""
	b.Reset()
	writeStatus(&b, &st, showNow)
	for _, line := range []string{"\n  fwmark: 0x51\n", "\n  drops: none\n", "\n  rejected handshakes: screen 4\n"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, b.String())
		}
	}
	if strings.Contains(b.String(), "last reload") {
		t.Errorf("shows a reload that never happened:\n%s", b.String())
	}
}

func TestAgo(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Minute, "now"},
		{500 * time.Millisecond, "now"},
		{time.Second, "1 second ago"},
		{61 * time.Second, "1 minute, 1 second ago"},
		{2 * time.Hour, "2 hours ago"},
		{49*time.Hour + 3*time.Second, "2 days, 1 hour, 3 seconds ago"},
	} {
		if got := ago(showNow.Add(-tc.d), showNow); got != tc.want {
			t.Errorf("ago(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{
		{0, "0 bytes"}, {1, "1 byte"}, {1023, "1023 bytes"}, {1024, "1.00 KiB"},
		{5 << 20, "5.00 MiB"}, {3 << 30, "3.00 GiB"}, {1 << 41, "2.00 TiB"},
	} {
		if got := humanBytes(tc.n); got != tc.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// serveFake starts control servers for the given interfaces in a fresh
// socket directory.
func serveFake(t *testing.T, names ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	for _, n := range names {
		st := sampleStatus(n)
		s, err := control.Listen(control.SocketPath(dir, n), func() (control.Status, error) { return st, nil }, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
	}
	return dir
}

func TestShowJSON(t *testing.T) {
	dir := serveFake(t, "gm0", "gm1")
	// Flags before or after the interface name.
	for _, args := range [][]string{
		{"show", "--json", "--socket-dir", dir, "gm1"},
		{"show", "gm1", "--json", "--socket-dir", dir},
	} {
		r := gmtun(args...)
		if r.code != exitOK || r.stderr != "" {
			t.Fatalf("%q: %+v", args, r)
		}
		var got control.Status
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, r.stdout)
		}
		want := sampleStatus("gm1")
		if got.Interface != "gm1" || !got.LastReload.Equal(*want.LastReload) ||
			!reflect.DeepEqual(got.Peers[0].AllowedIPs, want.Peers[0].AllowedIPs) || got.Peers[0].TxBytes != want.Peers[0].TxBytes ||
			!reflect.DeepEqual(got.Drops, want.Drops) || !reflect.DeepEqual(got.Kernels, want.Kernels) {
			t.Errorf("%q: decoded %+v", args, got)
		}
		if !strings.Contains(r.stdout, `"last_handshake": "2026-05-01T10:57:59Z"`) {
			t.Errorf("last_handshake is not RFC 3339:\n%s", r.stdout)
		}
	}

	// Without a name: an array of every running interface, sorted.
	r := gmtun("show", "--json", "--socket-dir", dir)
	var all []control.Status
	if err := json.Unmarshal([]byte(r.stdout), &all); err != nil || r.code != exitOK {
		t.Fatalf("show --json: %v %+v", err, r)
	}
	if len(all) != 2 || all[0].Interface != "gm0" || all[1].Interface != "gm1" {
		t.Errorf("show --json lists %+v", all)
	}

	// Nothing running: an empty array, and no text.
	empty := filepath.Join(t.TempDir(), "none")
	if r := gmtun("show", "--json", "--socket-dir", empty); r.code != exitOK || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("show --json with nothing running: %+v", r)
	}
	if r := gmtun("show", "--socket-dir", empty); r.code != exitOK || r.stdout != "" || r.stderr != "" {
		t.Errorf("show with nothing running: %+v", r)
	}
}

func TestShowText(t *testing.T) {
	dir := serveFake(t, "gm0", "gm1")
	r := gmtun("show", "--socket-dir", dir)
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("show: %+v", r)
	}
	i0, i1 := strings.Index(r.stdout, "interface: gm0\n"), strings.Index(r.stdout, "\n\ninterface: gm1\n")
	if i0 != 0 || i1 < 0 || strings.Count(r.stdout, "peer: site-b\n") != 2 {
		t.Errorf("show of two interfaces:\n%s", r.stdout)
	}
	one := gmtun("show", "gm0", "--socket-dir", dir)
	if one.code != exitOK || !strings.HasPrefix(one.stdout, "interface: gm0\n") || strings.Contains(one.stdout, "gm1") {
		t.Errorf("show gm0:\n%+v", one)
	}
}

func TestShowErrors(t *testing.T) {
	dir := serveFake(t, "gm0")
	missing := control.SocketPath(dir, "gm7")
	wantFailure(t, gmtun("show", "gm7", "--socket-dir", dir), exitFailure,
		"show: interface gm7 is not running (no control socket "+missing+" or "+filepath.Join(dir, "gm7", "*.sock")+")")
	// A configuration name may be longer than an interface name.
	wantFailure(t, gmtun("show", "waytoolongname16", "--socket-dir", dir), exitFailure,
		"show: interface waytoolongname16 is not running (no control socket "+control.SocketPath(dir, "waytoolongname16")+
			" or "+filepath.Join(dir, "waytoolongname16", "*.sock")+")")

	// A socket left by a daemon that died.
	stale := control.SocketPath(dir, "gm8")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	wantFailure(t, gmtun("show", "gm8", "--socket-dir", dir), exitFailure,
		"show: interface gm8 is not running (stale control socket "+stale+")")

	// Listing all: the live interface is shown, the stale one reported.
	r := gmtun("show", "--socket-dir", dir)
	if r.code != exitFailure || !strings.HasPrefix(r.stdout, "interface: gm0\n") ||
		r.stderr != "gmtun: show: interface gm8 is not running (stale control socket "+stale+")\n" {
		t.Errorf("show with a stale socket: %+v", r)
	}

	if os.Geteuid() != 0 {
		locked := filepath.Join(t.TempDir(), "locked")
		os.Mkdir(locked, 0o000)
		wantFailure(t, gmtun("show", "--socket-dir", locked), exitFailure,
			"show: permission denied on "+locked+" (run as root)")
	}

	for _, name := range []string{"../etc", "a/b", ".", "..", "a b", "x:y"} {
		wantFailure(t, gmtun("show", name, "--socket-dir", dir), exitUsage, "show: invalid interface name \""+name+"\"")
	}
	wantFailure(t, gmtun("show", "gm0", "gm1"), exitUsage, `show: unexpected argument "gm1"; at most one interface name`)
	wantFailure(t, gmtun("show", "gm0", "--bogus"), exitUsage, "show: flag provided but not defined: -bogus; run 'gmtun show --help'")
	if r := gmtun("show", "gm0", "--help"); r.code != exitOK || !strings.HasPrefix(r.stdout, "Usage: gmtun show") {
		t.Errorf("show gm0 --help: %+v", r)
	}
}

// TestShowJSONDocumented keeps docs/OPERATIONS.md in step with the JSON
// field names and the drop reasons.
func TestShowJSONDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/OPERATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, v := range []any{control.Status{}, control.Peer{}, control.Offload{}, control.Kernel{}, control.Batches{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("OPERATIONS.md does not document JSON field %s.%s", typ.Name(), name)
			}
		}
	}
	for _, r := range tunnel.DropReasons() {
		if !strings.Contains(doc, "`"+r+"`") {
			t.Errorf("OPERATIONS.md does not document drop reason %s", r)
		}
	}
}

func TestBatchString(t *testing.T) {
	if got := batchString(control.Batches{}); got != "none yet" {
		t.Errorf("batchString(zero) = %q", got)
	}
	b := control.Batches{Calls: 4, Packets: 300, PacketsPerCall: 75, LanesPerKernelCall: 15.6, Nanos: 261000, NanosPerPacket: 870}
	if got, want := batchString(b), "75.0 packets/call, 15.6 of 16 lanes/kernel call, 870 ns/packet"; got != want {
		t.Errorf("batchString = %q, want %q", got, want)
	}
	b.SampledPackets, b.SampledCPUNanos, b.CPUNanosPerPacket = 75, 39000, 520
	if got, want := batchString(b), "75.0 packets/call, 15.6 of 16 lanes/kernel call, 870 ns/packet (CPU 520)"; got != want {
		t.Errorf("batchString = %q, want %q", got, want)
	}
}
