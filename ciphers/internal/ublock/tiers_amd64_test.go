//go:build amd64 && gc && !purego

package ublock

import (
	"bytes"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
)

// FuzzTiersAgree compares every tier this CPU has with the generic code on
// one input: ECB encryption and decryption (any variant) and the CTR32
// keystream (128-bit block).
func FuzzTiersAgree(f *testing.F) {
	f.Add(byte(0), make([]byte, 32), make([]byte, 16), make([]byte, 1420))
	f.Add(byte(1), bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0xff}, 16), make([]byte, 33))
	f.Add(byte(2), make([]byte, 32), make([]byte, 16), make([]byte, 1024))
	f.Fuzz(func(t *testing.T, variant byte, key, ctr0, data []byte) {
		v := variants[int(variant)%len(variants)]
		if len(key) < v.keyLen || len(ctr0) < 16 || len(data) > 1<<16 {
			t.Skip()
		}
		s := newSchedule(t, key[:v.keyLen], v.blkLen)
		var ctr [16]byte
		copy(ctr[:], ctr0)
		ecbIn := data[:len(data)/v.blkLen*v.blkLen]

		run := func() (enc, dec, ks []byte, c [16]byte) {
			enc = make([]byte, len(ecbIn))
			dec = make([]byte, len(ecbIn))
			encryptBlocks(s, enc, ecbIn)
			decryptBlocks(s, dec, ecbIn)
			if v.blkLen != BlockSize {
				return
			}
			c = ctr
			ks = make([]byte, len(data))
			ctr32XOR(s, &c, ks, data)
			return
		}
		impl.Select(ImplPackage, impl.Generic)
		gEnc, gDec, gKS, gCtr := run()
		impl.Reset(ImplPackage)
		defer impl.Reset(ImplPackage)
		for _, name := range impl.List(ImplPackage) {
			if !impl.Select(ImplPackage, name) {
				continue
			}
			enc, dec, ks, c := run()
			if !bytes.Equal(enc, gEnc) || !bytes.Equal(dec, gDec) {
				t.Fatalf("%s: ECB differs from generic (%s, %d bytes)", name, v.name, len(ecbIn))
			}
			if !bytes.Equal(ks, gKS) || c != gCtr {
				t.Fatalf("%s: CTR32 differs from generic (%d bytes)", name, len(data))
			}
		}
	})
}
