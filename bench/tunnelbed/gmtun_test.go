//go:build linux

package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/handshake"
)

// TestGmtunConfigLoads checks the generated configuration against gmtun's
// own strict parser, so the bed cannot drift from docs/OPERATIONS.md.
func TestGmtunConfigLoads(t *testing.T) {
	dir := t.TempDir()
	ka, err := handshake.GeneratePrivateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := handshake.GeneratePrivateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "a.key")
	if err := os.WriteFile(keyFile, []byte(ka.Encode()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := gmtunConfig{
		Iface: "gmtb4242a", PrivateKey: keyFile, Port: gmtunPort, Address: innerA.String(), MTU: innerMTU,
		Suite: "zuc-256", PeerName: "site-b", PeerPub: kb.Public().String(),
		Endpoint: "198.18.0.2:51900", AllowedIP: "198.19.0.2/32", RunToCompletion: "true",
	}
	text, err := c.TOML()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("gmtun rejects the generated configuration: %v\n%s", err, text)
	}
	in := cfg.Interface
	if in.Name != "gmtb4242a" || in.ListenPort != gmtunPort || in.MTU != innerMTU ||
		len(in.Addresses) != 1 || in.Addresses[0] != innerA || !in.PrivateKey.Equal(ka) {
		t.Errorf("interface = %+v", in)
	}
	if !in.RunToCompletion || in.RunToCompletionAuto {
		t.Errorf("run_to_completion = %v (auto %v), want true", in.RunToCompletion, in.RunToCompletionAuto)
	}
	if len(in.Suites) != 1 || in.Suites[0].String() != "zuc-256" {
		t.Errorf("suites = %v, want only zuc-256", in.Suites)
	}
	if len(cfg.Peers) != 1 {
		t.Fatalf("%d peers", len(cfg.Peers))
	}
	p := cfg.Peers[0]
	if p.Name != "site-b" || !p.PublicKey.Equal(kb.Public()) || p.Endpoint.String() != "198.18.0.2:51900" ||
		len(p.AllowedIPs) != 1 || p.AllowedIPs[0].String() != "198.19.0.2/32" {
		t.Errorf("peer = %+v", p)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %q", cfg.Warnings)
	}

	c.PeerName = "bad\nname"
	if _, err := c.TOML(); err == nil {
		t.Error("a newline in a value was written into TOML")
	}
	if got := tomlString(`a"b\c`); got != `"a\"b\\c"` {
		t.Errorf("tomlString = %s", got)
	}
}

func TestGmtunHasUp(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "gmtun-old")
	// A gmtun without the up command, as it is while `up` is written.
	script := "#!/bin/sh\nif [ \"$1\" = up ]; then echo 'gmtun: unknown command \"up\"' >&2; exit 2; fi\nexit 0\n"
	if err := os.WriteFile(old, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	err := gmtunHasUp(t.Context(), old)
	if err == nil || !strings.Contains(err.Error(), "no usable 'up' command") || !strings.Contains(err.Error(), `unknown command "up"`) {
		t.Errorf("gmtunHasUp(without up) = %v", err)
	}
	if err := gmtunHasUp(t.Context(), filepath.Join(dir, "missing")); err == nil {
		t.Error("missing binary accepted")
	}
	ok := filepath.Join(dir, "gmtun-new")
	if err := os.WriteFile(ok, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := gmtunHasUp(t.Context(), ok); err != nil {
		t.Errorf("gmtunHasUp(with up) = %v", err)
	}
}
