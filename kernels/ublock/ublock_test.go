//go:build amd64 && gc && !purego

package ublock

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gmtun/gmtun/kernels/internal/kerneltest"
)

// forEachTier runs f for every tier the CPU supports; a missing tier is a
// visible skip, or a failure when kerneltest.Required.
func forEachTier(t *testing.T, f func(t *testing.T, tier Tier)) {
	for _, tier := range AllTiers {
		t.Run(tier.String(), func(t *testing.T) {
			if !tier.Supported() {
				kerneltest.Unsupported(t, "CPU lacks %s (kernels/cpu flags say no)", tier)
			}
			f(t, tier)
		})
	}
}

func TestRequireAllTiers(t *testing.T) {
	if !kerneltest.Required() {
		t.Skipf("%s does not require every tier on this CPU", kerneltest.RequireEnv)
	}
	for _, tier := range AllTiers {
		if !tier.Supported() {
			t.Errorf("tier %s not supported by this CPU", tier)
		}
	}
}

type vector struct {
	Key, Plaintext, Ciphertext, Kind string
	Trace                            *struct {
		RoundKeys []string `json:"round_keys"`
	}
}

var variants = []struct {
	name           string
	keyLen, blkLen int
}{{"uBlock-128/128", 16, 16}, {"uBlock-128/256", 32, 16}, {"uBlock-256/256", 32, 32}}

