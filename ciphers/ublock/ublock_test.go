package ublock

import (
	"bytes"
	"crypto/cipher"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/cryptotest"
	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	"github.com/gmtun/gmtun/ciphers/internal/ublock"
)

// The public API: the project's conformance suites for cipher.Block and
// cipher.AEAD, the published vectors through the public constructors, and
// argument errors; each once per implementation tier.

var (
	testKey128 = []byte("gmtun ublock 128")
	testKey256 = []byte("gmtun ublock 256-bit key tests!!")
)

func TestAllImplementations(t *testing.T) {
	impltest.TestAllImplementations(t, ublock.ImplPackage, func(t *testing.T) {
		t.Run("BlockConformance", TestBlockConformance)
		t.Run("GCMConformance", TestGCMConformance)
		t.Run("Vectors", TestVectors)
	})
}

func TestBlockConformance(t *testing.T) {
	for _, c := range []struct {
		name string
		size int
		mk   func() (Block, error)
	}{
		{"128/128", BlockSize, func() (Block, error) { return NewCipher(testKey128) }},
		{"128/256", BlockSize, func() (Block, error) { return NewCipher(testKey256) }},
		{"256/256", BlockSize256, func() (Block, error) { return NewCipher256(testKey256) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cryptotest.TestBlock(t, c.size, func() cipher.Block {
				b, err := c.mk()
				if err != nil {
					t.Fatal(err)
				}
				return b
			})
		})
	}
}

func TestGCMConformance(t *testing.T) {
	for name, key := range map[string][]byte{"128/128": testKey128, "128/256": testKey256} {
		t.Run(name, func(t *testing.T) {
			cryptotest.TestAEAD(t, func() cipher.AEAD {
				a, err := NewGCM(key)
				if err != nil {
					t.Fatal(err)
				}
				return a
			})
		})
	}
}

// TestVectors runs every vector of testdata/ublock/ublock.json through the
// public constructors, single blocks and EncryptBlocks over repeated
// copies.
func TestVectors(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/ublock/ublock.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors map[string][]struct{ Key, Plaintext, Ciphertext string }
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	n := 0
	for variant, vs := range f.Vectors {
		for _, v := range vs {
			key, _ := hex.DecodeString(v.Key)
			pt, _ := hex.DecodeString(v.Plaintext)
			ct, _ := hex.DecodeString(v.Ciphertext)
			var b Block
			if variant == "uBlock-256/256" {
				b, err = NewCipher256(key)
			} else {
				b, err = NewCipher(key)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(pt))
			b.Encrypt(got, pt)
			if !bytes.Equal(got, ct) {
				t.Errorf("%s key %s: %x, want %x", variant, v.Key, got, ct)
			}
			b.Decrypt(got, ct)
			if !bytes.Equal(got, pt) {
				t.Errorf("%s key %s: decrypt %x, want %x", variant, v.Key, got, pt)
			}
			many := bytes.Repeat(pt, 9)
			b.EncryptBlocks(many, many)
			if !bytes.Equal(many, bytes.Repeat(ct, 9)) {
				t.Errorf("%s key %s: EncryptBlocks differs", variant, v.Key)
			}
			b.DecryptBlocks(many, many)
			if !bytes.Equal(many, bytes.Repeat(pt, 9)) {
				t.Errorf("%s key %s: DecryptBlocks differs", variant, v.Key)
			}
			n++
		}
	}
	if n != 39 {
		t.Fatalf("%d vectors, want 39", n)
	}
}

// TestSizeErrors checks that wrong key lengths are errors of the
// documented type, never panics.
func TestSizeErrors(t *testing.T) {
	for _, n := range []int{0, 1, 15, 17, 24, 31, 33, 64} {
		key := make([]byte, n)
		var ke KeySizeError
		if _, err := NewCipher(key); !errors.As(err, &ke) || int(ke) != n {
			t.Errorf("NewCipher(%d-byte key): %v", n, err)
		}
		if _, err := NewCipher256(key); !errors.As(err, &ke) || int(ke) != n {
			t.Errorf("NewCipher256(%d-byte key): %v", n, err)
		}
		if _, err := NewGCM(key); !errors.As(err, &ke) || int(ke) != n {
			t.Errorf("NewGCM(%d-byte key): %v", n, err)
		}
	}
	if _, err := NewCipher256(testKey128); err == nil {
		t.Error("NewCipher256 took a 16-byte key")
	}
	for _, k := range [][]byte{testKey128, testKey256} {
		b, err := NewCipher(k)
		if err != nil || b.BlockSize() != BlockSize {
			t.Errorf("NewCipher(%d-byte key): %v", len(k), err)
		}
	}
	if b, err := NewCipher256(testKey256); err != nil || b.BlockSize() != BlockSize256 {
		t.Errorf("NewCipher256: %v", err)
	}
}
