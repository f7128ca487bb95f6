package sm4

import (
	"bytes"
	"crypto/subtle"
	"encoding/binary"
	"math/bits"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/testinput"
)

// The circuit-based portable code against the table oracles of
// tables_test.go: the S-box, the key schedule, single blocks, the
// bitsliced batches, CTR and GCM. These tests call the *Generic functions
// directly, so they check the portable code on every build (purego or not).

// expandKeyTable is the key schedule of GB/T 32907-2016 §7.3 through the
// S-box table (the oracle).
func expandKeyTable(key []byte) (enc [32]uint32) {
	k := [4]uint32{}
	for i := range 4 {
		k[i] = binary.BigEndian.Uint32(key[4*i:]) ^ fk[i]
	}
	for i := range 32 {
		nk := k[0] ^ tKeyTable(k[1]^k[2]^k[3]^ck[i])
		k[0], k[1], k[2], k[3] = k[1], k[2], k[3], nk
		enc[i] = nk
	}
	return enc
}

// cryptBlockTable is one block through the T-tables (the oracle).
func cryptBlockTable(rk *[32]uint32, dst, src []byte) {
	x := [4]uint32{binary.BigEndian.Uint32(src[0:]), binary.BigEndian.Uint32(src[4:]),
		binary.BigEndian.Uint32(src[8:]), binary.BigEndian.Uint32(src[12:])}
	for i := range 32 {
		n := x[0] ^ tTable(x[1]^x[2]^x[3]^rk[i])
		x[0], x[1], x[2], x[3] = x[1], x[2], x[3], n
	}
	for i := range 4 {
		binary.BigEndian.PutUint32(dst[4*i:], x[3-i])
	}
}

// gfMulBits multiplies x and y in GF(2^128) bit by bit (SP 800-38D §6.3,
// algorithm 1), the GHASH oracle.
func gfMulBits(x, y [16]byte) [16]byte {
	var z [16]byte
	v := y
	for i := range 128 {
		if x[i/8]>>(7-i%8)&1 == 1 {
			subtle.XORBytes(z[:], z[:], v[:])
		}
		lsb := v[15] & 1
		for j := 15; j > 0; j-- {
			v[j] = v[j]>>1 | v[j-1]<<7
		}
		v[0] >>= 1
		if lsb == 1 {
			v[0] ^= 0xe1
		}
	}
	return z
}

// sealTable is SM4-GCM (SP 800-38D §7.1, 96-bit IV) from the oracles: table
// SM4, byte-wise GCTR with inc32, bit-wise GHASH.
func sealTable(key []byte, nonce *[NonceSize]byte, pt, aad []byte) (ct []byte, tag [TagSize]byte) {
	rk := expandKeyTable(key)
	var h, j0 [16]byte
	cryptBlockTable(&rk, h[:], h[:])
	copy(j0[:], nonce[:])
	j0[15] = 1
	ct = make([]byte, len(pt))
	cb := j0
	for i := 0; i < len(pt); i += 16 {
		binary.BigEndian.PutUint32(cb[12:], binary.BigEndian.Uint32(cb[12:])+1)
		var ks [16]byte
		cryptBlockTable(&rk, ks[:], cb[:])
		subtle.XORBytes(ct[i:], pt[i:], ks[:])
	}
	var y [16]byte
	absorb := func(d []byte) {
		for len(d) > 0 {
			var blk [16]byte
			n := copy(blk[:], d)
			subtle.XORBytes(y[:], y[:], blk[:])
			y = gfMulBits(y, h)
			d = d[n:]
		}
	}
	absorb(aad)
	absorb(ct)
	var lens [16]byte
	binary.BigEndian.PutUint64(lens[0:], uint64(len(aad))*8)
	binary.BigEndian.PutUint64(lens[8:], uint64(len(ct))*8)
	absorb(lens[:])
	var ekj0 [16]byte
	cryptBlockTable(&rk, ekj0[:], j0[:])
	subtle.XORBytes(tag[:], y[:], ekj0[:])
	return ct, tag
}

