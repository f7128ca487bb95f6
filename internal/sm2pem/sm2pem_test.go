package sm2pem

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emmansun/gmsm/sm2"
	"github.com/emmansun/gmsm/smx509"

	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/internal/testenv"
)

func newKey(t *testing.T) *handshake.PrivateKey {
	t.Helper()
	k, err := handshake.GeneratePrivateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestRoundTripPrivate(t *testing.T) {
	k := newKey(t)
	p, err := EncodePrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(p, []byte("-----BEGIN PRIVATE KEY-----\n")) {
		t.Fatalf("not a PKCS#8 PEM block:\n%s", p)
	}
	if !IsPEM(p) {
		t.Fatal("IsPEM(encoded key) = false")
	}
	got, err := ParsePrivateKey(p)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(k) {
		t.Fatal("PKCS#8 round trip changed the key")
	}
	// SEC 1, under both labels, and after a parameters block.
	for _, typ := range []string{TypeSEC1, TypeSEC1SM2} {
		der := sec1DER(t, p)
		text := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
		params := "-----BEGIN SM2 PARAMETERS-----\nBggqgRzPVQGCLQ==\n-----END SM2 PARAMETERS-----\n"
		for _, in := range [][]byte{text, append([]byte(params), text...)} {
			got, err := ParsePrivateKey(in)
			if err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			if !got.Equal(k) {
				t.Fatalf("%s: wrong key", typ)
			}
		}
	}
}

// sec1DER re-encodes a PKCS#8 PEM key as SEC 1 DER (with the SM2 curve
// OID), through smx509.
func sec1DER(t *testing.T, pkcs8 []byte) []byte {
	t.Helper()
	b, _ := pem.Decode(pkcs8)
	key, err := smx509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sk, ok := key.(*sm2.PrivateKey)
	if !ok {
		t.Fatalf("smx509 returned a %T", key)
	}
	der, err := smx509.MarshalSM2PrivateKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func TestRoundTripPublic(t *testing.T) {
	k := newKey(t).Public()
	p, err := EncodePublicKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(p, []byte("-----BEGIN PUBLIC KEY-----\n")) {
		t.Fatalf("not an SPKI PEM block:\n%s", p)
	}
	got, err := ParsePublicKey(p)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(k) {
		t.Fatal("SPKI round trip changed the key")
	}
}

func TestRejects(t *testing.T) {
	k := newKey(t)
	priv, _ := EncodePrivateKey(k)
	pub, _ := EncodePublicKey(k.Public())
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p256DER, err := smx509.MarshalPKCS8PrivateKey(p256)
	if err != nil {
		t.Fatal(err)
	}
	p256Pub, err := smx509.MarshalPKIXPublicKey(&p256.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := bytes.Replace(priv, []byte("MIG"), []byte("MIH"), 1)
	for _, c := range []struct {
		name, in, want string
		pub            bool
	}{
		{"empty", "", "no valid PEM block", false},
		{"base64 line", k.Encode(), "no valid PEM block", false},
		{"two keys", string(priv) + string(priv), "more than one PEM block", false},
		{"trailing text", string(priv) + "garbage\n", "text after the PEM block", false},
		{"public as private", string(pub), "this is a public key", false},
		{"private as public", string(priv), "this is a private key", true},
		{"encrypted", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n", "encrypted", false},
		{"legacy encrypted", "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00000000000000000000000000000000\n\nAAAA\n-----END EC PRIVATE KEY-----\n", "encrypted", false},
		{"certificate", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "not a private key", false},
		{"P-256 private", string(pem.EncodeToMemory(&pem.Block{Type: TypePKCS8, Bytes: p256DER})), "not an SM2 key", false},
		{"P-256 public", string(pem.EncodeToMemory(&pem.Block{Type: TypePublic, Bytes: p256Pub})), "not an SM2 key", true},
		{"corrupt DER", string(corrupt), "PRIVATE KEY block", false},
	} {
		var err error
		if c.pub {
			_, err = ParsePublicKey([]byte(c.in))
		} else {
			_, err = ParsePrivateKey([]byte(c.in))
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
	}
	if _, err := ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: TypePKCS8, Bytes: p256DER})); !errors.Is(err, ErrNotSM2) {
		t.Errorf("P-256 key: err = %v, want ErrNotSM2", err)
	}
}

func TestIsPEM(t *testing.T) {
	for in, want := range map[string]bool{
		"  \n-----BEGIN PRIVATE KEY-----\n": true,
		"-----BEGIN PUBLIC KEY-----":        true,
		"AAAA=":                             false,
		"":                                  false,
		"-----BEGINX":                       false,
	} {
		if got := IsPEM([]byte(in)); got != want {
			t.Errorf("IsPEM(%q) = %v, want %v", in, got, want)
		}
	}
}

// openssl runs Debian's openssl with args and returns its standard output.
func openssl(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("openssl", args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// TestOpenSSLKeyReadByGmtun: a key made by openssl gives, in gmtun, the
// public point that `openssl pkey -pubout` prints — for PKCS#8 as genpkey
// writes it and for SEC 1 as `openssl ec` and `openssl ecparam -genkey`
// write it.
func TestOpenSSLKeyReadByGmtun(t *testing.T) {
	testenv.RequireTools(t, "openssl")
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "sm2.pem")
	openssl(t, nil, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:SM2", "-out", keyFile)
	pkcs8, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	wantPub, err := ParsePublicKey(openssl(t, nil, "pkey", "-in", keyFile, "-pubout"))
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]byte{
		"genpkey PKCS#8":  pkcs8,
		"openssl ec SEC1": openssl(t, nil, "ec", "-in", keyFile),
	}
	// `openssl ecparam -genkey` writes the parameters block, then SEC 1.
	ecparam := openssl(t, nil, "ecparam", "-genkey", "-name", "SM2")
	ecparamPub, err := ParsePublicKey(openssl(t, ecparam, "pkey", "-pubout"))
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range inputs {
		k, err := ParsePrivateKey(in)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, in)
		}
		if !k.Public().Equal(wantPub) {
			t.Errorf("%s: gmtun derives %s, openssl pkey -pubout prints %s", name, k.Public(), wantPub)
		}
	}
	k, err := ParsePrivateKey(ecparam)
	if err != nil {
		t.Fatalf("ecparam -genkey: %v", err)
	}
	if !k.Public().Equal(ecparamPub) {
		t.Errorf("ecparam -genkey: gmtun derives %s, openssl prints %s", k.Public(), ecparamPub)
	}
	// The point itself, independently of this package's SPKI parser: the
	// last 65 bytes of openssl's DER are 04 ‖ x ‖ y.
	der := openssl(t, nil, "pkey", "-in", keyFile, "-pubout", "-outform", "DER")
	raw := wantPub.Bytes()
	if !bytes.Equal(der[len(der)-64:], raw[:]) || der[len(der)-65] != 4 {
		t.Errorf("openssl's SPKI point %x differs from gmtun's x‖y %x", der[len(der)-65:], raw)
	}
}

// TestGmtunKeyReadByOpenSSL: a key gmtun writes is read by openssl, which
// derives the same public key, and gmtun's SPKI is what openssl writes.
func TestGmtunKeyReadByOpenSSL(t *testing.T) {
	testenv.RequireTools(t, "openssl")
	k := newKey(t)
	priv, err := EncodePrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	openssl(t, priv, "pkey", "-noout")
	text := openssl(t, priv, "pkey", "-noout", "-text")
	if !bytes.Contains(text, []byte("SM2")) {
		t.Errorf("openssl does not see an SM2 key:\n%s", text)
	}
	fromOpenSSL := openssl(t, priv, "pkey", "-pubout")
	pub, err := EncodePublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromOpenSSL, pub) {
		t.Errorf("openssl pkey -pubout:\n%s\ngmtun:\n%s", fromOpenSSL, pub)
	}
	// openssl reads gmtun's public key too.
	openssl(t, pub, "pkey", "-pubin", "-noout")
}
