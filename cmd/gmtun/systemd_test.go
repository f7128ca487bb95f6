package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/control"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/internal/testenv"
)

// The unit's behaviour rests on three rules of systemd.service(5) and
// systemd.exec(5) (systemd 252, Debian 12), quoted in the unit too:
//
//   - RestartPreventExitStatus= lists exit statuses "that, when returned
//     by the main service process, will prevent automatic service
//     restarts": an ExecStartPre= check that fails is restarted every
//     RestartSec= regardless, so the unit has none and `gmtun up` itself
//     exits 3 on a bad configuration.
//   - ExecReload= should be "a command that not only triggers a
//     configuration reload of the daemon, but also synchronously waits for
//     it to complete"; its exit status is what `systemctl reload` reports.
//   - For RuntimeDirectory=, "the innermost subdirectories are removed when
//     the unit is stopped": with gmtun/%i only the stopped instance's
//     directory goes.
//
// This machine's systemd is not PID 1 (`systemctl is-system-running` says
// offline in the build containers), so each rule is simulated in-process:
// the unit's own command lines run through this binary's command table
// against fake daemons on control sockets, and the directory removal is
// done by the test as systemd would.

const unitPath = "../../systemd/gmtun@.service"

// unitDirectives parses a unit file into "Section.Key" → values.
func unitDirectives(t *testing.T, src []byte) map[string][]string {
	t.Helper()
	d := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s:%d: not a directive: %q", unitPath, n, line)
			}
			// systemd has no trailing comments: "# …" would become part
			// of the value.
			if strings.Contains(v, " #") || strings.Contains(v, "\t#") || strings.HasPrefix(v, "#") {
				t.Errorf("%s:%d: trailing comment in %q; systemd does not strip it", unitPath, n, line)
			}
			d[section+"."+k] = append(d[section+"."+k], v)
		}
	}
	return d
}

func readUnit(t *testing.T) map[string][]string {
	t.Helper()
	src, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	return unitDirectives(t, src)
}

// unitCommand returns the argv of an Exec directive for instance gm0,
// checking that it runs /usr/local/bin/gmtun (rewritten by make install).
func unitCommand(t *testing.T, d map[string][]string, key string) []string {
	t.Helper()
	vals := d[key]
	if len(vals) != 1 {
		t.Fatalf("%s = %q, want one command", key, vals)
	}
	argv := strings.Fields(strings.ReplaceAll(vals[0], "%i", "gm0"))
	if len(argv) < 2 || argv[0] != "/usr/local/bin/gmtun" {
		t.Fatalf("%s = %q, want /usr/local/bin/gmtun COMMAND …", key, vals[0])
	}
	return argv
}

func TestSystemdUnit(t *testing.T) {
	d := readUnit(t)
	for key, want := range map[string]string{
		"Service.Type":                     "notify",
		"Service.NotifyAccess":             "main",
		"Service.ExecStart":                "/usr/local/bin/gmtun up %i",
		"Service.ExecReload":               "/usr/local/bin/gmtun reload %i",
		"Service.Restart":                  "on-failure",
		"Service.RestartPreventExitStatus": fmt.Sprintf("%d %d", exitUsage, exitConfig),
		"Service.RuntimeDirectory":         "gmtun/%i",
		"Service.RuntimeDirectoryMode":     "0700",
		"Service.UMask":                    "0077",
		"Service.CapabilityBoundingSet":    "CAP_NET_ADMIN CAP_NET_BIND_SERVICE",
		"Service.NoNewPrivileges":          "yes",
		"Service.LimitCORE":                "0",
		"Service.ProtectSystem":            "strict",
		"Service.ProtectHome":              "yes",
		"Service.PrivateTmp":               "yes",
		"Service.DevicePolicy":             "closed",
		"Service.DeviceAllow":              "/dev/net/tun rw",
		"Unit.Documentation":               "file:///usr/local/share/doc/gmtun/OPERATIONS.md",
		"Install.WantedBy":                 "multi-user.target",
	} {
		if got := d[key]; len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want exactly %q", key, got, want)
		}
	}
	// ExecStartPre= would loop: RestartPreventExitStatus= covers the main
	// process only (systemd.service(5)).
	for _, key := range []string{"Service.ExecStartPre", "Service.PrivateDevices", "Service.PrivateUsers", "Service.WatchdogSec"} {
		if v, ok := d[key]; ok {
			t.Errorf("%s = %q must not be set (see the comments in the unit)", key, v)
		}
	}
	// The command lines parse with this binary's command table, with the
	// instance name as NAME.
	for _, key := range []string{"Service.ExecStart", "Service.ExecReload"} {
		argv := unitCommand(t, d, key)
		c, ok := commands[argv[1]]
		if !ok {
			t.Fatalf("%s: command %q is not in the command table", key, argv[1])
		}
		fs, _ := newFlagSet(&env{}, c)
		if err := fs.Parse(argv[2:]); err != nil || !slices.Equal(fs.Args(), []string{"gm0"}) {
			t.Errorf("%s: %q does not parse to NAME gm0: %v (args %q)", key, d[key][0], err, fs.Args())
		}
	}
}

