package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNetnsVerbs runs `gmtun reload` and `gmtun down` against a real
// daemon in a namespace: a reload of a valid file waits for the daemon and
// reports the settings that need a restart, which `show` then lists; a
// reload of an invalid file exits 3 with one line and leaves the daemon
// untouched (no reload recorded); down stops the daemon (exit 0, the
// interface gone) and returns only once it is gone.
func TestNetnsVerbs(t *testing.T) {
	requireNetns(t)
	bin := testBinary(t)
	_, a, b := pair(t, bin, nil, false)
	a.ping(b.inner4, 2)
	cfg := filepath.Join(a.dir, "gm.toml")
	verb := func(args ...string) (code int, stdout, stderr string) {
		var o, e bytes.Buffer
		cmd := exec.Command(bin, append(args, "--config", cfg, "--socket-dir", a.sockDir)...)
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, o.String(), e.String()
	}

	// A changed listen_port: applied as far as it can be, listed as
	// pending until a restart.
	src, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, bytes.Replace(src, fmt.Appendf(nil, "listen_port = %d\n", nsPort), fmt.Appendf(nil, "listen_port = %d\n", nsPort+1), 1), 0o600)
	code, out, errs := verb("reload")
	if code != 0 || !strings.Contains(out, "reloaded: 0 peer(s) added, 0 removed, 0 updated") ||
		!strings.Contains(errs, "warning: interface.listen_port changed") {
		t.Fatalf("reload: exit %d\n%s%s\nlog:\n%s", code, out, errs, a.log)
	}
	st := a.show()
	if !slices.Equal(st.PendingRestart, []string{"interface.listen_port"}) || st.LastReload == nil || st.LastReloadError != "" {
		t.Errorf("after the reload: pending %q, last reload %v %q", st.PendingRestart, st.LastReload, st.LastReloadError)
	}
	if text := a.lab.run(bin, "show", a.ifname, "--socket-dir", a.sockDir); !strings.Contains(text, "pending restart: interface.listen_port") {
		t.Errorf("show does not list the pending restart:\n%s", text)
	}
	last := *st.LastReload

	// An invalid file: exit 3, one line, the daemon not asked.
	os.WriteFile(cfg, append(src, []byte("[[peer]]\nname = 7\n")...), 0o600)
	code, out, errs = verb("reload")
	if code != exitConfig || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "gmtun: "+cfg+":") {
		t.Errorf("reload of an invalid file: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if st := a.show(); st.LastReload == nil || !st.LastReload.Equal(last) {
		t.Errorf("the daemon reloaded an invalid file: last reload %v, before %v", st.LastReload, last)
	}
	a.ping(b.inner4, 2)

	// down: returns once the daemon is gone, which exited with 0.
	code, out, errs = verb("down")
	if code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("down: exit %d %s%s", code, out, errs)
	}
	select {
	case <-a.done:
	case <-time.After(2 * time.Second):
		t.Fatal("the daemon still runs after gmtun down returned")
	}
	if a.exitErr != nil {
		t.Errorf("the daemon exited with %v after gmtun down, want 0", a.exitErr)
	}
	if _, err := a.try("ip", "link", "show", a.ifname); err == nil {
		t.Errorf("interface %s still exists after gmtun down", a.ifname)
	}
	if !strings.Contains(a.log.String(), "stop requested on the control socket") {
		t.Errorf("log lacks the stop request:\n%s", a.log)
	}
}
