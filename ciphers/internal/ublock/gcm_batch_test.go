package ublock

import (
	"bytes"
	"crypto/cipher"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	"github.com/gmtun/gmtun/ciphers/internal/testinput"
)

// The batch GCM against crypto/cipher's GCM over the same block cipher,
// on every implementation: the kernels gather the tag masks and the
// leftover blocks of many packets into shared passes (gcm_amd64.go), so
// every packet length must come out right at every position in a batch.

// batchPacket is one packet of a test batch, laid out as the tunnel's
// (16-byte header right in front of the text, tag after it) or with the
// parts in separate, misaligned buffers.
type batchPacket struct {
	p            Packet
	plain, aad   []byte
	want         []byte // crypto/cipher's ciphertext ‖ tag
	tunnelLayout bool
}

func newBatchPacket(rng interface{ IntN(int) int }, std cipher.AEAD, n, aadLen int, tunnel bool, r func(int) []byte) *batchPacket {
	bp := &batchPacket{tunnelLayout: tunnel}
	copy(bp.p.Nonce[:], r(NonceSize))
	if tunnel {
		buf := r(16 + n + TagSize)
		bp.p.AAD, bp.p.Text, bp.p.Tag = buf[:16], buf[16:16+n], (*[TagSize]byte)(buf[16+n:])
	} else {
		bp.p.AAD = testinput.Unaligned(r(aadLen), rng.IntN(16))
		bp.p.Text = testinput.Unaligned(r(n), rng.IntN(16))
		bp.p.Tag = (*[TagSize]byte)(testinput.Unaligned(r(TagSize), rng.IntN(16)))
	}
	bp.plain = bytes.Clone(bp.p.Text)
	bp.aad = bytes.Clone(bp.p.AAD)
	bp.want = std.Seal(nil, bp.p.Nonce[:], bp.plain, bp.aad)
	return bp
}

// checkBatch seals bps in one SealBatch call, compares with crypto/cipher,
// corrupts some packets and opens the batch in one OpenBatch call: the
// good ones must decrypt, the corrupted ones fail and stay untouched.
func checkBatch(t *testing.T, g *GCM, bps []*batchPacket, corrupt func(i int) bool, flip func(n int) int) {
	t.Helper()
	ps := make([]Packet, len(bps))
	for i, bp := range bps {
		ps[i] = bp.p
	}
	g.SealBatch(ps)
	for i, bp := range bps {
		n := len(bp.plain)
		if !bytes.Equal(bp.p.Text, bp.want[:n]) || !bytes.Equal(bp.p.Tag[:], bp.want[n:]) {
			t.Fatalf("batch of %d: packet %d (%d bytes, tunnel layout %v) sealed differently from crypto/cipher",
				len(bps), i, n, bp.tunnelLayout)
		}
		if !bytes.Equal(bp.p.AAD, bp.aad) {
			t.Fatalf("batch of %d: packet %d: additional data modified", len(bps), i)
		}
	}
	bad := make([]bool, len(bps))
	for i, bp := range bps {
		if corrupt(i) {
			bad[i] = true
			n := len(bp.plain)
			switch k := flip(n + TagSize + len(bp.aad)); {
			case k < n:
				bp.p.Text[k] ^= 0x01
			case k < n+TagSize:
				bp.p.Tag[k-n] ^= 0x40
			default:
				bp.p.AAD[k-n-TagSize] ^= 0x80
			}
		}
	}
	sealed := make([][]byte, len(bps))
	for i, bp := range bps {
		sealed[i] = bytes.Clone(bp.p.Text)
	}
	ok := make([]bool, len(bps))
	g.OpenBatch(ps, ok)
	for i, bp := range bps {
		switch {
		case ok[i] == bad[i]:
			t.Fatalf("batch of %d: packet %d (%d bytes) ok = %v, corrupted %v", len(bps), i, len(bp.plain), ok[i], bad[i])
		case ok[i] && !bytes.Equal(bp.p.Text, bp.plain):
			t.Fatalf("batch of %d: packet %d (%d bytes) opened to the wrong plaintext", len(bps), i, len(bp.plain))
		case !ok[i] && !bytes.Equal(bp.p.Text, sealed[i]):
			t.Fatalf("batch of %d: rejected packet %d (%d bytes) was written", len(bps), i, len(bp.plain))
		}
	}
}

// TestAllImplsGCMBatchLengths runs every text length 0..4096 (every 7th
// with -short) through batches of 1..128 packets of consecutive lengths,
// mixed with 1420-byte and tiny packets, on both 128-bit-block variants.
func TestAllImplsGCMBatchLengths(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl gcm batch lengths")
		r := func(n int) []byte { return testinput.Bytes(rng, n) }
		lens := testinput.Lengths()
		lens = lens[:len(lens)-2] // 0..4096
		size := 1
		for len(lens) > 0 {
			key := r(16 + 16*(size%2))
			c, _ := NewCipher(key)
			std, _ := cipher.NewGCM(c)
			g, _ := NewGCM(key)
			var bps []*batchPacket
			for len(bps) < size && len(lens) > 0 {
				n := lens[0]
				switch rng.IntN(6) {
				case 0:
					n = 1420
				case 1:
					n = rng.IntN(48)
				default:
					lens = lens[1:]
				}
				bps = append(bps, newBatchPacket(rng, std, n, rng.IntN(40), rng.IntN(3) != 0, r))
			}
			checkBatch(t, g, bps, func(int) bool { return rng.IntN(4) == 0 }, rng.IntN)
			size = size%128 + 1
		}
	})
}

