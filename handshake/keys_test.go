package handshake

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKeysVectorPublic(t *testing.T) {
	v := loadKexVector(t)
	d, err := NewPrivateKey(mustHex(t, v.DA))
	if err != nil {
		t.Fatal(err)
	}
	want := mustHex(t, v.PA.X+v.PA.Y)
	got := d.Public().Bytes()
	if !bytes.Equal(got[:], want) {
		t.Fatalf("public key of d_a = %x, want %x", got, want)
	}
}

func TestKeysRoundTrip(t *testing.T) {
	rnd := bytes.NewReader(bytes.Repeat([]byte{0x5a}, 64))
	k, err := GeneratePrivateKey(rnd)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k.Bytes(), bytes.Repeat([]byte{0x5a}, 32)) {
		t.Fatalf("GeneratePrivateKey did not use the first 32 bytes: %x", k.Bytes())
	}
	s := k.Encode()
	if len(s) != 44 {
		t.Fatalf("private key text length %d", len(s))
	}
	k2, err := ParsePrivateKey("  \n" + s + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if !k.Equal(k2) || k2.Encode() != s {
		t.Fatal("private key round trip mismatch")
	}
	ps := k.Public().String()
	if len(ps) != 88 {
		t.Fatalf("public key text length %d", len(ps))
	}
	p2, err := ParsePublicKey(ps + "\t")
	if err != nil {
		t.Fatal(err)
	}
	if !p2.Equal(k.Public()) || p2.String() != ps {
		t.Fatal("public key round trip mismatch")
	}
	if p2.Equal(nil) {
		t.Fatal("Equal(nil) = true")
	}
	other, _ := GeneratePrivateKey(bytes.NewReader(bytes.Repeat([]byte{0x11}, 32)))
	if other.Public().Equal(p2) || other.Equal(k) {
		t.Fatal("different keys compare equal")
	}
}

func TestGeneratePrivateKeyRejectionSampling(t *testing.T) {
	// First candidate all-0xff (≥ n−1) must be skipped, second used.
	src := append(bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0x01}, 32)...)
	k, err := GeneratePrivateKey(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k.Bytes(), bytes.Repeat([]byte{0x01}, 32)) {
		t.Fatalf("got %x", k.Bytes())
	}
	if _, err := GeneratePrivateKey(bytes.NewReader(make([]byte, 10))); err == nil {
		t.Fatal("short reader accepted")
	}
}

func TestParseKeyErrors(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	nMinus1 := mustHex(t, "fffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54122")
	n := mustHex(t, "fffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54123")
	valid, _ := GeneratePrivateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 32)))
	vp := valid.Public().Bytes()
	offCurve := vp
	offCurve[63] ^= 1
	p := mustHex(t, "fffffffeffffffffffffffffffffffffffffffff00000000ffffffffffffffff")
	// x' = x + p is a non-canonical coordinate encoding of the same field element;
	// it only fits in 32 bytes when x < 2^256 − p, so use x = 1 with any y.
	xGeP := make([]byte, 64)
	copy(xGeP, p)
	xGeP[31]++
	privCases := []struct {
		name, in string
		want     error
		msg      string
	}{
		{"empty", "  ", ErrKeyLength, "empty"},
		{"not base64", "!!!!", ErrKeyEncoding, ""},
		{"unpadded", strings.TrimRight(b64(bytes.Repeat([]byte{1}, 32)), "="), ErrKeyEncoding, ""},
		{"short", b64(make([]byte, 31)), ErrKeyLength, "32 bytes"},
		{"long", b64(make([]byte, 33)), ErrKeyLength, "32 bytes"},
		{"zero", b64(make([]byte, 32)), ErrKeyRange, "[1, n-2]"},
		{"n-1", b64(nMinus1), ErrKeyRange, ""},
		{"n", b64(n), ErrKeyRange, ""},
		{"url alphabet", strings.NewReplacer("+", "-", "/", "_").Replace(b64(bytes.Repeat([]byte{0xfb}, 32))), ErrKeyEncoding, ""},
	}
	for _, c := range privCases {
		_, err := ParsePrivateKey(c.in)
		if !errors.Is(err, c.want) {
			t.Errorf("ParsePrivateKey(%s) = %v, want %v", c.name, err, c.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), "handshake: ") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParsePrivateKey(%s) message %q", c.name, err)
		}
	}
	// Non-canonical trailing bits: 32 bytes use 43 chars + "="; the last char
	// carries 2 unused bits. Strict decoding must reject set unused bits.
	s := b64(bytes.Repeat([]byte{1}, 32))
	nc := s[:42] + string(rune(s[42]+1)) + "="
	if _, err := ParsePrivateKey(nc); !errors.Is(err, ErrKeyEncoding) {
		t.Errorf("non-canonical trailing bits: %v", err)
	}

	pubCases := []struct {
		name, in string
		want     error
	}{
		{"short", b64(vp[:63]), ErrKeyLength},
		{"sec1 65", b64(append([]byte{4}, vp[:]...)), ErrKeyLength},
		{"off curve", b64(offCurve[:]), ErrPointInvalid},
		{"zero point", b64(make([]byte, 64)), ErrPointInvalid},
		{"x >= p", b64(xGeP), ErrPointInvalid},
		{"garbage", "abc", ErrKeyEncoding},
	}
	for _, c := range pubCases {
		if _, err := ParsePublicKey(c.in); !errors.Is(err, c.want) {
			t.Errorf("ParsePublicKey(%s) = %v, want %v", c.name, err, c.want)
		}
	}
}
