//go:build amd64 && gc && !purego

package ublock

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// needBitsliced skips (or fails, when kerneltest.Required) a test of the
// bitsliced kernel on a CPU without it.
func needBitsliced(t testing.TB) {
	t.Helper()
	if !BitslicedSupported() {
		kerneltest.Unsupported(t, "CPU lacks AVX-512 (kernels/cpu flags say no): bitsliced kernel")
	}
}

func newBitslicedKey(r *rand.ChaCha8, keyLen int) (*BitslicedKey, []byte, int) {
	rk, rounds := refKeySchedule(randBytes(r, keyLen), 16)
	k := new(BitslicedKey)
	k.Init(rk, rounds)
	return k, rk, rounds
}

func refECB(rk []byte, rounds int, src []byte) []byte {
	want := append([]byte(nil), src...)
	for i := 0; i < len(want); i += 16 {
		refEncrypt(rk, rounds, want[i:i+16])
	}
	return want
}

func TestBitslicedVectors(t *testing.T) {
	needBitsliced(t)
	vecs := loadVectors(t)
	for _, v := range variants[:2] {
		for i, vec := range vecs[v.name] {
			rk, rounds := refKeySchedule(mustHex(t, vec.Key), 16)
			var k BitslicedKey
			k.Init(rk, rounds)
			pt, ct := mustHex(t, vec.Plaintext), mustHex(t, vec.Ciphertext)
			got := make([]byte, len(pt))
			EncryptBlocksBitsliced(&k, got, pt)
			if !bytes.Equal(got, ct) {
				t.Errorf("%s vector %d: got %x, want %x", v.name, i, got, ct)
			}
		}
	}
}

// TestBitslicedECBAgainstReference checks every block count 1..1100 (one
// pass, across the first pass boundary, two passes and a partial third),
// in place and not, at odd alignments, for both round counts.
func TestBitslicedECBAgainstReference(t *testing.T) {
	needBitsliced(t)
	r := rand.NewChaCha8([32]byte{21})
	for _, v := range variants[:2] {
		k, rk, rounds := newBitslicedKey(r, v.keyLen)
		t.Run(v.name[len("uBlock-"):], func(t *testing.T) {
			counts := []int{1, 2, 3, 4, 7, 31, 32, 33, 255, 511, 512, 513, 1023, 1024, 1025, 1100, 1536, 2048 + 17}
			if !testing.Short() {
				counts = counts[:0]
				for n := 1; n <= 1100; n++ {
					counts = append(counts, n)
				}
				counts = append(counts, 1536, 2048+17)
			}
			// The reference of the longest input, once: every count uses a
			// prefix of it.
			maxN := counts[len(counts)-1]
			plain := randBytes(r, 16*maxN)
			want := refECB(rk, rounds, plain)
			for _, n := range counts {
				inPlace := n%2 == 0
				srcOff, dstOff := n%7, n%5
				dst, src, srcBuf, dstBuf := buffers(r, 16*n, srcOff, dstOff, inPlace)
				copy(src, plain)
				end := dstOff + 16*n
				if inPlace {
					end = srcOff + 16*n
				}
				srcCopy := append([]byte(nil), srcBuf...)
				dstCopy := append([]byte(nil), dstBuf...)
				EncryptBlocksBitsliced(k, dst, src)
				if !bytes.Equal(dst, want[:16*n]) {
					t.Fatalf("%d blocks (in place %v): output differs from the reference", n, inPlace)
				}
				// Guard bytes after the buffers are untouched.
				if !bytes.Equal(dstBuf[end:], dstCopy[end:]) {
					t.Fatalf("%d blocks: wrote past dst", n)
				}
				if !inPlace && !bytes.Equal(srcBuf, srcCopy) {
					t.Fatalf("%d blocks: modified src", n)
				}
			}
		})
	}
}

