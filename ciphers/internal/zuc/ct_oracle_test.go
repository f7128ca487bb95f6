package zuc

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// The portable core's S-box layer is a Boolean circuit (sbox_ct.go); these
// tests hold it, and everything built on it, to the standard's table
// S-boxes (tables_test.go) and the literal transcription of spec_test.go.

// tableLayer is S = (S0, S1, S0, S1) by table lookup: the oracle.
func tableLayer(x uint32) uint32 {
	return uint32(s0box[x>>24])<<24 | uint32(s1box[x>>16&0xff])<<16 | uint32(s0box[x>>8&0xff])<<8 | uint32(s1box[x&0xff])
}

func TestTranspose8(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 1))
	for range 1000 {
		x := r.Uint64()
		y := transpose8(x)
		for row := range 8 {
			for col := range 8 {
				if x>>(8*row+col)&1 != y>>(8*col+row)&1 {
					t.Fatalf("transpose8(%016x) = %016x: bit (%d,%d) not moved to (%d,%d)", x, y, row, col, col, row)
				}
			}
		}
		if transpose8(y) != x {
			t.Fatalf("transpose8 is not an involution on %016x", x)
		}
	}
}

// TestSboxLayerAllInputs checks the circuit on all 256 inputs of every
// byte position of u and v (the other bytes random), and on random pairs.
func TestSboxLayerAllInputs(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 2))
	for pos := range 8 {
		for x := range 256 {
			u, v := r.Uint32(), r.Uint32()
			if pos < 4 {
				u = u&^(0xff<<(8*pos)) | uint32(x)<<(8*pos)
			} else {
				v = v&^(0xff<<(8*(pos-4))) | uint32(x)<<(8*(pos-4))
			}
			gu, gv := sboxLayer(u, v)
			if wu, wv := tableLayer(u), tableLayer(v); gu != wu || gv != wv {
				t.Fatalf("sboxLayer(%08x, %08x) = %08x, %08x; tables give %08x, %08x", u, v, gu, gv, wu, wv)
			}
		}
	}
	for range 100000 {
		u, v := r.Uint32(), r.Uint32()
		gu, gv := sboxLayer(u, v)
		if wu, wv := tableLayer(u), tableLayer(v); gu != wu || gv != wv {
			t.Fatalf("sboxLayer(%08x, %08x) = %08x, %08x; tables give %08x, %08x", u, v, gu, gv, wu, wv)
		}
	}
}

// TestCoreAgainstTableOracle runs the circuit core against the table
// transcription for ZUC-128 and ZUC-256 on random keys and IVs: the
// keystream XOR of every byte length 0..4096, KeyWords of every word
// count 0..1040, and 128-EIA3 and the ZUC-256 MAC (32-, 64- and 128-bit
// tags) of every bit length 0..4096.
func TestCoreAgainstTableOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 3))
	step := 1
	if testing.Short() {
		step = 29
	}
	for _, v256 := range []bool{false, true} {
		key, iv := make([]byte, 32), make([]byte, 23)
		fill(r, key)
		fill(r, iv)
		d, _ := D256(0)
		init := func(st *State) *specState {
			if v256 {
				st.Init256((*[32]byte)(key), (*[23]byte)(iv), &d)
				return specInit256(key, unpackIV25(iv), d[:])
			}
			st.Init128((*[16]byte)(key[:16]), (*[16]byte)(iv[:16]))
			return specInit128(key[:16], iv[:16])
		}
		var st State
		spec := init(&st).words(1100)
		src := make([]byte, 4096)
		fill(r, src)
		dst := make([]byte, 4096)
		for n := 0; n <= 4096; n += step {
			init(&st)
			XORKeyStreamGeneric(&st, dst, src[:n])
			for i := range n {
				if dst[i]^src[i] != byte(spec[i/4]>>(24-8*(i%4))) {
					t.Fatalf("ZUC-256 %v: XORKeyStreamGeneric of %d bytes wrong at byte %d", v256, n, i)
				}
			}
		}
		z := make([]uint32, 1040)
		for n := 0; n <= len(z); n += step {
			init(&st)
			st.KeyWords(z[:n])
			for i := range n {
				if z[i] != spec[i] {
					t.Fatalf("ZUC-256 %v: KeyWords(%d) word %d = %08x, want %08x", v256, n, i, z[i], spec[i])
				}
			}
		}
	}

	msg := make([]byte, 4096/8)
	fill(r, msg)
	key := make([]byte, 32)
	for n := 0; n <= 4096; n += step {
		fill(r, key)
		count, bearer, dir := r.Uint32(), uint8(r.IntN(32)), uint8(r.IntN(2))
		iv := IVEIA3(count, bearer, dir)
		var st State
		st.Init128((*[16]byte)(key[:16]), &iv)
		if got, want := EIA3Generic(&st, msg, n), specEIA3(key[:16], count, bearer, dir, msg, n); got != want {
			t.Fatalf("EIA3 of %d bits = %08x, table oracle %08x", n, got, want)
		}
	}
	for _, tagSize := range []int{4, 8, 16} {
		d, _ := D256(tagSize)
		iv := make([]byte, 23)
		for n := 0; n <= 4096; n += step * 3 / 2 {
			fill(r, key)
			fill(r, iv)
			var st State
			st.Init256((*[32]byte)(key), (*[23]byte)(iv), &d)
			got := make([]byte, tagSize)
			MAC256Generic(&st, msg, n, got)
			for q, w := range specMAC256(key, iv, msg, n, 8*tagSize) {
				if binary.BigEndian.Uint32(got[4*q:]) != w {
					t.Fatalf("MAC256-%d of %d bits: word %d = %x, table oracle %08x", 8*tagSize, n, q, got[4*q:4*q+4], w)
				}
			}
		}
	}
}

