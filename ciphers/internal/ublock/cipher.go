package ublock

import "github.com/gmtun/gmtun/ciphers/internal/aead"

// Cipher is a uBlock key schedule of one variant. It implements
// cipher.Block (and EncryptBlocks/DecryptBlocks for many blocks at once)
// and is immutable after NewCipher or NewCipher256, hence safe for
// concurrent use.
type Cipher struct {
	s Schedule
}

// NewCipher expands key into a Cipher with 128-bit blocks: a 16-byte key
// gives uBlock-128/128, a 32-byte key uBlock-128/256.
func NewCipher(key []byte) (*Cipher, error) {
	c := new(Cipher)
	if err := initSchedule(&c.s, key, BlockSize); err != nil {
		return nil, err
	}
	return c, nil
}

// NewCipher256 expands a 32-byte key into a uBlock-256/256 Cipher (256-bit
// blocks).
func NewCipher256(key []byte) (*Cipher, error) {
	c := new(Cipher)
	if err := initSchedule(&c.s, key, BlockSize256); err != nil {
		return nil, err
	}
	return c, nil
}

// BlockSize returns the block size in bytes (16 or 32).
func (c *Cipher) BlockSize() int { return c.s.BlockSize }

// Rounds returns the number of rounds (16 or 24).
func (c *Cipher) Rounds() int { return c.s.Rounds }

// Encrypt encrypts the first block of src into dst. It panics if either is
// shorter than a block or if they overlap inexactly.
func (c *Cipher) Encrypt(dst, src []byte) {
	c.checkBlock(dst, src)
	encryptBlocks(&c.s, dst[:c.s.BlockSize], src[:c.s.BlockSize])
}

// Decrypt decrypts the first block of src into dst. It panics if either is
// shorter than a block or if they overlap inexactly.
func (c *Cipher) Decrypt(dst, src []byte) {
	c.checkBlock(dst, src)
	decryptBlocks(&c.s, dst[:c.s.BlockSize], src[:c.s.BlockSize])
}

// EncryptBlocks encrypts every block of src into dst (ECB over whole
// blocks). It panics if len(src) is not a multiple of the block size, dst
// is shorter than src, or they overlap inexactly.
func (c *Cipher) EncryptBlocks(dst, src []byte) {
	c.checkBlocks(dst, src)
	encryptBlocks(&c.s, dst[:len(src)], src)
}

// DecryptBlocks decrypts every block of src into dst (ECB); it panics as
// EncryptBlocks does.
func (c *Cipher) DecryptBlocks(dst, src []byte) {
	c.checkBlocks(dst, src)
	decryptBlocks(&c.s, dst[:len(src)], src)
}

// checkBlock enforces the cipher.Block contract for one block.
func (c *Cipher) checkBlock(dst, src []byte) {
	n := c.s.BlockSize
	if len(src) < n {
		panic("ublock: input not full block")
	}
	if len(dst) < n {
		panic("ublock: output not full block")
	}
	if aead.InexactOverlap(dst[:n], src[:n]) {
		panic("ublock: invalid buffer overlap")
	}
}

// checkBlocks enforces the contract of EncryptBlocks and DecryptBlocks.
func (c *Cipher) checkBlocks(dst, src []byte) {
	if len(src)%c.s.BlockSize != 0 {
		panic("ublock: input not full blocks")
	}
	if len(dst) < len(src) {
		panic("ublock: output smaller than input")
	}
	if aead.InexactOverlap(dst[:len(src)], src) {
		panic("ublock: invalid buffer overlap")
	}
}