// runPiecesBitsliced runs XORPiecesBitsliced over pieces of the given
// lengths (negative: a nil source of -n bytes) and compares with refCTR.
func runPiecesBitsliced(t *testing.T, r *rand.ChaCha8, run func([]Piece), rk []byte, rounds int, lens []int, what string) {
	t.Helper()
	ps := make([]Piece, len(lens))
	wants := make([][]byte, len(lens))
	dsts := make([][]byte, len(lens))
	for i, l := range lens {
		n, nilSrc := l, false
		if l < 0 {
			n, nilSrc = -l, true
		}
		var ctr [16]byte
		copy(ctr[:], randBytes(r, 16))
		if r.Uint64()%4 == 0 { // near the inc32 wrap
			binary.BigEndian.PutUint32(ctr[12:], 0xffffffff-uint32(r.Uint64()%4))
		}
		buf := randBytes(r, n+int(r.Uint64()%3)+1)
		off := int(r.Uint64() % uint64(len(buf)-n+1))
		dst := buf[off : off+n]
		var src []byte
		if nilSrc {
			src = make([]byte, n)
		} else if r.Uint64()%2 == 0 {
			src = dst // in place
		} else {
			src = randBytes(r, n)
		}
		want := make([]byte, n)
		c := ctr
		refCTR(rk, rounds, &c, want, src)
		wants[i], dsts[i] = want, dst
		ps[i] = Piece{Ctr: ctr, N: n}
		if n > 0 {
			ps[i].Dst = &dst[0]
			if !nilSrc {
				ps[i].Src = &src[0]
			}
		}
	}
	saved := append([]byte(nil), unsafeBytes(ps)...)
	run(ps)
	for i := range ps {
		if !bytes.Equal(dsts[i], wants[i]) {
			t.Fatalf("%s: piece %d of %d (%d bytes) differs from the reference", what, i, len(ps), lens[i])
		}
	}
	if !bytes.Equal(unsafeBytes(ps), saved) {
		t.Fatalf("%s: the descriptors were modified", what)
	}
}

// pieceForms are the gathered forms under test: XORPiecesBitsliced, and
// XORPiecesHybrid with each packed ZMM tier the CPU has.
func pieceForms(k *BitslicedKey, rk []byte, rounds int) map[string]func([]Piece) {
	forms := map[string]func([]Piece){"bitsliced": func(ps []Piece) { XORPiecesBitsliced(k, ps) }}
	s := new(Schedule)
	s.Init(rk, 16, rounds)
	for _, tier := range []Tier{AVX512VBMI, AVX512} {
		if tier.Supported() {
			forms["hybrid/"+tier.String()] = func(ps []Piece) { XORPiecesHybrid(k, s, tier, ps) }
		}
	}
	return forms
}

func TestXORPiecesBitslicedAgainstReference(t *testing.T) {
	needBitsliced(t)
	r := rand.NewChaCha8([32]byte{22})
	for _, v := range variants[:2] {
		k, rk, rounds := newBitslicedKey(r, v.keyLen)
		for form, run := range pieceForms(k, rk, rounds) {
			t.Run(v.name[len("uBlock-"):]+"/"+form, func(t *testing.T) {
				// Every length up to 4 blocks, then lengths across the pass
				// boundaries (and the hybrid's tail threshold) up to 1100
				// blocks.
				step := 16*7 + 3
				if testing.Short() {
					step = 16*61 + 5
				}
				for n := 0; n <= 1100*16; n++ {
					b := (n / 16) % 512
					if n > 64 && n%step != 0 && b > 2 && b < 510 && (b < HybridTailBlocks-2 || b > HybridTailBlocks+1) {
						continue
					}
					runPiecesBitsliced(t, r, run, rk, rounds, []int{n}, "single")
					runPiecesBitsliced(t, r, run, rk, rounds, []int{-16, n}, "mask+text")
				}
				// GCM's batch shape: a tag mask and a packet each.
				var batch []int
				for i := 0; i < 64; i++ {
					batch = append(batch, -16, 1420)
				}
				runPiecesBitsliced(t, r, run, rk, rounds, batch, "64 packets")
				iters := 60
				if testing.Short() {
					iters = 20
				}
				for iter := 0; iter < iters; iter++ {
					var lens []int
					count := 1 + int(r.Uint64()%200)
					for len(lens) < count {
						var n int
						switch r.Uint64() % 5 {
						case 0:
							n = -16
						case 1:
							n = int(r.Uint64() % 48)
						case 2:
							n = int(r.Uint64() % 300)
						case 3:
							n = -int(r.Uint64() % 40)
						default:
							n = int(r.Uint64() % 3000)
						}
						lens = append(lens, n)
					}
					runPiecesBitsliced(t, r, run, rk, rounds, lens, "mixed")
				}
			})
		}
	}
}

