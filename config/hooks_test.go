package config

import (
	"slices"
	"strings"
	"testing"
)

// loadInterface loads baseDoc with extra lines added to [interface].
func loadInterface(t *testing.T, extra string) (*Config, error) {
	t.Helper()
	f := newFixture(t)
	doc := strings.Replace(baseDoc, "address = [", extra+"\naddress = [", 1)
	_, cfg, err := f.load(t, "gm0.toml", doc)
	return cfg, err
}

func TestHooks(t *testing.T) {
	cfg, err := loadInterface(t, `pre_up = [["/usr/sbin/nft", "-f", "/etc/gmtun/%i.nft"], ["/bin/true"]]
post_up = [["/bin/sh", "-c", "echo up %i"]]
pre_down = []
post_down = [["/bin/echo", "down"]]`)
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.Interface.Hooks
	if len(h.PreUp) != 2 || !slices.Equal(h.PreUp[0], []string{"/usr/sbin/nft", "-f", "/etc/gmtun/%i.nft"}) ||
		!slices.Equal(h.PostUp[0], []string{"/bin/sh", "-c", "echo up %i"}) || len(h.PreDown) != 0 ||
		!slices.Equal(h.PostDown[0], []string{"/bin/echo", "down"}) {
		t.Errorf("hooks = %#v", h)
	}
	cfg, err = loadInterface(t, "")
	if err != nil || cfg.Interface.Hooks.PreUp != nil {
		t.Errorf("no hooks: %v %#v", err, cfg.Interface.Hooks)
	}
}

func TestHookErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`pre_up = "/bin/true"`, `key "interface.pre_up": must be an array of commands`},
		{`pre_up = ["/bin/true"]`, `key "interface.pre_up": command 1 is a string; each command must be an array of strings`},
		{`post_up = [[]]`, `key "interface.post_up": command 1 is empty`},
		{`pre_down = [["/bin/echo", 1]]`, `key "interface.pre_down": command 1: argument 2 is an integer, not a string`},
		{`post_down = [["echo", "x"]]`, `key "interface.post_down": command 1: the program "echo" must be an absolute path (hooks do not search $PATH)`},
		{`pre_up = [` + strings.Repeat(`["/bin/true"],`, MaxHookCommands+1) + `]`, `key "interface.pre_up": has 33 commands; at most 32`},
		{`Pre_Up = []`, `unknown key (keys are case-sensitive: write "pre_up")`},
	} {
		_, err := loadInterface(t, tc.doc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.doc, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), "gm0.toml:5:") {
			t.Errorf("%s: error does not name line 5: %v", tc.doc, err)
		}
	}
}

func TestMTUAuto(t *testing.T) {
	cfg, err := loadInterface(t, `mtu = "auto"`)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Interface.MTUAuto || cfg.Interface.MTU != DefaultMTU {
		t.Errorf("mtu auto: MTUAuto %v MTU %d", cfg.Interface.MTUAuto, cfg.Interface.MTU)
	}
	if cfg, err = loadInterface(t, `mtu = 1400`); err != nil || cfg.Interface.MTUAuto || cfg.Interface.MTU != 1400 {
		t.Errorf("mtu 1400: %v %+v", err, cfg)
	}
	if _, err := loadInterface(t, `mtu = "Auto"`); err == nil || !strings.Contains(err.Error(), `must be an integer or "auto", got "Auto"`) {
		t.Errorf(`mtu "Auto": %v`, err)
	}
}

func TestAutoMTU(t *testing.T) {
	// 1500-byte underlay: IPv6 gives the default MTU (80 bytes of overhead), IPv4 20 bytes more.
	for _, tc := range []struct {
		path int
		v4   bool
		want int
	}{{1500, false, DefaultMTU}, {1500, true, 1440}, {9000, true, 8940}, {1400, true, 1340}, {1300, false, MinMTU}, {70000, true, MaxMTU}} {
		if got := AutoMTU(tc.path, tc.v4); got != tc.want {
			t.Errorf("AutoMTU(%d, ipv4=%v) = %d, want %d", tc.path, tc.v4, got, tc.want)
		}
	}
	if Overhead != 40 {
		t.Errorf("Overhead = %d, want 8 (UDP) + 16 (header) + 16 (tag)", Overhead)
	}
}
