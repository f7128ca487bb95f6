package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/internal/testenv"
)

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

func TestSystemdUnit(t *testing.T) {
	src, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	d := unitDirectives(t, src)
	for key, want := range map[string]string{
		"Service.Type":                     "notify",
		"Service.NotifyAccess":             "main",
		"Service.ExecReload":               "/bin/kill -HUP $MAINPID",
		"Service.Restart":                  "on-failure",
		"Service.RestartPreventExitStatus": fmt.Sprintf("%d %d", exitUsage, exitConfig),
		"Service.RuntimeDirectory":         "gmtun",
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
		"Install.WantedBy":                 "multi-user.target",
	} {
		if got := d[key]; len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want exactly %q", key, got, want)
		}
	}
	for _, key := range []string{"Service.PrivateDevices", "Service.PrivateUsers", "Service.WatchdogSec"} {
		if v, ok := d[key]; ok {
			t.Errorf("%s = %q must not be set (see the comments in the unit)", key, v)
		}
	}

	// The command lines must parse with this binary's command table.
	for _, key := range []string{"Service.ExecStartPre", "Service.ExecStart"} {
		vals := d[key]
		if len(vals) != 1 {
			t.Fatalf("%s = %q, want one command", key, vals)
		}
		argv := strings.Fields(strings.ReplaceAll(vals[0], "%i", "gm0"))
		if len(argv) < 2 || argv[0] != "/usr/local/bin/gmtun" {
			t.Fatalf("%s = %q, want /usr/local/bin/gmtun COMMAND …", key, vals[0])
		}
		c, ok := commands[argv[1]]
		if !ok {
			t.Logf("%s: command %q is not in this build yet; its flags are not checked", key, argv[1])
			continue
		}
		fs, _ := newFlagSet(&env{}, c)
		if err := fs.Parse(argv[2:]); err != nil || fs.NArg() != 0 {
			t.Errorf("%s: %q does not parse: %v (args left: %q)", key, vals[0], err, fs.Args())
		}
		if cfg := fs.Lookup("config"); cfg == nil || cfg.Value.String() != "/etc/gmtun/gm0.toml" {
			t.Errorf("%s: --config is not /etc/gmtun/%%i.toml", key)
		}
	}
}

// TestSystemdAnalyzeVerify runs systemd-analyze verify on a copy of the
// unit whose gmtun path points at an existing executable (verify insists
// that ExecStart binaries exist). verify reports many problems only as
// warnings with exit status 0, so any output fails the test.
func TestSystemdAnalyzeVerify(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		testenv.Missing(t, "systemd-analyze not installed (apt-get install systemd); the unit was not verified")
	}
	src, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "gmtun@.service")
	if err := os.WriteFile(unit, bytes.ReplaceAll(src, []byte("/usr/local/bin/gmtun"), []byte(self)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool, "verify", "--man=no", unit)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
