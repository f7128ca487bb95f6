package sm4

import (
	"bytes"
	"crypto/cipher"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

// vectorFile is the common shape of testdata/vectors/sm4*.json (see the
// README there for provenance).
type vectorFile struct {
	Algorithm string `json:"algorithm"`
	Vectors   []struct {
		ID         string `json:"id"`
		Mode       string `json:"mode"`
		Key        string `json:"key"`
		IV         string `json:"iv"`
		AAD        string `json:"aad"`
		Plaintext  string `json:"plaintext"`
		Ciphertext string `json:"ciphertext"`
		Tag        string `json:"tag"`
		TagBits    int    `json:"tag_bits"`
		Iterations int    `json:"iterations"`
		Segment    int    `json:"segment_bits"`
	} `json:"vectors"`
}

// loadVectors reads ../../testdata/vectors/name.
func loadVectors(t *testing.T, name string) vectorFile {
	t.Helper()
	data, err := os.ReadFile("../../testdata/vectors/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var f vectorFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(f.Vectors) == 0 {
		t.Fatalf("%s: no vectors", name)
	}
	return f
}

// unhex decodes s, failing the test on bad input.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBlockVectors checks GB/T 32907-2016 Appendix A (including the
// 1,000,000-fold encryption of example 2) and draft-ribose A.1.4. Under
// -short the million-iteration vector runs 10,000 iterations forward and
// checks that decrypting as often returns the plaintext.
func TestBlockVectors(t *testing.T) {
	f := loadVectors(t, "sm4.json")
	for _, v := range f.Vectors {
		key, pt, want := unhex(t, v.Key), unhex(t, v.Plaintext), unhex(t, v.Ciphertext)
		b, err := NewCipher(key)
		if err != nil {
			t.Fatal(err)
		}
		n := v.Iterations
		short := testing.Short() && n > 10000
		if short {
			n = 10000
		}
		buf := bytes.Clone(pt)
		for range n {
			b.Encrypt(buf, buf)
		}
		if short {
			if bytes.Equal(buf, pt) {
				t.Errorf("%s: 10,000 encryptions gave the plaintext back", v.ID)
			}
			for range n {
				b.Decrypt(buf, buf)
			}
			if !bytes.Equal(buf, pt) {
				t.Errorf("%s: 10,000 decryptions did not invert 10,000 encryptions", v.ID)
			}
			continue
		}
		if !bytes.Equal(buf, want) {
			t.Errorf("%s: E^%d(P) = %x, want %x", v.ID, n, buf, want)
		}
		if n == 1 {
			got := make([]byte, 16)
			b.Decrypt(got, want)
			if !bytes.Equal(got, pt) {
				t.Errorf("%s: D(C) = %x, want %x", v.ID, got, pt)
			}
		}
	}
}

// TestModeVectors runs the draft-ribose A.2 ECB/CBC/OFB/CFB vectors
// through crypto/cipher on this package's Block, and the CTR vectors
// through NewCTR (and crypto/cipher.NewCTR for comparison).
func TestModeVectors(t *testing.T) {
	f := loadVectors(t, "sm4_modes.json")
	seen := map[string]int{}
	for _, v := range f.Vectors {
		key, pt, want := unhex(t, v.Key), unhex(t, v.Plaintext), unhex(t, v.Ciphertext)
		iv := unhex(t, v.IV)
		b, err := NewCipher(key)
		if err != nil {
			t.Fatal(err)
		}
		enc, dec := make([]byte, len(pt)), make([]byte, len(pt))
		switch v.Mode {
		case "ECB":
			for i := 0; i < len(pt); i += BlockSize {
				b.Encrypt(enc[i:], pt[i:])
				b.Decrypt(dec[i:], want[i:])
			}
		case "CBC":
			cipher.NewCBCEncrypter(b, iv).CryptBlocks(enc, pt)
			cipher.NewCBCDecrypter(b, iv).CryptBlocks(dec, want)
		case "OFB":
			//lint:ignore SA1019 the draft-ribose vectors specify OFB
			cipher.NewOFB(b, iv).XORKeyStream(enc, pt)
			//lint:ignore SA1019 the draft-ribose vectors specify OFB
			cipher.NewOFB(b, iv).XORKeyStream(dec, want)
		case "CFB":
			if v.Segment != 128 {
				t.Fatalf("%s: CFB-%d unsupported", v.ID, v.Segment)
			}
			//lint:ignore SA1019 the draft-ribose vectors specify CFB-128
			cipher.NewCFBEncrypter(b, iv).XORKeyStream(enc, pt)
			//lint:ignore SA1019 the draft-ribose vectors specify CFB-128
			cipher.NewCFBDecrypter(b, iv).XORKeyStream(dec, want)
		case "CTR":
			s, err := NewCTR(key, iv)
			if err != nil {
				t.Fatal(err)
			}
			s.XORKeyStream(enc, pt)
			s2, _ := NewCTR(key, iv)
			s2.XORKeyStream(dec, want)
			std := make([]byte, len(pt))
			cipher.NewCTR(b, iv).XORKeyStream(std, pt)
			if !bytes.Equal(std, want) {
				t.Errorf("%s: crypto/cipher CTR on our Block = %x", v.ID, std)
			}
		default:
			t.Fatalf("%s: unknown mode %q", v.ID, v.Mode)
		}
		if !bytes.Equal(enc, want) {
			t.Errorf("%s: encrypt = %x, want %x", v.ID, enc, want)
		}
		if !bytes.Equal(dec, pt) {
			t.Errorf("%s: decrypt = %x, want %x", v.ID, dec, pt)
		}
		seen[v.Mode]++
	}
	for _, m := range []string{"ECB", "CBC", "OFB", "CFB", "CTR"} {
		if seen[m] == 0 {
			t.Errorf("no %s vector ran", m)
		}
	}
}

// TestGCMVectors checks RFC 8998 Appendix A.1 through NewGCM: seal, open,
// and rejection of the vector with one tag bit flipped.
func TestGCMVectors(t *testing.T) {
	f := loadVectors(t, "sm4_gcm.json")
	for _, v := range f.Vectors {
		if v.TagBits != 128 {
			t.Fatalf("%s: %d-bit tag unsupported", v.ID, v.TagBits)
		}
		key, nonce, aad := unhex(t, v.Key), unhex(t, v.IV), unhex(t, v.AAD)
		pt, ct, tag := unhex(t, v.Plaintext), unhex(t, v.Ciphertext), unhex(t, v.Tag)
		a, err := NewGCM(key)
		if err != nil {
			t.Fatal(err)
		}
		want := append(bytes.Clone(ct), tag...)
		if got := a.Seal(nil, nonce, pt, aad); !bytes.Equal(got, want) {
			t.Errorf("%s: Seal = %x, want %x", v.ID, got, want)
		}
		if got, err := a.Open(nil, nonce, want, aad); err != nil || !bytes.Equal(got, pt) {
			t.Errorf("%s: Open = %x, %v", v.ID, got, err)
		}
		want[len(want)-1] ^= 0x80
		if _, err := a.Open(nil, nonce, want, aad); err == nil {
			t.Errorf("%s: Open accepted a flipped tag bit", v.ID)
		}
	}
}