// renderUnit runs `make install-unit` into a scratch DESTDIR and returns
// the DESTDIR and the installed unit's path.
func renderUnit(t *testing.T, prefix string) (destdir, unit string) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		testenv.Missing(t, "make not installed (apt-get install make); the installed unit was not checked")
	}
	destdir = t.TempDir()
	cmd := exec.Command("make", "-s", "-C", "../..", "install-unit", "PREFIX="+prefix, "DESTDIR="+destdir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install-unit: %v\n%s", err, out)
	}
	return destdir, filepath.Join(destdir, "etc/systemd/system/gmtun@.service")
}

// TestSystemdInstall: `make install PREFIX=/usr` installs a unit whose
// commands run PREFIX/bin/gmtun and whose Documentation= file exists.
func TestSystemdInstall(t *testing.T) {
	for _, prefix := range []string{"/usr", "/opt/gmtun"} {
		destdir, unit := renderUnit(t, prefix)
		src, err := os.ReadFile(unit)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(src, []byte("/usr/local")) {
			t.Errorf("PREFIX=%s: the installed unit still names /usr/local", prefix)
		}
		d := unitDirectives(t, src)
		if got := d["Service.ExecStart"]; len(got) != 1 || got[0] != prefix+"/bin/gmtun up %i" {
			t.Errorf("PREFIX=%s: ExecStart = %q", prefix, got)
		}
		if got := d["Service.ExecReload"]; len(got) != 1 || got[0] != prefix+"/bin/gmtun reload %i" {
			t.Errorf("PREFIX=%s: ExecReload = %q", prefix, got)
		}
		docs := d["Unit.Documentation"]
		if len(docs) != 1 || !strings.HasPrefix(docs[0], "file://"+prefix+"/share/doc/gmtun/") {
			t.Fatalf("PREFIX=%s: Documentation = %q", prefix, docs)
		}
		if _, err := os.Stat(filepath.Join(destdir, strings.TrimPrefix(docs[0], "file://"))); err != nil {
			t.Errorf("PREFIX=%s: the Documentation= file was not installed: %v", prefix, err)
		}
	}
}

