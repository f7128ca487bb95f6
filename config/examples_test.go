//go:build unix

package config

import (
	"crypto/rand"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/handshake"
)

var (
	keyFileLine   = regexp.MustCompile(`(?m)^private_key_file = ".*"$`)
	publicKeyLine = regexp.MustCompile(`(?m)^public_key = "(<[^"]*>)"$`)
)

// loadExample loads configs/NAME with its private_key_file replaced by a
// fresh key file and, if fill is set, every public_key placeholder by a
// fresh public key (pubs, in order of appearance).
func loadExample(t *testing.T, name string, priv *handshake.PrivateKey, pubs []*handshake.PublicKey, fill bool) (*Config, error) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("../configs", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kf := writeFile(t, dir, "gm0.key", priv.Encode()+"\n", 0o600)
	if n := len(keyFileLine.FindAll(src, -1)); n != 1 {
		t.Fatalf("%s: %d private_key_file lines, want 1", name, n)
	}
	doc := keyFileLine.ReplaceAllString(string(src), `private_key_file = "`+kf+`"`)
	if fill {
		i := 0
		doc = publicKeyLine.ReplaceAllStringFunc(doc, func(string) string {
			if i >= len(pubs) {
				t.Fatalf("%s: more placeholders than test keys", name)
			}
			i++
			return `public_key = "` + pubs[i-1].String() + `"`
		})
	}
	return Load(writeFile(t, dir, name, doc, 0o600))
}

func genKey(t *testing.T) *handshake.PrivateKey {
	t.Helper()
	k, err := handshake.GeneratePrivateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestExamples parses every file in configs/ so the examples cannot rot,
// and checks that their placeholders are rejected until filled in.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../configs/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example configs found: %v", err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			src, _ := os.ReadFile(path)
			placeholders := publicKeyLine.FindAllStringSubmatch(string(src), -1)
			if len(placeholders) == 0 {
				t.Fatalf("no clearly marked public_key placeholder (\"<…>\")")
			}
			pubs := []*handshake.PublicKey{genKey(t).Public(), genKey(t).Public(), genKey(t).Public()}
			cfg, err := loadExample(t, name, genKey(t), pubs, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Peers) == 0 || cfg.Interface.Name == "" || len(cfg.Interface.Addresses) == 0 {
				t.Errorf("example is too thin: %+v", cfg)
			}
			_, err = loadExample(t, name, genKey(t), nil, false)
			if err == nil || !strings.Contains(err.Error(), "is still the example placeholder "+placeholders[0][1]) {
				t.Errorf("unfilled placeholder: got %v", err)
			}
		})
	}
}

// TestExamplePair checks that site-a.toml and site-b.toml describe the
// two ends of one tunnel.
func TestExamplePair(t *testing.T) {
	ka, kb := genKey(t), genKey(t)
	a, err := loadExample(t, "site-a.toml", ka, []*handshake.PublicKey{kb.Public()}, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loadExample(t, "site-b.toml", kb, []*handshake.PublicKey{ka.Public()}, true)
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := a.Peers[0], b.Peers[0]
	if pa.Name != "site-b" || pb.Name != "site-a" {
		t.Fatalf("peer names %q, %q", pa.Name, pb.Name)
	}
	if !pa.Endpoint.IsValid() || pa.Endpoint.Port() != b.Interface.ListenPort {
		t.Errorf("site-a sends to %v but site-b listens on %d", pa.Endpoint, b.Interface.ListenPort)
	}
	if pb.Endpoint.IsValid() {
		t.Errorf("site-b should show the responder-only form (no endpoint), has %v", pb.Endpoint)
	}
	for _, c := range []struct {
		peer   Peer
		remote *Config
	}{{pa, b}, {pb, a}} {
		addr := c.remote.Interface.Addresses[0].Addr()
		found := false
		for _, p := range c.peer.AllowedIPs {
			found = found || p.Contains(addr)
		}
		if !found {
			t.Errorf("peer %s: allowed_ips %v do not contain its tunnel address %v", c.peer.Name, c.peer.AllowedIPs, addr)
		}
		common := false
		for _, s := range c.peer.Suites {
			common = common || slices.Contains(c.remote.Interface.Suites, s)
		}
		if !common {
			t.Errorf("peer %s: no suite in common", c.peer.Name)
		}
	}
	underlay, tunnel := netip.MustParsePrefix("198.18.0.0/24"), netip.MustParsePrefix("198.19.0.0/24")
	if !underlay.Contains(pa.Endpoint.Addr()) {
		t.Errorf("site-a's endpoint %v is outside the documented underlay %v", pa.Endpoint, underlay)
	}
	for _, c := range []*Config{a, b} {
		for _, p := range c.Interface.Addresses {
			if !tunnel.Contains(p.Addr()) {
				t.Errorf("%s: address %v is outside the documented tunnel subnet %v", c.Path, p, tunnel)
			}
		}
	}
}
