package cryptotest

import (
	"bytes"
	"crypto/cipher"
	"testing"
)

// TestBlock checks the cipher.Block contract of the blocks mk returns
// (each call a fresh Block with the same key) for a cipher with the given
// block size. It checks that:
//   - BlockSize reports blockSize and Decrypt inverts Encrypt;
//   - Encrypt and Decrypt are deterministic, work in place, do not modify
//     src, read only the first block of src and write only the first block
//     of dst;
//   - short buffers and inexactly overlapping buffers panic.
func TestBlock(t *testing.T, blockSize int, mk func() cipher.Block) {
	if bs := mk().BlockSize(); bs != blockSize {
		t.Fatalf("BlockSize() = %d, want %d", bs, blockSize)
	}
	ops := []struct {
		name string
		f    func(b cipher.Block, dst, src []byte)
	}{
		{"Encrypt", cipher.Block.Encrypt},
		{"Decrypt", cipher.Block.Decrypt},
	}
	t.Run("Roundtrip", func(t *testing.T) {
		rng := newRand("block roundtrip")
		b := mk()
		for range 256 {
			src := randomBytes(rng, blockSize)
			ct := make([]byte, blockSize)
			b.Encrypt(ct, src)
			if bytes.Equal(ct, src) {
				t.Fatalf("Encrypt(%x) is the identity", src)
			}
			pt := make([]byte, blockSize)
			b.Decrypt(pt, ct)
			if !bytes.Equal(pt, src) {
				t.Fatalf("Decrypt(Encrypt(%x)) = %x", src, pt)
			}
		}
	})
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			rng := newRand("block " + op.name)
			b := mk()
			for range 64 {
				src := randomBytes(rng, blockSize)
				want := make([]byte, blockSize)
				mustNotModify(t, op.name, func() { op.f(b, want, src) }, src)
				again := make([]byte, blockSize)
				op.f(mk(), again, src)
				if !bytes.Equal(again, want) {
					t.Fatal("not deterministic across Block objects")
				}
				buf := bytes.Clone(src)
				op.f(b, buf, buf)
				if !bytes.Equal(buf, want) {
					t.Fatal("in-place result differs")
				}
				// Longer buffers: only the first block is read and written.
				longSrc := append(bytes.Clone(src), randomBytes(rng, blockSize+3)...)
				longDst := bytes.Repeat([]byte{0x5a}, 2*blockSize+3)
				op.f(b, longDst, longSrc)
				if !bytes.Equal(longDst[:blockSize], want) {
					t.Fatal("result with longer src differs")
				}
				if !bytes.Equal(longDst[blockSize:], bytes.Repeat([]byte{0x5a}, blockSize+3)) {
					t.Fatal("wrote past the first block of dst")
				}
			}
		})
	}
	t.Run("Panics", func(t *testing.T) {
		b := mk()
		full := make([]byte, blockSize)
		short := make([]byte, blockSize-1)
		buf := make([]byte, 2*blockSize)
		for _, op := range ops {
			mustPanic(t, op.name+" with short src", func() { op.f(b, full, short) })
			mustPanic(t, op.name+" with short dst", func() { op.f(b, short, full) })
			mustPanic(t, op.name+" with nil buffers", func() { op.f(b, nil, nil) })
			mustPanic(t, op.name+" with dst = src[1:]", func() { op.f(b, buf[1:1+blockSize], buf[:blockSize]) })
			mustPanic(t, op.name+" with src = dst[1:]", func() { op.f(b, buf[:blockSize], buf[1:1+blockSize]) })
		}
	})
}
