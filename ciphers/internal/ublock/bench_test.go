package ublock

import (
	"strconv"
	"testing"

	"github.com/gmtun/gmtun/internal/cputime"
)

// Benchmarks of the dispatched primitives (the generic code under purego
// or when no kernel tier is enabled). cputime.Loop reports the thread's
// CPU time besides wall time ("cpu-MB/s"), which is what to quote on a
// shared machine.

func benchECB(b *testing.B, newc func([]byte) (*Cipher, error), keyLen, n int) {
	c, err := newc(make([]byte, keyLen))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, n)
	cputime.Loop(b, n, func() { c.EncryptBlocks(buf, buf) })
}

func BenchmarkECB128x128(b *testing.B) { benchECB(b, NewCipher, 16, 4096) }
func BenchmarkECB128x256(b *testing.B) { benchECB(b, NewCipher, 32, 4096) }
func BenchmarkECB256x256(b *testing.B) { benchECB(b, NewCipher256, 32, 4096) }

func BenchmarkDecrypt128x128(b *testing.B) {
	c, _ := NewCipher(make([]byte, 16))
	buf := make([]byte, 4096)
	cputime.Loop(b, len(buf), func() { c.DecryptBlocks(buf, buf) })
}

func BenchmarkCTR1420(b *testing.B) {
	c, _ := NewCipher(make([]byte, 16))
	buf := make([]byte, 1420)
	var ctr [16]byte
	cputime.Loop(b, len(buf), func() { ctr32XOR(&c.s, &ctr, buf, buf) })
}

func BenchmarkGCMSeal1420(b *testing.B) {
	g, _ := NewGCM(make([]byte, 16))
	buf := make([]byte, 16+1420+TagSize)
	var nonce [NonceSize]byte
	tag := (*[TagSize]byte)(buf[16+1420:])
	cputime.Loop(b, 1420, func() { g.Seal(buf[16:16+1420], tag, &nonce, buf[16:16+1420], buf[:16]) })
}

func BenchmarkGCMSealBatch(b *testing.B) {
	for _, size := range []int{64, 576, 1420} {
		b.Run("64x"+strconv.Itoa(size), func(b *testing.B) {
			g, _ := NewGCM(make([]byte, 16))
			ps := make([]Packet, 64)
			for i := range ps {
				buf := make([]byte, 16+size+TagSize)
				ps[i] = Packet{AAD: buf[:16], Text: buf[16 : 16+size], Tag: (*[TagSize]byte)(buf[16+size:])}
				ps[i].Nonce[11] = byte(i)
			}
			cputime.Loop(b, 64*size, func() { g.SealBatch(ps) })
		})
	}
}

func BenchmarkGCMOpenBatch64x1420(b *testing.B) {
	g, _ := NewGCM(make([]byte, 16))
	ps := make([]Packet, 64)
	saved := make([][]byte, 64)
	for i := range ps {
		buf := make([]byte, 16+1420+TagSize)
		ps[i] = Packet{AAD: buf[:16], Text: buf[16 : 16+1420], Tag: (*[TagSize]byte)(buf[16+1420:])}
		ps[i].Nonce[11] = byte(i)
	}
	g.SealBatch(ps)
	for i := range ps {
		saved[i] = append([]byte(nil), ps[i].Text...)
	}
	ok := make([]bool, 64)
	cputime.Loop(b, 64*1420, func() {
		for i := range ps {
			copy(ps[i].Text, saved[i])
		}
		g.OpenBatch(ps, ok)
	})
	for i := range ok {
		if !ok[i] {
			b.Fatalf("packet %d did not verify", i)
		}
	}
}

func BenchmarkGCMSeal64(b *testing.B) {
	g, _ := NewGCM(make([]byte, 16))
	buf := make([]byte, 16+64+TagSize)
	var nonce [NonceSize]byte
	tag := (*[TagSize]byte)(buf[16+64:])
	cputime.Loop(b, 64, func() { g.Seal(buf[16:16+64], tag, &nonce, buf[16:16+64], buf[:16]) })
}
