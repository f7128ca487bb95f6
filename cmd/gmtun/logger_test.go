package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/config"
)

// TestLogText: key=value lines with time, level, msg and iface; the
// level follows SetLevel; the tunnel's lines go through the same logger.
func TestLogText(t *testing.T) {
	var b bytes.Buffer
	l := newLogger(&b, slog.LevelInfo, "text", "gm0", false)
	l.Debugf("hidden %d", 1)
	l.Infof("reloading %s", "/etc/gmtun/gm0.toml")
	l.Slog().Info("peer added", "peer", "site-b")
	l.Errorf("bad")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		`^time=\S+ level=INFO msg="reloading /etc/gmtun/gm0.toml" iface=gm0$`,
		`^time=\S+ level=INFO msg="peer added" iface=gm0 peer=site-b$`,
		`^time=\S+ level=ERROR msg=bad iface=gm0$`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %s", i, lines[i], re)
		}
	}
	b.Reset()
	l.SetLevel(slog.LevelDebug)
	l.Debugf("shown")
	l.tunnelLogger().Verbosef("%s - sending handshake initiation", "peer(site-b)")
	if got := b.String(); !strings.Contains(got, "level=DEBUG msg=shown iface=gm0\n") ||
		!strings.Contains(got, `level=DEBUG msg="peer(site-b) - sending handshake initiation" iface=gm0`) {
		t.Errorf("after SetLevel(debug): %q", got)
	}
}

// TestLogJSON: log_format = "json" writes one JSON object per line with
// the documented keys, diagnostics with peer, cause and hint.
func TestLogJSON(t *testing.T) {
	var b bytes.Buffer
	l := newLogger(&b, slog.LevelInfo, "json", "gm0", false)
	l.Warnf("reload: %s changed", "interface.listen_port")
	l.tunnelLogger().Slog.Warn("handshake failed: pre-shared key mismatch", "peer", "site-b", "cause", "select_decrypt", "hint", "the pre-shared keys differ")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	var recs []map[string]any
	for _, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", line, err)
		}
		recs = append(recs, m)
	}
	if r := recs[0]; r["level"] != "WARN" || r["msg"] != "reload: interface.listen_port changed" || r["iface"] != "gm0" || r["time"] == nil {
		t.Errorf("record 0 = %v", r)
	}
	if r := recs[1]; r["peer"] != "site-b" || r["cause"] != "select_decrypt" || r["hint"] != "the pre-shared keys differ" {
		t.Errorf("record 1 = %v", r)
	}
}

// TestLogJournal: under systemd the time is left out (the journal adds
// its own) and every line starts with its sd-daemon priority, in both
// formats.
func TestLogJournal(t *testing.T) {
	var b bytes.Buffer
	j := newLogger(&b, slog.LevelDebug, "text", "gm0", true)
	j.Debugf("d")
	j.Infof("i")
	j.Warnf("w")
	j.Slog().With("peer", "x").Error("e")
	want := "<7>level=DEBUG msg=d iface=gm0\n<6>level=INFO msg=i iface=gm0\n<4>level=WARN msg=w iface=gm0\n<3>level=ERROR msg=e iface=gm0 peer=x\n"
	if b.String() != want {
		t.Errorf("journal log:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	newLogger(&b, slog.LevelInfo, "json", "gm0", true).Infof("up")
	if got := b.String(); got != `<6>{"level":"INFO","msg":"up","iface":"gm0"}`+"\n" {
		t.Errorf("journal JSON line %q", got)
	}
}

// TestLogFormatFromConfig: runUp takes log_format from the file (an
// invalid one is a configuration error, exit 3, before anything starts).
func TestLogFormatFromConfig(t *testing.T) {
	path := upFixture(t, `log_format = "xml"`+"\n")
	var stderr bytes.Buffer
	code := run(&env{stderr: &stderr, getenv: func(string) string { return "" }}, []string{"up", "--config", path})
	if code != exitConfig || !strings.Contains(stderr.String(), `key "interface.log_format": must be "text" or "json"`) {
		t.Errorf("exit %d, %q", code, stderr.String())
	}
	if _, err := config.LoadForCheck(upFixture(t, `log_format = "json"`+"\n")); err != nil {
		t.Errorf("log_format = json: %v", err)
	}
}