// TestSystemdAnalyzeVerify runs systemd-analyze verify on the unit as
// make install writes it, with the gmtun path pointing at an existing
// executable (verify insists that ExecStart binaries exist). verify
// reports many problems only as warnings with exit status 0, so any
// output fails the test.
func TestSystemdAnalyzeVerify(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		testenv.Missing(t, "systemd-analyze not installed (apt-get install systemd); the unit was not verified")
	}
	_, installed := renderUnit(t, "/usr")
	src, err := os.ReadFile(installed)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "gmtun@.service")
	if err := os.WriteFile(unit, bytes.ReplaceAll(src, []byte("/usr/bin/gmtun"), []byte(self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "verify", "--man=no", unit).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// unitEnv runs the unit's commands in-process for instance gm0: NAME
// resolves in confDir, the control sockets live under runDir.
type unitEnv struct {
	confDir, runDir string
}

func newUnitEnv(t *testing.T) *unitEnv {
	t.Helper()
	return &unitEnv{confDir: t.TempDir(), runDir: filepath.Join(t.TempDir(), "run")}
}

func (u *unitEnv) run(argv []string) result {
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string {
		switch k {
		case envConfigDir:
			return u.confDir
		case envSocketDir:
			return u.runDir
		}
		return ""
	}}
	return result{run(e, argv[1:]), out.String(), errb.String()}
}

// writeGm0 writes a valid gm0.toml (with its key file) into confDir, or
// one with an invalid mtu on line 5.
func (u *unitEnv) writeGm0(t *testing.T, valid bool) string {
	t.Helper()
	fixture := upFixture(t, "")
	src, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := os.ReadFile(filepath.Join(filepath.Dir(fixture), "gm9.key"))
	if err := os.WriteFile(filepath.Join(u.confDir, "gm9.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	src = bytes.Replace(src, []byte("[interface]\n"), []byte("[interface]\nname = \"gm0\"\n"), 1)
	if !valid {
		src = bytes.Replace(src, []byte("address = "), []byte("mtu = 9\naddress = "), 1)
	}
	path := filepath.Join(u.confDir, "gm0.toml")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeDaemon serves a control socket where `gmtun up gm0` would (under
// runDir/gm0) and counts the requests.
type fakeDaemon struct {
	srv      *control.Server
	reloads  atomic.Int64
	stops    atomic.Int64
	reloadFn func() control.ReloadResult
}

func (u *unitEnv) startDaemon(t *testing.T, instance string) *fakeDaemon {
	t.Helper()
	f := &fakeDaemon{reloadFn: func() control.ReloadResult { return control.ReloadResult{} }}
	var err error
	f.srv, err = control.Serve(control.SocketPath(filepath.Join(u.runDir, instance), instance), control.Handlers{
		Status: func() (control.Status, error) {
			return control.Status{Interface: instance, ConfigFile: filepath.Join(u.confDir, instance+".toml")}, nil
		},
		Reload: func() (control.ReloadResult, error) {
			f.reloads.Add(1)
			return f.reloadFn(), nil
		},
		Stop: func() error {
			f.stops.Add(1)
			go func() { time.Sleep(100 * time.Millisecond); f.srv.Close() }() // shutting down takes a while
			return nil
		},
	}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.srv.Close() })
	return f
}

// TestSystemdStartBadConfigNoRestartLoop: ExecStart on an invalid
// configuration exits with a status RestartPreventExitStatus= lists, with
// one line naming file, line and key, so systemd does not restart it; a
// missing file likewise. (An ExecStartPre= check would be retried every
// 5 s: the unit has none, TestSystemdUnit.)
func TestSystemdStartBadConfigNoRestartLoop(t *testing.T) {
	d := readUnit(t)
	argv := unitCommand(t, d, "Service.ExecStart")
	var prevent []int
	for _, f := range strings.Fields(d["Service.RestartPreventExitStatus"][0]) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		prevent = append(prevent, n)
	}
	u := newUnitEnv(t)
	r := u.run(argv) // no gm0.toml yet
	if !slices.Contains(prevent, r.code) || !strings.Contains(r.stderr, filepath.Join(u.confDir, "gm0.toml")+": cannot open the configuration") {
		t.Errorf("missing configuration: exit %d (restart prevented for %v), stderr %q", r.code, prevent, r.stderr)
	}
	path := u.writeGm0(t, false)
	r = u.run(argv)
	want := "gmtun: " + path + `:5: key "interface.mtu": `
	if !slices.Contains(prevent, r.code) || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("invalid configuration: exit %d (restart prevented for %v), stderr %q, want one line %q…", r.code, prevent, r.stderr, want)
	}
	if _, err := os.Stat(filepath.Join(u.runDir, "gm0")); err == nil {
		t.Error("a start with a bad configuration created the runtime directory's socket dir")
	}
}

// TestSystemdReload: ExecReload validates first — an invalid file fails
// with 3 and its line and the daemon is not asked — then asks the daemon
// and waits for its answer, whose failure fails the reload too.
func TestSystemdReload(t *testing.T) {
	argv := unitCommand(t, readUnit(t), "Service.ExecReload")
	u := newUnitEnv(t)
	path := u.writeGm0(t, false)

	// Not running: fails (after validating).
	u.writeGm0(t, true)
	if r := u.run(argv); r.code != exitFailure || !strings.Contains(r.stderr, "reload: gm0 is not running") {
		t.Errorf("reload without a daemon: %+v", r)
	}

	f := u.startDaemon(t, "gm0")
	u.writeGm0(t, false)
	r := u.run(argv)
	if r.code != exitConfig || !strings.HasPrefix(r.stderr, "gmtun: "+path+`:5: key "interface.mtu"`) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("reload of an invalid file: %+v", r)
	}
	if n := f.reloads.Load(); n != 0 {
		t.Fatalf("the daemon was asked to reload an invalid file (%d requests)", n)
	}

	u.writeGm0(t, true)
	f.reloadFn = func() control.ReloadResult {
		time.Sleep(200 * time.Millisecond) // the command waits for the outcome
		return control.ReloadResult{Added: []string{"site-c"}, RestartNeeded: []string{"interface.listen_port"}}
	}
	start := time.Now()
	r = u.run(argv)
	if r.code != exitOK || r.stdout != "gm0: reloaded: 1 peer(s) added, 0 removed, 0 updated\n" ||
		!strings.Contains(r.stderr, "warning: interface.listen_port changed; the running value is kept until gmtun gm0 restarts") {
		t.Errorf("reload: %+v", r)
	}
	if el := time.Since(start); el < 200*time.Millisecond || f.reloads.Load() != 1 {
		t.Errorf("reload returned after %v with %d requests; it must wait for the daemon's answer", el, f.reloads.Load())
	}

	f.reloadFn = func() control.ReloadResult {
		return control.ReloadResult{Error: "interface.id changed; restart gmtun to apply it; nothing was changed"}
	}
	wantFailure(t, u.run(argv), exitFailure, "reload: gm0: interface.id changed; restart gmtun to apply it; nothing was changed")
}

