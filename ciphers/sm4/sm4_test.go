package sm4

import (
	"crypto/cipher"
	"errors"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/cryptotest"
)

// testKey is a fixed key for the conformance tests.
var testKey = []byte("gmtun sm4 tests!")

func TestBlockConformance(t *testing.T) {
	cryptotest.TestBlock(t, BlockSize, func() cipher.Block {
		b, err := NewCipher(testKey)
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

func TestCTRConformance(t *testing.T) {
	for name, iv := range map[string][]byte{
		"iv":         []byte("0123456789abcdef"),
		"wrap64":     {0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0},
		"wrap128all": {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe},
	} {
		t.Run(name, func(t *testing.T) {
			cryptotest.TestStream(t, func() cipher.Stream {
				s, err := NewCTR(testKey, iv)
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}

func TestGCMConformance(t *testing.T) {
	cryptotest.TestAEAD(t, func() cipher.AEAD {
		a, err := NewGCM(testKey)
		if err != nil {
			t.Fatal(err)
		}
		return a
	})
}

// TestSizeErrors checks that wrong key and IV lengths are errors of the
// documented types, never panics.
func TestSizeErrors(t *testing.T) {
	for _, n := range []int{0, 1, 15, 17, 24, 32} {
		key := make([]byte, n)
		var ke KeySizeError
		if _, err := NewCipher(key); !errors.As(err, &ke) || int(ke) != n {
			t.Errorf("NewCipher(%d-byte key): %v", n, err)
		}
		if _, err := NewGCM(key); !errors.As(err, &ke) {
			t.Errorf("NewGCM(%d-byte key): %v", n, err)
		}
		if _, err := NewCTR(key, make([]byte, 16)); !errors.As(err, &ke) {
			t.Errorf("NewCTR(%d-byte key): %v", n, err)
		}
		var ie IVSizeError
		if _, err := NewCTR(make([]byte, 16), make([]byte, n)); !errors.As(err, &ie) || int(ie) != n {
			t.Errorf("NewCTR(%d-byte IV): %v", n, err)
		}
	}
	if err := KeySizeError(3); err.Error() != "sm4: invalid key size 3, want 16" {
		t.Errorf("KeySizeError text %q", err.Error())
	}
}

// TestGCMParameters checks the fixed RFC 8998 sizes.
func TestGCMParameters(t *testing.T) {
	a, _ := NewGCM(testKey)
	if a.NonceSize() != 12 || a.Overhead() != 16 {
		t.Errorf("nonceSize %d, Overhead %d; want 12, 16", a.NonceSize(), a.Overhead())
	}
}
