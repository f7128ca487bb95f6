//go:build unix

package config

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/internal/sm2pem"
	"github.com/gmtun/gmtun/internal/testenv"
)

// TestLoadPEMKeys: private_key_file may hold a PEM private key and
// public_key a PEM SubjectPublicKeyInfo in a TOML multi-line string; both
// load to the same keys as the base64 forms.
func TestLoadPEMKeys(t *testing.T) {
	f := newFixture(t)
	priv, err := sm2pem.EncodePrivateKey(f.keys.own)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := sm2pem.EncodePublicKey(f.keys.pub1)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, f.dir, "gm0.pem", "\n"+string(priv)+"\n", 0o600)
	doc := edit(t, baseDoc, "KEYFILE", filepath.Join(f.dir, "gm0.pem"),
		`public_key = "PUB1"`, `public_key = """`+"\n"+string(pub)+`"""`)
	_, cfg, err := f.load(t, "gm0.toml", doc)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Interface.PrivateKey.Equal(f.keys.own) {
		t.Error("PEM private key loaded as another key")
	}
	if !cfg.Peers[0].PublicKey.Equal(f.keys.pub1) {
		t.Error("PEM public key loaded as another key")
	}

	// A broken PEM key names the file, line and key.
	writeFile(t, f.dir, "bad.pem", strings.Replace(string(priv), "MIG", "MIH", 1), 0o600)
	path, _, err := f.load(t, "bad.toml", edit(t, baseDoc, "KEYFILE", "bad.pem"))
	var ce *Error
	if !errors.As(err, &ce) || ce.File != path || ce.Line != 3 || ce.Key != "interface.private_key_file" {
		t.Fatalf("broken PEM key: %v, want an *Error at %s:3 interface.private_key_file", err, path)
	}
	// A PEM public key given as the private key says what it is.
	writeFile(t, f.dir, "pub.pem", string(pub), 0o600)
	if _, _, err := f.load(t, "pub.toml", edit(t, baseDoc, "KEYFILE", "pub.pem")); err == nil ||
		!strings.Contains(err.Error(), "this is a public key") {
		t.Fatalf("public key as private_key_file: %v", err)
	}
	// The permission rule is the same for PEM files.
	writeFile(t, f.dir, "open.pem", string(priv), 0o644)
	if _, _, err := f.load(t, "open.toml", edit(t, baseDoc, "KEYFILE", "open.pem")); err == nil ||
		!strings.Contains(err.Error(), "must be 0600 or stricter") {
		t.Fatalf("mode 0644 PEM key: %v", err)
	}
	// A PEM preshared key is not a thing: one line of base64 only.
	doc = edit(t, baseDoc, `allowed_ips`, `preshared_key_file = "gm0.pem"`+"\nallowed_ips")
	if _, _, err := f.load(t, "psk.toml", doc); err == nil || !strings.Contains(err.Error(), "exactly one key line") {
		t.Fatalf("PEM as preshared key: %v", err)
	}
}

// TestLoadOpenSSLKey: a key file written by openssl genpkey runs as
// private_key_file, with the public key openssl prints.
func TestLoadOpenSSLKey(t *testing.T) {
	testenv.RequireTools(t, "openssl")
	f := newFixture(t)
	key := filepath.Join(f.dir, "ossl.pem")
	if out, err := exec.Command("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:SM2", "-out", key).CombinedOutput(); err != nil {
		t.Fatalf("openssl genpkey: %v\n%s", err, out)
	}
	if err := os.Chmod(key, 0o600); err != nil {
		t.Fatal(err)
	}
	pubPEM, err := exec.Command("openssl", "pkey", "-in", key, "-pubout").Output()
	if err != nil {
		t.Fatal(err)
	}
	want, err := sm2pem.ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	_, cfg, err := f.load(t, "gm0.toml", edit(t, baseDoc, "KEYFILE", key))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Interface.PrivateKey.Public(); !got.Equal(want) {
		t.Fatalf("gmtun derives public key %s from openssl's key; openssl says %s", got, want)
	}
}