// TestSystemdDown: `gmtun down NAME` asks the daemon to stop and returns
// once its socket is gone (the last step of its shutdown).
func TestSystemdDown(t *testing.T) {
	u := newUnitEnv(t)
	f := u.startDaemon(t, "gm0")
	start := time.Now()
	r := u.run([]string{"gmtun", "down", "gm0"})
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "gm0: stopped") || f.stops.Load() != 1 {
		t.Errorf("down: %+v (stop requests %d)", r, f.stops.Load())
	}
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Errorf("down returned after %v, before the daemon was gone", el)
	}
	if _, err := os.Lstat(f.srv.Path()); !os.IsNotExist(err) {
		t.Errorf("socket still there: %v", err)
	}
	r = u.run([]string{"gmtun", "down", "gm0"})
	if r.code != exitFailure || !strings.Contains(r.stderr, "down: gm0 is not running") {
		t.Errorf("second down: %+v", r)
	}
	wantFailure(t, u.run([]string{"gmtun", "down"}), exitUsage, "down: give NAME (for "+u.confDir+"/NAME.toml) or --config FILE")
}

// TestSystemdPerInstanceRuntimeDir: stopping one instance removes only its
// runtime directory (systemd.exec(5), RuntimeDirectory=gmtun/%i), and the
// other instance stays reachable by its configuration or interface name.
func TestSystemdPerInstanceRuntimeDir(t *testing.T) {
	u := newUnitEnv(t)
	a := u.startDaemon(t, "gm0")
	u.startDaemon(t, "gm1")
	// systemctl stop gmtun@gm0: the daemon exits, systemd removes the
	// innermost directory of RuntimeDirectory=gmtun/%i.
	a.srv.Close()
	if err := os.RemoveAll(filepath.Join(u.runDir, "gm0")); err != nil {
		t.Fatal(err)
	}
	r := u.run([]string{"gmtun", "show", "gm1"})
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "interface: gm1\n") {
		t.Errorf("show gm1 after gm0 stopped: %+v", r)
	}
	r = u.run([]string{"gmtun", "show"})
	if r.code != exitOK || r.stdout != "interface: gm1\n"+strings.TrimPrefix(r.stdout, "interface: gm1\n") || strings.Contains(r.stdout, "gm0") {
		t.Errorf("show all after gm0 stopped: %+v", r)
	}
	r = u.run([]string{"gmtun", "show", "gm0"})
	if r.code != exitFailure || !strings.Contains(r.stderr, "interface gm0 is not running") {
		t.Errorf("show gm0 after it stopped: %+v", r)
	}
}

// TestVerbNames: NAME means CONFIG_DIR/NAME.toml for every verb; a path or
// a .toml name is refused with a hint; --config FILE still works.
func TestVerbNames(t *testing.T) {
	u := newUnitEnv(t)
	path := u.writeGm0(t, true)
	if r := u.run([]string{"gmtun", "check", "gm0"}); r.code != exitOK || !strings.HasPrefix(r.stdout, path+": ok\n") {
		t.Errorf("check gm0: %+v", r)
	}
	if r := u.run([]string{"gmtun", "check", "--config", path, "--quiet"}); r.code != exitOK || r.stdout != "" {
		t.Errorf("check --config: %+v", r)
	}
	for _, verb := range []string{"up", "down", "reload", "check", "showconf"} {
		wantFailure(t, u.run([]string{"gmtun", verb, "gm0.toml"}), exitUsage,
			verb+`: "gm0.toml" ends in .toml; give NAME for /etc/gmtun/NAME.toml, or the file with --config FILE`)
		wantFailure(t, u.run([]string{"gmtun", verb, "etc/gm0"}), exitUsage,
			verb+`: "etc/gm0" is a path; give a file with --config FILE, or NAME for /etc/gmtun/NAME.toml`)
	}
}

