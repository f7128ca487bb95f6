//go:build unix

package config

import (
	"strings"
	"testing"
)

// TestFailClosed checks the fail_closed key: on by default, off only when
// the file says so, and a non-boolean named by file, line and key.
func TestFailClosed(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, line string
		want       bool
	}{
		{"default", "", true},
		{"on", "fail_closed = true\n", true},
		{"off", "fail_closed = false\n", false},
	} {
		_, cfg, err := f.load(t, "gm0.toml", edit(t, baseDoc, "listen_port", tc.line+"listen_port"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cfg.Interface.FailClosed != tc.want {
			t.Errorf("%s: FailClosed = %v, want %v", tc.name, cfg.Interface.FailClosed, tc.want)
		}
	}
	path, _, err := f.load(t, "gm0.toml", edit(t, baseDoc, "listen_port", "fail_closed = \"yes\"\nlisten_port"))
	want := path + `:4: key "interface.fail_closed": must be true or false, not a string`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %s", err, want)
	}
}
