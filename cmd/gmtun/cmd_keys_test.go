package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/internal/sm2pem"
	"github.com/gmtun/gmtun/internal/testenv"
)

// TestGenkeyPem: genkey --pem writes the key the seed gives as PKCS#8
// PEM; pubkey reads it and prints its public key as base64 and, with
// --pem, as SPKI; pubkey converts a PEM public key to base64.
func TestGenkeyPem(t *testing.T) {
	r := invocation{rand: &seedReader{next: 1}}.run("genkey", "--pem")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("genkey --pem: %+v", r)
	}
	want, err := handshake.GeneratePrivateKey(&seedReader{next: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.stdout, "-----BEGIN PRIVATE KEY-----\n") || !strings.HasSuffix(r.stdout, "-----END PRIVATE KEY-----\n") {
		t.Fatalf("genkey --pem printed %q", r.stdout)
	}
	got, err := sm2pem.ParsePrivateKey([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Fatal("genkey --pem wrote another key than the randomness gives")
	}
	pub := invocation{stdin: r.stdout}.run("pubkey")
	if pub.code != exitOK || pub.stderr != "" || pub.stdout != want.Public().String()+"\n" {
		t.Fatalf("pubkey < PEM: %+v, want %s", pub, want.Public())
	}
	pubPEM := invocation{stdin: r.stdout}.run("pubkey", "--pem")
	if pubPEM.code != exitOK || !strings.HasPrefix(pubPEM.stdout, "-----BEGIN PUBLIC KEY-----\n") {
		t.Fatalf("pubkey --pem: %+v", pubPEM)
	}
	if k, err := sm2pem.ParsePublicKey([]byte(pubPEM.stdout)); err != nil || !k.Equal(want.Public()) {
		t.Fatalf("pubkey --pem wrote %q (%v)", pubPEM.stdout, err)
	}
	// The base64 private key gives the same SPKI.
	if again := (invocation{stdin: want.Encode()}).run("pubkey", "--pem"); again.stdout != pubPEM.stdout {
		t.Errorf("pubkey --pem of the base64 key: %q, want %q", again.stdout, pubPEM.stdout)
	}
	// A PEM public key is converted to the config's base64.
	conv := invocation{stdin: pubPEM.stdout}.run("pubkey")
	if conv.code != exitOK || conv.stdout != want.Public().String()+"\n" {
		t.Errorf("pubkey < PUBLIC KEY: %+v", conv)
	}
	// A broken PEM block fails with one line.
	broken := strings.Replace(r.stdout, "MIG", "MIH", 1)
	bad := invocation{stdin: broken}.run("pubkey")
	if bad.code != exitFailure || !strings.HasPrefix(bad.stderr, "gmtun: pubkey: stdin does not hold a valid PEM key: ") ||
		strings.Count(bad.stderr, "\n") != 1 || bad.stdout != "" {
		t.Errorf("pubkey < broken PEM: %+v", bad)
	}
}

// TestPemOpenSSLInterop runs the real openssl: a key from openssl genpkey
// gives in `gmtun pubkey` the point openssl pkey -pubout prints (read from
// openssl's DER, not through gmtun's parser), and a key from `gmtun genkey
// --pem` is read by openssl with the public key gmtun prints.
func TestPemOpenSSLInterop(t *testing.T) {
	testenv.RequireTools(t, "openssl")
	dir := t.TempDir()
	key := filepath.Join(dir, "ossl.pem")
	run := func(stdin []byte, args ...string) []byte {
		t.Helper()
		cmd := exec.Command("openssl", args...)
		cmd.Stdin = bytes.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("openssl %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	run(nil, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:SM2", "-out", key)
	pemKey, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	der := run(nil, "pkey", "-in", key, "-pubout", "-outform", "DER")
	wantPub, err := handshake.NewPublicKey(der[len(der)-64:])
	if err != nil {
		t.Fatal(err)
	}
	r := invocation{stdin: string(pemKey)}.run("pubkey")
	if r.code != exitOK || r.stdout != wantPub.String()+"\n" {
		t.Fatalf("gmtun pubkey < openssl key: %+v, openssl's point is %s", r, wantPub)
	}
	if r := (invocation{stdin: string(run(nil, "pkey", "-in", key, "-pubout"))}).run("pubkey"); r.stdout != wantPub.String()+"\n" {
		t.Errorf("gmtun pubkey < openssl SPKI: %+v, want %s", r, wantPub)
	}

	g := invocation{rand: &seedReader{next: 9}}.run("genkey", "--pem")
	run([]byte(g.stdout), "pkey", "-noout")
	der = run([]byte(g.stdout), "pkey", "-pubout", "-outform", "DER")
	fromOpenSSL, err := handshake.NewPublicKey(der[len(der)-64:])
	if err != nil {
		t.Fatal(err)
	}
	if r := (invocation{stdin: g.stdout}).run("pubkey"); r.stdout != fromOpenSSL.String()+"\n" {
		t.Errorf("openssl derives %s from gmtun's key, gmtun pubkey says %q", fromOpenSSL, r.stdout)
	}
}

// runToFile runs args in-process with stdout an *os.File (a real file,
// as `gmtun genkey > FILE` gives it).
func runToFile(t *testing.T, out *os.File, args ...string) (int, string) {
	t.Helper()
	var errb bytes.Buffer
	e := &env{
		stdin: strings.NewReader(""), stdout: out, stderr: &errb, rand: &seedReader{next: 3},
		getenv: func(string) string { return "" }, isTerminal: func(io.Writer) bool { return false },
	}
	return run(e, args), errb.String()
}

// TestGenkeyWarnsOpenFile: genkey and genpsk warn, exit 0 and still
// write the key when stdout is a file that group or others can read, as
// `wg genkey` does; a 0600 file gets no warning.
func TestGenkeyWarnsOpenFile(t *testing.T) {
	dir := t.TempDir()
	for _, cmd := range [][]string{{"genkey"}, {"genkey", "--pem"}, {"genpsk"}} {
		for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o600, 0o400} {
			path := filepath.Join(dir, "k")
			os.Remove(path)
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, mode)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Chmod(mode); err != nil { // past the umask
				t.Fatal(err)
			}
			code, stderr := runToFile(t, f, cmd...)
			f.Close()
			data, _ := os.ReadFile(path)
			if code != exitOK || len(data) == 0 {
				t.Fatalf("%v to a %04o file: exit %d, %d bytes written", cmd, mode, code, len(data))
			}
			if mode&0o077 == 0 {
				if stderr != "" {
					t.Errorf("%v to a %04o file warned: %q", cmd, mode, stderr)
				}
				continue
			}
			want := fmt.Sprintf("gmtun: warning: writing a secret key to %s, which group or others can read (mode %04o); ", path, mode)
			if !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, "chmod 600 "+path+"\n") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("%v to a %04o file: stderr %q, want %q…", cmd, mode, stderr, want)
			}
		}
	}
	// A pipe or a device is not a file others can read later: no warning.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	if code, stderr := runToFile(t, pw, "genkey"); code != exitOK || stderr != "" {
		t.Errorf("genkey to a pipe: exit %d, stderr %q", code, stderr)
	}
	pw.Close()
}