// TestShowconf: the effective configuration with defaults filled in, no
// key material, and a valid file with the same meaning.
func TestShowconf(t *testing.T) {
	u := newUnitEnv(t)
	path := u.writeGm0(t, true)
	psk := filepath.Join(u.confDir, "site-b.psk")
	pskLine := "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I=\n"
	if err := os.WriteFile(psk, []byte(pskLine), 0o600); err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(path)
	src = bytes.Replace(src, []byte("[interface]\n"), []byte("[interface]\nmtu = \"auto\"\npost_up = [[\"/bin/true\", \"%i\"]]\nmetrics_listen = \"127.0.0.1:9586\"\n"), 1)
	src = append(src, []byte("preshared_key_file = \"site-b.psk\"\n\n[[peer]]\nname = \"site-c\"\npublic_key = \""+
		secondPub(t)+"\"\nendpoint = \"gw.example.net:51999\"\nallowed_ips = [\"198.19.9.3/32\"]\n")...)
	os.WriteFile(path, src, 0o600)
	r := u.run([]string{"gmtun", "showconf", "gm0"})
	if r.code != exitOK {
		t.Fatalf("showconf: %+v", r)
	}
	key, _ := os.ReadFile(filepath.Join(u.confDir, "gm9.key"))
	if strings.Contains(r.stdout, strings.TrimSpace(string(key))) || strings.Contains(r.stdout, strings.TrimSpace(pskLine)) {
		t.Fatalf("showconf printed key material:\n%s", r.stdout)
	}
	for _, want := range []string{"name = \"gm0\"\n", "log_format = \"text\"\n", "table = \"auto\"\n",
		"fail_closed = true\n", "roaming = true\n", "mtu = \"auto\"\n", `post_up = [["/bin/true", "%i"]]`,
		`pre_up = []`, "metrics_listen = \"127.0.0.1:9586\"\n", "endpoint = \"gw.example.net:51999\"\n", "preshared_key_file = \"" + psk + "\" # (redacted", "# public key: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("showconf lacks %q:\n%s", want, r.stdout)
		}
	}
	// Every documented key is printed (a key added to the schema without
	// showconf support fails here).
	for _, k := range config.Keys {
		if !strings.Contains(r.stdout, "\n"+k.Name+" = ") && !strings.Contains(r.stdout, "# "+k.Name+" absent") {
			t.Errorf("showconf does not print %s.%s", k.Section, k.Name)
		}
	}
	// The output is itself a valid configuration: showconf of it prints
	// the same (apart from the header naming the file).
	again := filepath.Join(u.confDir, "again.toml")
	os.WriteFile(again, []byte(r.stdout), 0o600)
	r2 := u.run([]string{"gmtun", "showconf", "again"})
	_, body1, _ := strings.Cut(r.stdout, "\n")
	_, body2, _ := strings.Cut(r2.stdout, "\n")
	if r2.code != exitOK || body1 != body2 {
		t.Errorf("showconf of its own output differs:\n%s\n---\n%s (%s)", body1, body2, r2.stderr)
	}
	u.writeGm0(t, false)
	if r := u.run([]string{"gmtun", "showconf", "gm0"}); r.code != exitConfig || r.stdout != "" {
		t.Errorf("showconf of an invalid file: %+v", r)
	}
}

// TestVersionFlag: `gmtun --version` is `gmtun version`.
func TestVersionFlag(t *testing.T) {
	want := gmtun("version")
	for _, f := range []string{"--version", "-version", "-V"} {
		if r := gmtun(f); r.code != exitOK || r.stdout != want.stdout || !strings.HasPrefix(r.stdout, "gmtun ") {
			t.Errorf("gmtun %s = %+v, want %q", f, r, want.stdout)
		}
	}
}

// secondPub is a public key for a second peer.
func secondPub(t *testing.T) string {
	t.Helper()
	k, err := handshake.GeneratePrivateKey(&seedReader{next: 150})
	if err != nil {
		t.Fatal(err)
	}
	return k.Public().String()
}