// FuzzCoreVsOracle compares the circuit core with the table transcription
// on fuzzer-chosen keys, IVs, messages and bit lengths: the ZUC-128 and
// ZUC-256 keystreams, 128-EIA3 and the ZUC-256 MAC of every tag size.
func FuzzCoreVsOracle(f *testing.F) {
	f.Add(make([]byte, 32), make([]byte, 23), []byte("abc"), uint16(20), uint8(0))
	f.Add([]byte("0123456789abcdef0123456789abcdef"), []byte("fedcba9876543210fedcba9"), make([]byte, 300), uint16(2399), uint8(2))
	f.Fuzz(func(t *testing.T, key, iv, msg []byte, nbits uint16, tagSel uint8) {
		if len(key) < 32 || len(iv) < 23 || len(msg) > 1024 {
			return
		}
		key, iv = key[:32], iv[:23]
		n := int(nbits) % (8*len(msg) + 1)

		var st State
		st.Init128((*[16]byte)(key[:16]), (*[16]byte)(iv[:16]))
		out := make([]byte, len(msg))
		XORKeyStreamGeneric(&st, out, msg)
		spec := specInit128(key[:16], iv[:16]).words(len(msg)/4 + 1)
		for i := range msg {
			if out[i]^msg[i] != byte(spec[i/4]>>(24-8*(i%4))) {
				t.Fatalf("ZUC-128 keystream byte %d differs from the table oracle", i)
			}
		}
		d0, _ := D256(0)
		st.Init256((*[32]byte)(key), (*[23]byte)(iv), &d0)
		XORKeyStreamGeneric(&st, out, msg)
		spec = specInit256(key, unpackIV25(iv), d0[:]).words(len(msg)/4 + 1)
		for i := range msg {
			if out[i]^msg[i] != byte(spec[i/4]>>(24-8*(i%4))) {
				t.Fatalf("ZUC-256 keystream byte %d differs from the table oracle", i)
			}
		}

		count := binary.BigEndian.Uint32(iv)
		bearer, dir := iv[4]&31, iv[5]&1
		eia := IVEIA3(count, bearer, dir)
		st.Init128((*[16]byte)(key[:16]), &eia)
		if got, want := EIA3Generic(&st, msg, n), specEIA3(key[:16], count, bearer, dir, msg, n); got != want {
			t.Fatalf("EIA3 of %d bits = %08x, table oracle %08x", n, got, want)
		}
		tagSize := []int{4, 8, 16}[tagSel%3]
		d, _ := D256(tagSize)
		st.Init256((*[32]byte)(key), (*[23]byte)(iv), &d)
		got := make([]byte, tagSize)
		MAC256Generic(&st, msg, n, got)
		for q, w := range specMAC256(key, iv, msg, n, 8*tagSize) {
			if binary.BigEndian.Uint32(got[4*q:]) != w {
				t.Fatalf("MAC256-%d of %d bits: word %d differs from the table oracle", 8*tagSize, n, q)
			}
		}
	})
}

// TestSboxLayer8 checks the eight-lane circuit against the tables, every
// byte value in every byte position of every lane.
func TestSboxLayer8(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 4))
	for x := range 256 {
		var in [8]uint64
		for j := range in {
			in[j] = r.Uint64()
		}
		pos := r.IntN(8)
		for j := range in {
			in[j] = in[j]&^(0xff<<(8*((pos+j)%8))) | uint64(x)<<(8*((pos+j)%8))
		}
		want := in
		for j := range want {
			want[j] = uint64(tableLayer(uint32(in[j]>>32)))<<32 | uint64(tableLayer(uint32(in[j])))
		}
		got := in
		sboxLayer8(&got)
		if got != want {
			t.Fatalf("sboxLayer8(%016x) = %016x, tables give %016x", in, got, want)
		}
		p := in
		planes8(&p)
		for j := range 8 {
			for k := range 8 {
				for bit := range 8 {
					if in[j]>>(8*k+bit)&1 != p[bit]>>(8*k+j)&1 {
						t.Fatalf("planes8: bit %d of byte %d of word %d not at bit %d of byte %d of word %d", bit, k, j, j, k, bit)
					}
				}
			}
		}
		if planes8(&p); p != in {
			t.Fatal("planes8 is not an involution")
		}
	}
}