// TestSBoxCircuit checks the generated circuit against the S-box table on
// all 256 inputs, both as 64-lane bit planes and byte-wise through tauSWAR.
func TestSBoxCircuit(t *testing.T) {
	for base := 0; base < 256; base += 64 {
		var in [8]uint64
		for l := range 64 {
			x := byte(base+l) ^ sboxInD
			for i := range 8 {
				in[i] |= uint64(x>>i&1) << l
			}
		}
		var out [8]uint64
		out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7] =
			sboxCore(in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7])
		for l := range 64 {
			var y byte
			for i := range 8 {
				y |= byte(out[i]>>l&1) << i
			}
			if y ^= sboxOutE; y != sbox[base+l] {
				t.Fatalf("circuit(%#02x) = %#02x, want %#02x", base+l, y, sbox[base+l])
			}
		}
	}
	for x := range 256 {
		w := uint64(x) * lanes
		want := uint64(sbox[x]) * lanes
		if got := tauSWAR(w); got != want {
			t.Fatalf("tauSWAR(%#016x) = %#016x, want %#016x", w, got, want)
		}
	}
	rng := newRand("tau swar")
	for range 10000 {
		x := rng.Uint32()
		if got, want := uint32(tauSWAR(uint64(x))), tauTable(x); got != want {
			t.Fatalf("tauSWAR(%#08x) = %#08x, want %#08x", x, got, want)
		}
		if got, want := tRound(x), tTable(x); got != want {
			t.Fatalf("tRound(%#08x) = %#08x, want %#08x", x, got, want)
		}
	}
}

// TestKeyScheduleCircuit compares the circuit key schedule with the table
// oracle on random keys and on GB/T 32907-2016 App. A's key.
func TestKeyScheduleCircuit(t *testing.T) {
	rng := newRand("key schedule")
	keys := [][]byte{{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10},
		make([]byte, 16), bytes.Repeat([]byte{0xff}, 16)}
	for range 2000 {
		keys = append(keys, testinput.Bytes(rng, KeySize))
	}
	for _, key := range keys {
		var enc, dec [32]uint32
		expandKeyGeneric(key, &enc, &dec)
		if want := expandKeyTable(key); enc != want {
			t.Fatalf("key %x: round keys %x, want %x", key, enc, want)
		}
		for i := range 32 {
			if dec[i] != enc[31-i] {
				t.Fatalf("key %x: decryption schedule not reversed", key)
			}
		}
	}
	var enc, dec [32]uint32
	expandKeyGeneric(keys[0], &enc, &dec)
	if enc[0] != 0xf12186f9 || enc[31] != 0x9124a012 {
		t.Fatalf("App. A: rk0 = %#08x, rk31 = %#08x", enc[0], enc[31])
	}
}

// TestTranspose64 checks transpose64 against its definition.
func TestTranspose64(t *testing.T) {
	rng := newRand("transpose")
	var m [64]uint64
	for i := range m {
		m[i] = rng.Uint64()
	}
	orig := m
	transpose64(&m)
	for i := range 64 {
		for j := range 64 {
			if m[i]>>(63-j)&1 != orig[j]>>(63-i)&1 {
				t.Fatalf("bit (%d,%d) wrong", i, j)
			}
		}
	}
	transpose64(&m)
	if m != orig {
		t.Fatal("transpose64 is not an involution")
	}
}

// TestBlockCircuit compares single blocks (cryptBlockGeneric) and the
// bitsliced batches (cryptBlocksGeneric, every count 0..130 so that full,
// partial and single-block paths all run) with the T-table oracle, for
// encryption and decryption, in place and unaligned.
func TestBlockCircuit(t *testing.T) {
	rng := newRand("block circuit")
	for trial := range 40 {
		key := testinput.Bytes(rng, KeySize)
		var enc, dec [32]uint32
		expandKeyGeneric(key, &enc, &dec)
		for range 20 {
			src := testinput.Bytes(rng, BlockSize)
			var want, got, back [BlockSize]byte
			cryptBlockTable(&enc, want[:], src)
			cryptBlockGeneric(&enc, got[:], src)
			cryptBlockGeneric(&dec, back[:], got[:])
			if got != want || !bytes.Equal(back[:], src) {
				t.Fatalf("key %x block %x: %x / %x, want %x", key, src, got, back, want)
			}
		}
		for nb := 0; nb <= 130; nb += 1 + trial%3 {
			src := testinput.Unaligned(testinput.Bytes(rng, nb*BlockSize), trial%7)
			want := make([]byte, len(src))
			for i := 0; i < len(src); i += BlockSize {
				cryptBlockTable(&enc, want[i:], src[i:])
			}
			got := testinput.Unaligned(make([]byte, len(src)), (trial+3)%7)
			cryptBlocksGeneric(&enc, got, src)
			if !bytes.Equal(got, want) {
				t.Fatalf("%d blocks differ from the oracle", nb)
			}
			cryptBlocksGeneric(&dec, got, got)
			if !bytes.Equal(got, src) {
				t.Fatalf("%d blocks: in-place decryption does not invert", nb)
			}
		}
	}
}

