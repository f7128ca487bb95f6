//go:build unix

package config

import (
	"errors"
	"strings"
	"testing"
)

// TestMetricsListen: metrics_listen takes IP:port or unix:/path; anything
// else is an *Error at the key's line naming the key.
func TestMetricsListen(t *testing.T) {
	f := newFixture(t)
	_, cfg, err := f.load(t, "gm0.toml", baseDoc)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Interface.MetricsListen.Enabled() {
		t.Fatalf("metrics on without metrics_listen: %+v", cfg.Interface.MetricsListen)
	}
	for in, want := range map[string]MetricsListen{
		"127.0.0.1:9586":         {"tcp", "127.0.0.1:9586"},
		"[::1]:9586":             {"tcp", "[::1]:9586"},
		"[::ffff:127.0.0.1]:1":   {"tcp", "127.0.0.1:1"},
		"0.0.0.0:9586":           {"tcp", "0.0.0.0:9586"},
		"unix:/run/gmtun/m.sock": {"unix", "/run/gmtun/m.sock"},
	} {
		doc := edit(t, baseDoc, "listen_port = 51900\n", "listen_port = 51900\nmetrics_listen = \""+in+"\"\n")
		_, cfg, err := f.load(t, "gm0.toml", doc)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := cfg.Interface.MetricsListen; got != want || !got.Enabled() {
			t.Errorf("%q: %+v, want %+v", in, got, want)
		}
		if in == want.Address || in == "unix:"+want.Address {
			if s := cfg.Interface.MetricsListen.String(); s != in {
				t.Errorf("%q: String() = %q", in, s)
			}
		}
	}
	for in, msg := range map[string]string{
		`"localhost:9586"`:                         "is not IP:port",
		`"127.0.0.1"`:                              "is not IP:port",
		`"127.0.0.1:0"`:                            "has port 0",
		`"127.0.0.1:70000"`:                        "is not IP:port",
		`"[ff02::1]:9586"`:                         "not a unicast address",
		`"[fe80::1%eth0]:9586"`:                    "not a unicast address without zone",
		`"unix:relative.sock"`:                     "needs an absolute path",
		`"unix:/` + strings.Repeat("a", 120) + `"`: "at most 107",
		`9586`: "must be a string",
	} {
		doc := edit(t, baseDoc, "listen_port = 51900\n", "listen_port = 51900\nmetrics_listen = "+in+"\n")
		path, _, err := f.load(t, "gm0.toml", doc)
		var ce *Error
		if !errors.As(err, &ce) || ce.File != path || ce.Line != 5 || ce.Key != "interface.metrics_listen" || !strings.Contains(err.Error(), msg) {
			t.Errorf("metrics_listen = %s: %v; want %s:5: interface.metrics_listen ... %s", in, err, path, msg)
		}
	}
}
