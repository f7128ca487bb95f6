package config

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/gmtun/gmtun/handshake"
)

// FuzzLoad feeds arbitrary documents to the parser. It must never panic;
// every error must be an *Error naming the file; every accepted config
// must satisfy the validation invariants.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{baseDoc, baseDoc + secondPeer, "[interface]\nprivate_key_file = \"k\"\n",
		"peer = [{}]", "[interface]\n[[peer]]\n[[peer]]\nname=\"a\"", "a.b.c = 1\n[x.y]\n'q' = { r = [1, {s=2}] }"} {
		f.Add([]byte(s))
	}
	examples, _ := filepath.Glob("../configs/*.toml")
	for _, ex := range examples {
		if b, err := os.ReadFile(ex); err == nil {
			f.Add(b)
		}
	}
	key, err := handshake.GeneratePrivateKey(rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	keyLine := []byte(key.Encode() + "\n")
	l := &loader{
		getenv:     func(string) string { return "/run/credentials/gmtun@gm0.service" },
		readSecret: func(string) ([]byte, error) { return keyLine, nil },
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "/etc/gmtun/fuzz.toml"
		var m map[string]any
		if md, err := toml.Decode(string(data), &m); err == nil {
			checkKeyLines(t, data, md.Keys())
		}
		cfg, err := l.parse(name, data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.File != name {
				t.Fatalf("error %T %q does not name the file", err, err)
			}
			return
		}
		if cfg.Interface.MTU < MinMTU || cfg.Interface.MTU > MaxMTU || len(cfg.Interface.Suites) == 0 {
			t.Fatalf("invalid interface accepted: %+v", cfg.Interface)
		}
		seen := map[string]bool{}
		for i, p := range cfg.Peers {
			if seen[p.Name] || p.PublicKey == nil || len(p.Suites) == 0 {
				t.Fatalf("invalid peer accepted: %+v", p)
			}
			seen[p.Name] = true
			for ai, a := range p.AllowedIPs {
				for j, q := range cfg.Peers {
					for bi, b := range q.AllowedIPs {
						if a.Overlaps(b) && (i != j || ai != bi) {
							t.Fatalf("overlapping allowed_ips accepted: %v and %v", a, b)
						}
					}
				}
			}
		}
	})
}
