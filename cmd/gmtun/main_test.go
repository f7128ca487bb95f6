package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/handshake"
)

// result is what one in-process invocation produced.
type result struct {
	code           int
	stdout, stderr string
}

// invocation configures one in-process run.
type invocation struct {
	stdin    string
	rand     io.Reader
	terminal bool
}

// seedReader is a deterministic randomness source: bytes seed, seed+1, …
type seedReader struct{ next byte }

func (r *seedReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.next
		r.next++
	}
	return len(p), nil
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("entropy exhausted") }

func (inv invocation) run(args ...string) result {
	var out, errb bytes.Buffer
	rnd := inv.rand
	if rnd == nil {
		rnd = &seedReader{next: 7}
	}
	e := &env{
		stdin:      strings.NewReader(inv.stdin),
		stdout:     &out,
		stderr:     &errb,
		rand:       rnd,
		getenv:     func(string) string { return "" },
		isTerminal: func(io.Writer) bool { return inv.terminal },
	}
	code := run(e, args)
	return result{code, out.String(), errb.String()}
}

func gmtun(args ...string) result { return invocation{}.run(args...) }

// wantFailure asserts exit code and the exact one-line stderr message.
func wantFailure(t *testing.T, r result, code int, msg string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d (stderr %q)", r.code, code, r.stderr)
	}
	if want := "gmtun: " + msg + "\n"; r.stderr != want {
		t.Errorf("stderr %q\nwant   %q", r.stderr, want)
	}
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing", r.stdout)
	}
}

func TestCommandTable(t *testing.T) {
	for _, name := range []string{"genkey", "pubkey", "genpsk", "check", "version"} {
		c, ok := commands[name]
		if !ok {
			t.Errorf("command %q is not registered", name)
			continue
		}
		if c.summary == "" || c.help == "" || c.setup == nil {
			t.Errorf("command %q lacks summary, help or setup", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a duplicate command did not panic")
		}
	}()
	register(&command{name: "genkey"})
}

func TestTopLevelUsage(t *testing.T) {
	r := gmtun()
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, "Usage: gmtun COMMAND") || r.stdout != "" {
		t.Errorf("no arguments: %+v", r)
	}
	for _, arg := range []string{"help", "--help", "-h"} {
		r := gmtun(arg)
		if r.code != exitOK || r.stderr != "" || !strings.HasPrefix(r.stdout, "Usage: gmtun COMMAND") {
			t.Errorf("%s: %+v", arg, r)
		}
		for name, c := range commands {
			if !strings.Contains(r.stdout, "\n  "+name) || !strings.Contains(r.stdout, c.summary) {
				t.Errorf("%s: top-level help does not list %q", arg, name)
			}
		}
		for _, code := range []string{"0  success", "1  runtime failure", "2  usage error", "3  configuration error"} {
			if !strings.Contains(r.stdout, code) {
				t.Errorf("%s: help does not document exit code %q", arg, code)
			}
		}
	}
	wantFailure(t, gmtun("frob"), exitUsage, `unknown command "frob"; run 'gmtun help' for the list`)
	wantFailure(t, gmtun("--config", "x"), exitUsage, `unknown option "--config"; flags go after the command name (run 'gmtun help')`)
	wantFailure(t, gmtun("help", "frob"), exitUsage, `help: unknown command "frob"; run 'gmtun help' for the list`)
}

func TestCommandHelp(t *testing.T) {
	for name := range commands {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			r := gmtun(args...)
			if r.code != exitOK || r.stderr != "" {
				t.Errorf("%q: code %d, stderr %q", args, r.code, r.stderr)
			}
			if !strings.HasPrefix(r.stdout, "Usage: gmtun "+name) || !strings.Contains(r.stdout, "Exit codes:") {
				t.Errorf("%q: help text is\n%s", args, r.stdout)
			}
		}
	}
	r := gmtun("check", "--help")
	if !strings.Contains(r.stdout, "-config FILE") || !strings.Contains(r.stdout, "-quiet") {
		t.Errorf("check --help does not list its flags:\n%s", r.stdout)
	}
	wantFailure(t, gmtun("check", "--bogus"), exitUsage,
		"check: flag provided but not defined: -bogus; run 'gmtun check --help'")
}

