package cryptotest

import (
	"crypto/aes"
	"crypto/cipher"
	"testing"
)

// The suite must accept the standard library's AES implementations, whose
// contracts it encodes; this keeps its expectations honest.

var aesKey = []byte("0123456789abcdef")

func newAES(t *testing.T) cipher.Block {
	b, err := aes.NewCipher(aesKey)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSuiteAcceptsStdBlock(t *testing.T) {
	TestBlock(t, aes.BlockSize, func() cipher.Block { return newAES(t) })
}

func TestSuiteAcceptsStdStream(t *testing.T) {
	iv := []byte("fedcba9876543210")
	TestStream(t, func() cipher.Stream { return cipher.NewCTR(newAES(t), iv) })
}

func TestSuiteAcceptsStdAEAD(t *testing.T) {
	TestAEAD(t, func() cipher.AEAD {
		a, err := cipher.NewGCM(newAES(t))
		if err != nil {
			t.Fatal(err)
		}
		return a
	})
}