// loadVectors reads the spec vectors (testdata/ublock/ublock.json at the
// repository root, a copy of the project's shared vectors; see its
// PROVENANCE).
func loadVectors(t *testing.T) map[string][]vector {
	data, err := os.ReadFile("../../testdata/ublock/ublock.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Vectors map[string][]vector }
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	for _, v := range variants {
		if len(f.Vectors[v.name]) == 0 {
			t.Fatalf("no vectors for %s", v.name)
		}
	}
	return f.Vectors
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReferenceKeySchedule checks the test oracle's key schedule against
// every round key the spec vectors trace.
func TestReferenceKeySchedule(t *testing.T) {
	vs := loadVectors(t)
	traced := 0
	for _, v := range variants {
		for _, vec := range vs[v.name] {
			if vec.Trace == nil {
				continue
			}
			rk, rounds := refKeySchedule(mustHex(t, vec.Key), v.blkLen)
			if len(vec.Trace.RoundKeys) != rounds+1 {
				t.Fatalf("%s: %d traced round keys, want %d", v.name, len(vec.Trace.RoundKeys), rounds+1)
			}
			for i, want := range vec.Trace.RoundKeys {
				if got := hex.EncodeToString(rk[i*v.blkLen : (i+1)*v.blkLen]); got != want {
					t.Errorf("%s RK_%d = %s, want %s", v.name, i, got, want)
				}
			}
			traced++
		}
	}
	if traced != len(variants) {
		t.Fatalf("%d traced vectors, want one per variant", traced)
	}
}

// TestVectors runs every vector through each tier: the spec vectors with
// their published round keys (no key schedule involved), the others with
// the oracle's schedule; encryption and decryption, one block and the same
// block repeated over a full pass and a partial one.
func TestVectors(t *testing.T) {
	vs := loadVectors(t)
	forEachTier(t, func(t *testing.T, tier Tier) {
		for _, v := range variants {
			for i, vec := range vs[v.name] {
				var rk []byte
				rounds := 24
				if v.keyLen == 16 {
					rounds = 16
				}
				if vec.Trace != nil {
					for _, h := range vec.Trace.RoundKeys {
						rk = append(rk, mustHex(t, h)...)
					}
				} else {
					rk, _ = refKeySchedule(mustHex(t, vec.Key), v.blkLen)
				}
				var s Schedule
				s.Init(rk, v.blkLen, rounds)
				pt, ct := mustHex(t, vec.Plaintext), mustHex(t, vec.Ciphertext)
				for _, reps := range []int{1, 3, 4*tier.PairBlocks(v.blkLen) + 5} {
					in := bytes.Repeat(pt, reps)
					want := bytes.Repeat(ct, reps)
					got := make([]byte, len(in))
					EncryptBlocks(tier, &s, got, in)
					if !bytes.Equal(got, want) {
						t.Fatalf("%s #%d (%s) ×%d: encrypt got %x want %x", v.name, i, vec.Kind, reps, got[:v.blkLen], ct)
					}
					DecryptBlocks(tier, &s, got, got)
					if !bytes.Equal(got, in) {
						t.Fatalf("%s #%d (%s) ×%d: decrypt does not invert", v.name, i, vec.Kind, reps)
					}
				}
			}
		}
	})
}

func randBytes(r *rand.ChaCha8, n int) []byte {
	b := make([]byte, n)
	r.Read(b)
	return b
}

// newSchedule returns a random key's schedule for a variant and its
// oracle round keys.
func newSchedule(r *rand.ChaCha8, keyLen, blkLen int) (*Schedule, []byte, int) {
	rk, rounds := refKeySchedule(randBytes(r, keyLen), blkLen)
	s := new(Schedule)
	s.Init(rk, blkLen, rounds)
	return s, rk, rounds
}

// buffers returns src and dst views of n bytes at the given misalignments
// (dst == src when inPlace), with guard bytes after each that the kernels
// must not touch.
func buffers(r *rand.ChaCha8, n, srcOff, dstOff int, inPlace bool) (dst, src, srcBuf, dstBuf []byte) {
	srcBuf = randBytes(r, n+srcOff+64)
	src = srcBuf[srcOff : srcOff+n]
	if inPlace {
		return src, src, srcBuf, srcBuf
	}
	dstBuf = randBytes(r, n+dstOff+64)
	return dstBuf[dstOff : dstOff+n], src, srcBuf, dstBuf
}

func TestECBAgainstReference(t *testing.T) {
	r := rand.NewChaCha8([32]byte{1})
	forEachTier(t, func(t *testing.T, tier Tier) {
		for _, v := range variants {
			s, rk, rounds := newSchedule(r, v.keyLen, v.blkLen)
			maxBlocks := 8*tier.PairBlocks(v.blkLen) + 3
			for n := 0; n <= maxBlocks; n++ {
				for _, inPlace := range []bool{false, true} {
					off := n % 7
					dst, src, _, dstBuf := buffers(r, n*v.blkLen, off, 3, inPlace)
					guard := append([]byte(nil), dstBuf[len(dstBuf)-64:]...)
					want := append([]byte(nil), src...)
					for b := 0; b < n; b++ {
						refEncrypt(rk, rounds, want[b*v.blkLen:(b+1)*v.blkLen])
					}
					pt := append([]byte(nil), src...)
					EncryptBlocks(tier, s, dst, src)
					if !bytes.Equal(dst, want) {
						t.Fatalf("%s n=%d inPlace=%v: encryption differs from the reference", v.name, n, inPlace)
					}
					if !bytes.Equal(dstBuf[len(dstBuf)-64:], guard) {
						t.Fatalf("%s n=%d: wrote past the output", v.name, n)
					}
					out := make([]byte, len(dst))
					DecryptBlocks(tier, s, out, dst)
					if !bytes.Equal(out, pt) {
						t.Fatalf("%s n=%d inPlace=%v: decryption does not invert", v.name, n, inPlace)
					}
					// Decryption of arbitrary data against the reference's.
					ct := randBytes(r, n*v.blkLen)
					wantPT := append([]byte(nil), ct...)
					for b := 0; b < n; b++ {
						refDecrypt(rk, rounds, wantPT[b*v.blkLen:(b+1)*v.blkLen])
					}
					DecryptBlocks(tier, s, ct, ct)
					if !bytes.Equal(ct, wantPT) {
						t.Fatalf("%s n=%d: decryption differs from the reference", v.name, n)
					}
				}
			}
		}
	})
}

func TestCTRAgainstReference(t *testing.T) {
	r := rand.NewChaCha8([32]byte{2})
	forEachTier(t, func(t *testing.T, tier Tier) {
		for _, v := range variants[:2] {
			s, rk, rounds := newSchedule(r, v.keyLen, v.blkLen)
			for n := 0; n <= 16*(8*tier.PairBlocks(16)+2); n++ {
				for _, inPlace := range []bool{false, true} {
					dst, src, _, dstBuf := buffers(r, n, n%5, n%3, inPlace)
					guard := append([]byte(nil), dstBuf[len(dstBuf)-64:]...)
					var ctr [16]byte
					copy(ctr[:], randBytes(r, 16))
					if n%4 == 0 {
						// Across the 2^32 wrap of inc32.
						binary.BigEndian.PutUint32(ctr[12:], 0xffffffff-uint32(n%37))
					}
					wantCtr := ctr
					want := make([]byte, n)
					refCTR(rk, rounds, &wantCtr, want, src)
					XORKeyStream(tier, s, &ctr, dst, src)
					if !bytes.Equal(dst, want) {
						t.Fatalf("%s n=%d inPlace=%v: keystream differs from the reference", v.name, n, inPlace)
					}
					if ctr != wantCtr {
						t.Fatalf("%s n=%d: counter %x, want %x", v.name, n, ctr, wantCtr)
					}
					if !bytes.Equal(dstBuf[len(dstBuf)-64:], guard) {
						t.Fatalf("%s n=%d: wrote past the output", v.name, n)
					}
				}
			}
		}
	})
}

func repeatInt(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func TestNoAllocs(t *testing.T) {
	r := rand.NewChaCha8([32]byte{4})
	forEachTier(t, func(t *testing.T, tier Tier) {
		s, _, _ := newSchedule(r, 16, 16)
		buf := make([]byte, 1420)
		var ctr [16]byte
		if a := testing.AllocsPerRun(20, func() {
			XORKeyStream(tier, s, &ctr, buf, buf)
			EncryptBlocks(tier, s, buf[:1408], buf[:1408])
		}); a != 0 {
			t.Fatalf("%v allocations per run", a)
		}
	})
}

func TestPanics(t *testing.T) {
	tier, ok := Best()
	if !ok {
		t.Skip("no kernel tier on this CPU")
	}
	r := rand.NewChaCha8([32]byte{5})
	s, _, _ := newSchedule(r, 16, 16)
	for name, f := range map[string]func(){
		"partial block":    func() { EncryptBlocks(tier, s, make([]byte, 32), make([]byte, 17)) },
		"short output":     func() { EncryptBlocks(tier, s, make([]byte, 16), make([]byte, 32)) },
		"short ctr output": func() { XORKeyStream(tier, s, new([16]byte), make([]byte, 3), make([]byte, 4)) },
		"no schedule":      func() { EncryptBlocks(tier, new(Schedule), make([]byte, 16), make([]byte, 16)) },
		"bad round keys":   func() { new(Schedule).Init(make([]byte, 16), 16, 16) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
	_ = fmt.Sprint
}