func TestGenkey(t *testing.T) {
	r := invocation{rand: &seedReader{next: 1}}.run("genkey")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("genkey: %+v", r)
	}
	want, err := handshake.GeneratePrivateKey(&seedReader{next: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.stdout != want.Encode()+"\n" {
		t.Errorf("genkey printed %q, want %q", r.stdout, want.Encode()+"\n")
	}
	// A different seed gives a different key.
	if r2 := (invocation{rand: &seedReader{next: 2}}).run("genkey"); r2.stdout == r.stdout {
		t.Error("genkey output does not depend on the randomness")
	}

	r = invocation{terminal: true}.run("genkey")
	if r.code != exitOK || r.stderr != "gmtun: "+keyTerminalWarning+"\n" || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("genkey to a terminal: %+v", r)
	}
	wantFailure(t, gmtun("genkey", "extra"), exitUsage, `genkey: takes no arguments, got "extra"`)
	wantFailure(t, invocation{rand: failingReader{}}.run("genkey"), exitFailure,
		"genkey: cannot generate a key: handshake: reading randomness: entropy exhausted")
}

func TestGenkeyPubkeyRoundtrip(t *testing.T) {
	for seed := range byte(4) {
		priv := invocation{rand: &seedReader{next: seed * 50}}.run("genkey")
		if priv.code != exitOK {
			t.Fatalf("genkey: %+v", priv)
		}
		pub := invocation{stdin: priv.stdout}.run("pubkey")
		if pub.code != exitOK || pub.stderr != "" {
			t.Fatalf("pubkey: %+v", pub)
		}
		k, err := handshake.ParsePrivateKey(priv.stdout)
		if err != nil {
			t.Fatal(err)
		}
		if pub.stdout != k.Public().String()+"\n" {
			t.Errorf("pubkey printed %q, want %q", pub.stdout, k.Public().String()+"\n")
		}
		if _, err := handshake.ParsePublicKey(pub.stdout); err != nil {
			t.Errorf("pubkey output does not parse: %v", err)
		}
		// Surrounding blank lines, spaces and CRLF are accepted.
		again := invocation{stdin: "\r\n  " + strings.TrimSpace(priv.stdout) + "  \r\n\n"}.run("pubkey")
		if again.stdout != pub.stdout {
			t.Errorf("pubkey with padding printed %q, want %q", again.stdout, pub.stdout)
		}
	}
}

func TestPubkeyBadInput(t *testing.T) {
	key := invocation{}.run("genkey").stdout
	pub := invocation{stdin: key}.run("pubkey").stdout
	_, parseErr := handshake.ParsePrivateKey("AAAA")
	_, pubAsPriv := handshake.ParsePrivateKey(pub)
	for _, tc := range []struct {
		name, stdin, msg string
	}{
		{"empty", "", "pubkey: stdin must hold exactly one private key line, got 0"},
		{"blank", " \n\t\n", "pubkey: stdin must hold exactly one private key line, got 0"},
		{"two keys", key + key, "pubkey: stdin must hold exactly one private key line, got 2"},
		{"garbage", "AAAA\n", "pubkey: stdin does not hold a valid private key: " + parseErr.Error()},
		{"public key", pub, "pubkey: stdin does not hold a valid private key: " + pubAsPriv.Error()},
		{"too long", strings.Repeat("A", maxKeyInput+1), "pubkey: stdin holds more than 4096 bytes; expected one private key line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantFailure(t, invocation{stdin: tc.stdin}.run("pubkey"), exitFailure, tc.msg)
		})
	}
	wantFailure(t, invocation{stdin: key}.run("pubkey", "gm0.key"), exitUsage,
		`pubkey: takes no arguments (the key is read from stdin), got "gm0.key"`)
}

func TestGenpsk(t *testing.T) {
	r := invocation{rand: &seedReader{next: 100}}.run("genpsk")
	want := make([]byte, 32)
	for i := range want {
		want[i] = byte(100 + i)
	}
	if r.code != exitOK || r.stderr != "" || r.stdout != base64.StdEncoding.EncodeToString(want)+"\n" {
		t.Errorf("genpsk: %+v", r)
	}
	r = invocation{terminal: true}.run("genpsk")
	if r.code != exitOK || r.stderr != "gmtun: "+keyTerminalWarning+"\n" {
		t.Errorf("genpsk to a terminal: %+v", r)
	}
	wantFailure(t, invocation{rand: failingReader{}}.run("genpsk"), exitFailure,
		"genpsk: cannot read randomness: entropy exhausted")
	wantFailure(t, gmtun("genpsk", "x"), exitUsage, `genpsk: takes no arguments, got "x"`)
}