// TestCTRCircuit compares ctrGeneric with the table oracle's CTR (128-bit
// counter) at every length up to 1100 bytes and across 64-bit carries.
func TestCTRCircuit(t *testing.T) {
	rng := newRand("ctr circuit")
	for n := 0; n <= 1100; n++ {
		key := testinput.Bytes(rng, KeySize)
		rk := expandKeyTable(key)
		var iv [16]byte
		copy(iv[:], testinput.Bytes(rng, 16))
		if n%2 == 0 {
			binary.BigEndian.PutUint64(iv[8:], ^uint64(0)-rng.Uint64N(70))
		}
		src := testinput.Bytes(rng, n)
		want := make([]byte, n)
		cb := iv
		for i := 0; i < n; i += 16 {
			var ks [16]byte
			cryptBlockTable(&rk, ks[:], cb[:])
			subtle.XORBytes(want[i:], src[i:], ks[:])
			hi, lo := inc128(binary.BigEndian.Uint64(cb[:8]), binary.BigEndian.Uint64(cb[8:]))
			binary.BigEndian.PutUint64(cb[:8], hi)
			binary.BigEndian.PutUint64(cb[8:], lo)
		}
		ctr := iv
		got := testinput.Unaligned(bytes.Clone(src), n%7)
		ctrGeneric(&rk, &ctr, got, got)
		if !bytes.Equal(got, want) || ctr != cb {
			t.Fatalf("len %d: CTR differs from the oracle (counter %x, want %x)", n, ctr, cb)
		}
	}
}

// TestGHASHGeneric compares the constant-time GHASH (the generic GCM's
// tag path) with the bit-by-bit multiplication on random subkeys and data.
func TestGHASHGeneric(t *testing.T) {
	rng := newRand("ghash generic")
	for range 300 {
		var h [16]byte
		copy(h[:], testinput.Bytes(rng, 16))
		var key ghashKey
		initGHASHKey(&key, &h)
		data := testinput.Bytes(rng, rng.IntN(200))
		var y [2]uint64
		ghashGeneric(&key, &y, data)
		var want [16]byte
		for d := data; len(d) > 0; {
			var blk [16]byte
			n := copy(blk[:], d)
			subtle.XORBytes(want[:], want[:], blk[:])
			want = gfMulBits(want, h)
			d = d[n:]
		}
		if binary.BigEndian.Uint64(want[:8]) != y[0] || binary.BigEndian.Uint64(want[8:]) != y[1] {
			t.Fatalf("H %x, %d bytes: GHASH %x%x, want %x", h, len(data), y[0], y[1], want)
		}
	}
}

// TestGCMCircuit compares the generic GCM with the table oracle on every
// message length 0..4096 (a stride under -short), random keys, nonces and
// AAD: Seal out of place unaligned and in place, Open in place, and a
// tampered message rejected without writing.
func TestGCMCircuit(t *testing.T) {
	rng := newRand("gcm circuit")
	step := 1
	if testing.Short() {
		step = 13
	}
	for n := 0; n <= 4096; n += step {
		key := testinput.Bytes(rng, KeySize)
		g, _ := NewGCM(key)
		var nonce [NonceSize]byte
		copy(nonce[:], testinput.Bytes(rng, NonceSize))
		aad := testinput.Bytes(rng, rng.IntN(40))
		pt := testinput.Bytes(rng, n)
		wantCT, wantTag := sealTable(key, &nonce, pt, aad)

		out := testinput.Unaligned(make([]byte, n), n%5)
		var tag [TagSize]byte
		sealGeneric(g, out, &tag, &nonce, testinput.Unaligned(pt, n%3), aad)
		if !bytes.Equal(out, wantCT) || tag != wantTag {
			t.Fatalf("len %d: sealGeneric differs from the oracle", n)
		}
		buf := testinput.Unaligned(bytes.Clone(pt), 1+n%4)
		sealGeneric(g, buf, &tag, &nonce, buf, aad)
		if !bytes.Equal(buf, wantCT) || tag != wantTag {
			t.Fatalf("len %d: in-place sealGeneric differs", n)
		}
		if !openGeneric(g, buf, &nonce, buf, aad, &tag) || !bytes.Equal(buf, pt) {
			t.Fatalf("len %d: openGeneric failed", n)
		}
		bad := bytes.Clone(wantCT)
		badTag := wantTag
		if n > 0 {
			bad[rng.IntN(n)] ^= 1 << rng.IntN(8)
		} else {
			badTag[rng.IntN(TagSize)] ^= 1
		}
		dst := bytes.Repeat([]byte{0x5a}, n)
		if openGeneric(g, dst, &nonce, bad, aad, &badTag) || !bytes.Equal(dst, bytes.Repeat([]byte{0x5a}, n)) {
			t.Fatalf("len %d: tampered message accepted or output written", n)
		}
	}
}