// TestAllImplsGCMBatchShapes covers the gather's limits: batches whose
// packets are all one length (empty texts: one tag mask each, more
// pieces than one call takes; one block; 1420 bytes), all corrupted or
// none, and more than 64 packets (OpenBatch's mask chunks).
func TestAllImplsGCMBatchShapes(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl gcm batch shapes")
		r := func(n int) []byte { return testinput.Bytes(rng, n) }
		key := r(16)
		c, _ := NewCipher(key)
		std, _ := cipher.NewGCM(c)
		g, _ := NewGCM(key)
		for _, n := range []int{0, 1, 15, 16, 17, 64, 255, 256, 257, 511, 512, 1420, 1424, 2047, 2048, 2049, 4096} {
			for _, count := range []int{1, 2, 63, 64, 65, 127, 128} {
				for mode := range 3 {
					bps := make([]*batchPacket, count)
					for i := range bps {
						bps[i] = newBatchPacket(rng, std, n, 16, i%2 == 0, r)
					}
					checkBatch(t, g, bps, func(i int) bool {
						return mode == 1 || mode == 2 && i%3 == 1
					}, rng.IntN)
				}
			}
		}
	})
}

// TestAllImplsGCMInPlace checks Seal and Open in place at every length,
// the output buffer misaligned.
func TestAllImplsGCMInPlace(t *testing.T) {
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		rng := newRand("impl gcm in place")
		for _, n := range testinput.Lengths() {
			key := testinput.Bytes(rng, 16+16*(n%2))
			c, _ := NewCipher(key)
			std, _ := cipher.NewGCM(c)
			g, _ := NewGCM(key)
			var nonce [NonceSize]byte
			copy(nonce[:], testinput.Bytes(rng, NonceSize))
			aad := testinput.Bytes(rng, 16)
			buf := testinput.Unaligned(testinput.Bytes(rng, n), n%13)
			plain := bytes.Clone(buf)
			want := std.Seal(nil, nonce[:], plain, aad)
			var tag [TagSize]byte
			g.Seal(buf, &tag, &nonce, buf, aad)
			if !bytes.Equal(buf, want[:n]) || !bytes.Equal(tag[:], want[n:]) {
				t.Fatalf("len %d: in-place Seal differs from crypto/cipher's GCM", n)
			}
			if !g.Open(buf, &nonce, buf, aad, &tag) || !bytes.Equal(buf, plain) {
				t.Fatalf("len %d: in-place Open failed", n)
			}
		}
	})
}

func TestGCMBatchNoAllocs(t *testing.T) {
	rng := newRand("impl gcm batch allocs")
	g, _ := NewGCM(testinput.Bytes(rng, 16))
	mk := func(count, n int) []Packet {
		ps := make([]Packet, count)
		for i := range ps {
			buf := testinput.Bytes(rng, 16+n+TagSize)
			ps[i] = Packet{AAD: buf[:16], Text: buf[16 : 16+n], Tag: (*[TagSize]byte)(buf[16+n:])}
		}
		return ps
	}
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		for _, shape := range [][2]int{{1, 64}, {1, 1420}, {8, 64}, {64, 1420}, {128, 64}} {
			ps := mk(shape[0], shape[1])
			ok := make([]bool, len(ps))
			var out [1420]byte
			var tag [TagSize]byte
			if a := testing.AllocsPerRun(5, func() {
				g.SealBatch(ps)
				g.OpenBatch(ps, ok)
				g.Seal(out[:shape[1]], &tag, &ps[0].Nonce, ps[0].Text, ps[0].AAD)
				g.Open(out[:shape[1]], &ps[0].Nonce, ps[0].Text, ps[0].AAD, &tag)
			}); a != 0 {
				t.Fatalf("%d × %d bytes: %v allocations", shape[0], shape[1], a)
			}
		}
	})
}

// FuzzGCMBatch seals and opens a batch cut from the fuzzer's data (each
// byte of shape a packet length, ×8 every third) on every implementation
// against crypto/cipher's GCM.
func FuzzGCMBatch(f *testing.F) {
	f.Add(make([]byte, 32), []byte{0, 1, 16, 178, 255}, uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{178}, 64), uint8(1))
	f.Fuzz(func(t *testing.T, key, shape []byte, flags uint8) {
		if len(key) < 32 || len(shape) == 0 || len(shape) > 128 {
			return
		}
		key = key[:16+16*int(flags&1)]
		c, _ := NewCipher(key)
		std, _ := cipher.NewGCM(c)
		g, _ := NewGCM(key)
		seed := string(key) + string(shape)
		impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
			rng := newRand(seed)
			r := func(n int) []byte { return testinput.Bytes(rng, n) }
			bps := make([]*batchPacket, len(shape))
			for i, b := range shape {
				n := int(b)
				if i%3 == 2 {
					n *= 8
				}
				bps[i] = newBatchPacket(rng, std, n, int(flags>>1)%33, (flags>>6+uint8(i))%2 == 0, r)
			}
			checkBatch(t, g, bps, func(i int) bool { return (int(flags)+i)%5 == 0 }, rng.IntN)
		})
	})
}
