//go:build unix

package config

import (
	"strings"
	"testing"
)

// TestRunToCompletion checks the run_to_completion key: "auto" by
// default and when spelled so, which resolves from the CPU count; true and
// false whatever the CPUs; anything else named by file, line and key.
func TestRunToCompletion(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, line    string
		auto          bool
		on1, on2, on8 bool // resolved for 1, 2 and 8 CPUs
	}{
		{"default", "", true, true, true, false},
		{"auto", "run_to_completion = \"auto\"\n", true, true, true, false},
		{"on", "run_to_completion = true\n", false, true, true, true},
		{"off", "run_to_completion = false\n", false, false, false, false},
	} {
		_, cfg, err := f.load(t, "gm0.toml", edit(t, baseDoc, "listen_port", tc.line+"listen_port"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		ifc := &cfg.Interface
		if ifc.RunToCompletionAuto != tc.auto {
			t.Errorf("%s: RunToCompletionAuto = %v, want %v", tc.name, ifc.RunToCompletionAuto, tc.auto)
		}
		for _, c := range []struct {
			cpus int
			want bool
		}{{1, tc.on1}, {2, tc.on2}, {8, tc.on8}} {
			if got := ifc.AutoRunToCompletion(c.cpus); got != c.want {
				t.Errorf("%s: AutoRunToCompletion(%d) = %v, want %v", tc.name, c.cpus, got, c.want)
			}
		}
	}
	for _, tc := range []struct{ value, want string }{
		{`"yes"`, `must be true, false or "auto", got "yes"`},
		{`1`, `must be true, false or "auto", not an integer`},
	} {
		path, _, err := f.load(t, "gm0.toml", edit(t, baseDoc, "listen_port", "run_to_completion = "+tc.value+"\nlisten_port"))
		want := path + `:4: key "interface.run_to_completion": ` + tc.want
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", tc.value, err, want)
		}
	}
}