func FuzzXORPiecesBitsliced(f *testing.F) {
	f.Add(make([]byte, 32), make([]byte, 16), []byte{16, 0, 1, 200}, uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0xff}, 16), []byte{255, 255, 3}, uint8(1))
	f.Fuzz(func(t *testing.T, key, iv, shape []byte, flags uint8) {
		if !BitslicedSupported() || len(key) < 32 || len(iv) < 16 || len(shape) > 256 {
			return
		}
		keyLen := 16 + 16*int(flags&1)
		rk, rounds := refKeySchedule(key[:keyLen], 16)
		var k BitslicedKey
		k.Init(rk, rounds)
		var seed [32]byte
		copy(seed[:], iv)
		r := rand.NewChaCha8(seed)
		var lens []int
		for i, b := range shape {
			n := int(b)
			switch i % 3 {
			case 1:
				n = -n
			case 2:
				n *= 8
			}
			lens = append(lens, n)
		}
		for form, run := range pieceForms(&k, rk, rounds) {
			runPiecesBitsliced(t, r, run, rk, rounds, lens, form)
		}
	})
}

func TestBitslicedNoAllocs(t *testing.T) {
	needBitsliced(t)
	r := rand.NewChaCha8([32]byte{23})
	k, _, _ := newBitslicedKey(r, 16)
	buf := make([]byte, 1420)
	var tag [16]byte
	ps := []Piece{{Dst: &tag[0], N: 16}, {Dst: &buf[0], Src: &buf[0], N: 1420}}
	if a := testing.AllocsPerRun(20, func() { XORPiecesBitsliced(k, ps) }); a != 0 {
		t.Fatalf("XORPiecesBitsliced: %v allocations per run", a)
	}
	rk, rounds := refKeySchedule(randBytes(r, 16), 16)
	k.Init(rk, rounds)
	s := new(Schedule)
	s.Init(rk, 16, rounds)
	if tier, ok := Best(); ok && tier != AVX2 {
		if a := testing.AllocsPerRun(20, func() { XORPiecesHybrid(k, s, tier, ps) }); a != 0 {
			t.Fatalf("XORPiecesHybrid: %v allocations per run", a)
		}
	}
	blocks := make([]byte, 16*100)
	if a := testing.AllocsPerRun(20, func() { EncryptBlocksBitsliced(k, blocks, blocks) }); a != 0 {
		t.Fatalf("EncryptBlocksBitsliced: %v allocations per run", a)
	}
}

func TestBitslicedKeyReset(t *testing.T) {
	r := rand.NewChaCha8([32]byte{24})
	k, _, _ := newBitslicedKey(r, 32)
	if k.Rounds() != 24 {
		t.Fatalf("Rounds() = %d, want 24", k.Rounds())
	}
	k.Reset()
	if *k != (BitslicedKey{}) {
		t.Fatal("Reset left key material")
	}
}

func TestBitslicedPanics(t *testing.T) {
	needBitsliced(t)
	r := rand.NewChaCha8([32]byte{25})
	k, _, _ := newBitslicedKey(r, 16)
	for name, f := range map[string]func(){
		"partial block":   func() { EncryptBlocksBitsliced(k, make([]byte, 32), make([]byte, 17)) },
		"short dst":       func() { EncryptBlocksBitsliced(k, make([]byte, 16), make([]byte, 32)) },
		"zero key":        func() { EncryptBlocksBitsliced(&BitslicedKey{}, make([]byte, 16), make([]byte, 16)) },
		"bad rounds":      func() { new(BitslicedKey).Init(make([]byte, 16*18), 17) },
		"short rk":        func() { new(BitslicedKey).Init(make([]byte, 16*16), 16) },
		"negative piece":  func() { XORPiecesBitsliced(k, []Piece{{N: -1}}) },
		"nil dst piece":   func() { XORPiecesBitsliced(k, []Piece{{N: 1}}) },
		"zero key pieces": func() { XORPiecesBitsliced(&BitslicedKey{}, []Piece{{N: 0}}) },
		"hybrid rounds": func() {
			s := new(Schedule)
			s.Init(make([]byte, 25*16), 16, 24)
			XORPiecesHybrid(k, s, AVX512, nil)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
