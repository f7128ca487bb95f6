package sm4

import (
	"strconv"

	"github.com/gmtun/gmtun/ciphers/internal/aead"
)

// KeySizeError is returned for a key whose length is not KeySize.
type KeySizeError int

// Error implements error.
func (k KeySizeError) Error() string {
	return "sm4: invalid key size " + strconv.Itoa(int(k)) + " (want 16)"
}

// Cipher is an SM4 key schedule: the 32 round keys of GB/T 32907-2016 §7.3
// in encryption order and in decryption order. It implements cipher.Block
// and is immutable after NewCipher, hence safe for concurrent use.
type Cipher struct {
	enc, dec [32]uint32
}

// NewCipher expands key (KeySize bytes) into a Cipher.
func NewCipher(key []byte) (*Cipher, error) {
	c := new(Cipher)
	if err := c.init(key); err != nil {
		return nil, err
	}
	return c, nil
}

// init expands key into c.
func (c *Cipher) init(key []byte) error {
	if len(key) != KeySize {
		return KeySizeError(len(key))
	}
	expandKeyGeneric(key, &c.enc, &c.dec)
	return nil
}

// BlockSize returns BlockSize.
func (c *Cipher) BlockSize() int { return BlockSize }

// Encrypt encrypts the first block of src into dst (GB/T 32907-2016 §7.1).
// It panics if either is shorter than a block or if they overlap inexactly.
func (c *Cipher) Encrypt(dst, src []byte) {
	checkBlock(dst, src)
	cryptBlock(&c.enc, dst, src)
}

// Decrypt decrypts the first block of src into dst (GB/T 32907-2016 §7.2).
// It panics if either is shorter than a block or if they overlap inexactly.
func (c *Cipher) Decrypt(dst, src []byte) {
	checkBlock(dst, src)
	cryptBlock(&c.dec, dst, src)
}

// EncryptBlocks encrypts every block of src into dst (ECB over whole
// blocks). It panics if len(src) is not a multiple of BlockSize, dst is
// shorter than src, or they overlap inexactly.
func (c *Cipher) EncryptBlocks(dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic("sm4: input not full blocks")
	}
	if len(dst) < len(src) {
		panic("sm4: output smaller than input")
	}
	if aead.InexactOverlap(dst[:len(src)], src) {
		panic("sm4: invalid buffer overlap")
	}
	encryptBlocks(&c.enc, dst, src)
}

// checkBlock enforces the cipher.Block contract for one block.
func checkBlock(dst, src []byte) {
	if len(src) < BlockSize {
		panic("sm4: input not full block")
	}
	if len(dst) < BlockSize {
		panic("sm4: output not full block")
	}
	if aead.InexactOverlap(dst[:BlockSize], src[:BlockSize]) {
		panic("sm4: invalid buffer overlap")
	}
}