// FuzzGenericVsTables compares the generic GCM seal and CTR with the table
// oracles on fuzzer-chosen keys, nonces, AAD and plaintext.
func FuzzGenericVsTables(f *testing.F) {
	f.Add(make([]byte, 16), make([]byte, 16), []byte{}, []byte("hello"))
	f.Add(bytes.Repeat([]byte{0xff}, 16), bytes.Repeat([]byte{0xff}, 16), make([]byte, 16), make([]byte, 1420))
	f.Add([]byte("0123456789abcdef"), []byte("fedcba9876543210"), make([]byte, 33), make([]byte, 1025))
	f.Fuzz(func(t *testing.T, key, iv, aad, pt []byte) {
		if len(key) != KeySize || len(iv) != 16 || len(pt) > 1<<16 {
			return
		}
		nonce := (*[NonceSize]byte)(iv)
		g, _ := NewGCM(key)
		wantCT, wantTag := sealTable(key, nonce, pt, aad)
		got := make([]byte, len(pt))
		var tag [TagSize]byte
		sealGeneric(g, got, &tag, nonce, pt, aad)
		if !bytes.Equal(got, wantCT) || tag != wantTag {
			t.Fatal("sealGeneric differs from the table oracle")
		}
		if !openGeneric(g, got, nonce, got, aad, &tag) || !bytes.Equal(got, pt) {
			t.Fatal("openGeneric failed")
		}
		rk := expandKeyTable(key)
		ctr := *(*[16]byte)(iv)
		ctrGeneric(&rk, &ctr, got, pt)
		want := make([]byte, len(pt))
		cb := *(*[16]byte)(iv)
		for i := 0; i < len(pt); i += 16 {
			var ks [16]byte
			cryptBlockTable(&rk, ks[:], cb[:])
			subtle.XORBytes(want[i:], pt[i:], ks[:])
			hi, lo := bits.Add64(binary.BigEndian.Uint64(cb[8:]), 1, 0)
			binary.BigEndian.PutUint64(cb[8:], hi)
			binary.BigEndian.PutUint64(cb[:8], binary.BigEndian.Uint64(cb[:8])+lo)
		}
		if !bytes.Equal(got, want) {
			t.Fatal("ctrGeneric differs from the table oracle")
		}
	})
}

// TestBatchCircuit compares sealBatchGeneric and openBatchGeneric (lanes
// shared across packets) with the table oracle on batches of mixed
// lengths, tampering with every third packet before opening.
func TestBatchCircuit(t *testing.T) {
	rng := newRand("batch circuit")
	for _, n := range []int{0, 1, 2, 3, 7, 16, 17, 63, 64, 65, 130} {
		key := testinput.Bytes(rng, KeySize)
		g, _ := NewGCM(key)
		bufs, ps := randomBatch(rng, n)
		want := make([][]byte, n)
		for i, p := range ps {
			ct, tag := sealTable(key, &p.Nonce, p.Text, p.AAD)
			want[i] = append(append(bytes.Clone(p.AAD), ct...), tag[:]...)
		}
		plain := make([][]byte, n)
		for i := range bufs {
			plain[i] = bytes.Clone(bufs[i][:16+len(ps[i].Text)])
		}
		sealBatchGeneric(g, ps)
		for i := range ps {
			if !bytes.Equal(bufs[i], want[i]) {
				t.Fatalf("batch of %d: packet %d (len %d) differs from the oracle", n, i, len(ps[i].Text))
			}
		}
		for i := 0; i < n; i += 3 {
			bufs[i][rng.IntN(len(bufs[i]))] ^= 1 << rng.IntN(8)
		}
		tampered := make([][]byte, n)
		for i := range bufs {
			tampered[i] = bytes.Clone(bufs[i])
		}
		ok := make([]bool, n)
		openBatchGeneric(g, ps, ok)
		for i := range ps {
			if i%3 == 0 {
				if ok[i] || !bytes.Equal(bufs[i], tampered[i]) {
					t.Fatalf("batch of %d: tampered packet %d verified or modified", n, i)
				}
			} else if !ok[i] || !bytes.Equal(bufs[i][:16+len(ps[i].Text)], plain[i]) {
				t.Fatalf("batch of %d: packet %d rejected or wrong plaintext", n, i)
			}
		}
	}
}