// TestGenericBatchAgainstOracle holds the generic batch primitives, which
// run their lanes eight at a time on the lockstep core (multi.go), to the
// table transcription lane by lane: random lane counts, idle lanes and
// lengths (short, MTU-sized, past the lockstep MAC buffer), and checks
// that they do not allocate.
func TestGenericBatchAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 5))
	iters := 120
	if testing.Short() {
		iters = 20
	}
	for iter := range iters {
		n := 1 + r.IntN(Lanes)
		lens := make([]int, n)
		for i := range lens {
			switch r.IntN(6) {
			case 0:
				lens[i] = -1
			case 1:
				lens[i] = r.IntN(8)
			case 2:
				lens[i] = 2000 + r.IntN(200) // around multiMACWords
			case 3:
				lens[i] = 3000 + r.IntN(3000)
			default:
				lens[i] = r.IntN(1600)
			}
		}
		b := newLaneBatch(r, lens)
		got := b.clone()
		XORKeyStreams128Generic(&b.key128, &b.iv128, got, n)
		for c := range n {
			if len(got[c]) == 0 {
				continue
			}
			z := specInit128(b.key128[:], b.iv128[c][:]).words(len(got[c])/4 + 1)
			for i := range got[c] {
				if got[c][i]^b.data[c][i] != byte(z[i/4]>>(24-8*(i%4))) {
					t.Fatalf("iter %d lengths %v: XORKeyStreams128Generic lane %d byte %d wrong", iter, lens, c, i)
				}
			}
		}
		got = b.clone()
		XORKeyStreams256Generic(&b.key256, &b.iv256, got, n)
		d0, _ := D256(0)
		for c := range n {
			if len(got[c]) == 0 {
				continue
			}
			z := specInit256(b.key256[:], unpackIV25(b.iv256[c][:]), d0[:]).words(len(got[c])/4 + 1)
			for i := range got[c] {
				if got[c][i]^b.data[c][i] != byte(z[i/4]>>(24-8*(i%4))) {
					t.Fatalf("iter %d lengths %v: XORKeyStreams256Generic lane %d byte %d wrong", iter, lens, c, i)
				}
			}
		}
		// The MAC oracles take the EIA3 IV as (count, bearer, direction).
		var eia [Lanes][IVSize128]byte
		var cnt [Lanes]uint32
		var bearer, dir [Lanes]uint8
		for c := range n {
			cnt[c], bearer[c], dir[c] = r.Uint32(), uint8(r.IntN(32)), uint8(r.IntN(2))
			eia[c] = IVEIA3(cnt[c], bearer[c], dir[c])
		}
		var t128 [Lanes]uint32
		EIA3TagsGeneric(&b.key128, &eia, &b.data, &t128, n)
		var t256 [Lanes][MAC256TagSize]byte
		MAC256TagsGeneric(&b.key256, &b.iv256, &b.data, &t256, n)
		for c := range n {
			m := b.data[c]
			if m == nil {
				continue
			}
			if want := specEIA3(b.key128[:], cnt[c], bearer[c], dir[c], m, 8*len(m)); t128[c] != want {
				t.Fatalf("iter %d lengths %v: EIA3TagsGeneric lane %d = %08x, oracle %08x", iter, lens, c, t128[c], want)
			}
			for q, w := range specMAC256(b.key256[:], b.iv256[c][:], m, 8*len(m), 128) {
				if binary.BigEndian.Uint32(t256[c][4*q:]) != w {
					t.Fatalf("iter %d lengths %v: MAC256TagsGeneric lane %d word %d differs from the oracle", iter, lens, c, q)
				}
			}
		}
	}
	b := newLaneBatch(r, []int{1420, 1420, 60, 1420, 9000, 1, 1420, 1420, 1420, 1420})
	if a := testing.AllocsPerRun(5, func() {
		var t128 [Lanes]uint32
		var t256 [Lanes][MAC256TagSize]byte
		XORKeyStreams128Generic(&b.key128, &b.iv128, &b.data, b.n)
		XORKeyStreams256Generic(&b.key256, &b.iv256, &b.data, b.n)
		EIA3TagsGeneric(&b.key128, &b.iv128, &b.data, &t128, b.n)
		MAC256TagsGeneric(&b.key256, &b.iv256, &b.data, &t256, b.n)
	}); a != 0 {
		t.Errorf("generic batch primitives allocate %v times per call", a)
	}
}