// writeConfig writes a key file and a config naming it into a temp dir.
func writeConfig(t *testing.T, configMode os.FileMode, peerKey string) (path string, priv *handshake.PrivateKey) {
	t.Helper()
	dir := t.TempDir()
	priv, err := handshake.GeneratePrivateKey(&seedReader{next: 9})
	if err != nil {
		t.Fatal(err)
	}
	kf := filepath.Join(dir, "gm0.key")
	if err := os.WriteFile(kf, []byte(priv.Encode()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := `[interface]
name = "gm0"
private_key_file = "` + kf + `"
listen_port = 51900
address = ["198.19.0.1/24"]

[[peer]]
name = "site-b"
public_key = "` + peerKey + `"
endpoint = "198.18.0.2:51900"
allowed_ips = ["198.19.0.2/32"]
persistent_keepalive = 25
`
	path = filepath.Join(dir, "gm0.toml")
	if err := os.WriteFile(path, []byte(doc), configMode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, configMode); err != nil {
		t.Fatal(err)
	}
	return path, priv
}

func TestCheck(t *testing.T) {
	peer, err := handshake.GeneratePrivateKey(&seedReader{next: 200})
	if err != nil {
		t.Fatal(err)
	}
	path, priv := writeConfig(t, 0o600, peer.Public().String())
	r := gmtun("check", "--config", path)
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("check: %+v", r)
	}
	for _, want := range []string{path + ": ok\n", "interface gm0\n", "public key:  " + priv.Public().String() + "\n",
		"listen port: 51900\n", "mtu:         1420\n", "suites:      sm4-gcm, zuc-256\n", "peer site-b\n",
		"endpoint:    198.18.0.2:51900\n", "allowed ips: 198.19.0.2/32\n", "keepalive:   25s\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := gmtun("check", "-config="+path, "--quiet"); r.code != exitOK || r.stdout != "" || r.stderr != "" {
		t.Errorf("check --quiet: %+v", r)
	}

	// A world-writable config passes check with a warning on stderr, and
	// up refuses it.
	wpath, _ := writeConfig(t, 0o666, peer.Public().String())
	r = gmtun("check", "--config", wpath, "--quiet")
	problem := wpath + " is writable by group or others (mode 0666); whoever can write it controls the tunnel (chmod go-w " + wpath + ")"
	if want := "gmtun: warning: " + problem + "\n"; r.code != exitOK || r.stderr != want {
		t.Errorf("check of writable config: %+v\nwant stderr %q", r, want)
	}
	r = gmtun("up", "--config", wpath)
	if r.code != exitConfig || !strings.Contains(r.stderr, strings.TrimPrefix(problem, wpath+" ")) {
		t.Errorf("up of writable config: %+v\nwant exit %d and %q", r, exitConfig, problem)
	}

	// Invalid: the peer has our own key.
	bad, priv := writeConfig(t, 0o600, "")
	if err := os.WriteFile(bad, bytes.Replace(mustRead(t, bad), []byte(`public_key = ""`),
		[]byte(`public_key = "`+priv.Public().String()+`"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	wantFailure(t, gmtun("check", "--config", bad), exitConfig,
		bad+`:9: key "peer.public_key" (peer "site-b"): is this interface's own public key; a peer must have its own key`)

	missing := filepath.Join(t.TempDir(), "nope.toml")
	wantFailure(t, gmtun("check", "--config", missing), exitConfig,
		missing+": cannot open the configuration: no such file or directory")
	wantFailure(t, gmtun("check"), exitUsage, "check: give NAME (for /etc/gmtun/NAME.toml) or --config FILE")
	wantFailure(t, gmtun("check", path), exitUsage, `check: "`+path+`" is a path; give a file with --config FILE, or NAME for /etc/gmtun/NAME.toml`)
	wantFailure(t, gmtun("check", "--config"), exitUsage, "check: flag needs an argument: -config; run 'gmtun check --help'")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVersion(t *testing.T) {
	r := gmtun("version")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("version: %+v", r)
	}
	if !strings.HasPrefix(r.stdout, "gmtun ") || !strings.Contains(r.stdout, "go: "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+"\n") {
		t.Errorf("version output:\n%s", r.stdout)
	}
	wantFailure(t, gmtun("version", "x"), exitUsage, `version: takes no arguments, got "x"`)

	var b bytes.Buffer
	writeVersion(&b, &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}})
	if want := "gmtun v0.3.1\nrevision: abc123 (modified)\ngo: " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"; b.String() != want {
		t.Errorf("writeVersion = %q, want %q", b.String(), want)
	}

	old := version
	version = "v9.9.9"
	defer func() { version = old }()
	b.Reset()
	writeVersion(&b, nil)
	if !strings.HasPrefix(b.String(), "gmtun v9.9.9\ngo: ") {
		t.Errorf("link-time version not used: %q", b.String())
	}
	version = ""
	b.Reset()
	writeVersion(&b, nil)
	if !strings.HasPrefix(b.String(), "gmtun (unknown)\n") {
		t.Errorf("missing build info: %q", b.String())
	}
}
