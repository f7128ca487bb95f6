//go:build amd64 && gc && !purego

package ublock

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	"github.com/gmtun/gmtun/ciphers/internal/impl/impltest"
	"github.com/gmtun/gmtun/ciphers/internal/testinput"
)

// multiBatch builds jobs of the given lengths, alternating uBlock-128/128
// and 128/256 keys in runs of three (so groups split where the round
// count changes), in place for odd jobs, at an odd offset for the others,
// some counters about to wrap; and the expected output and counters from
// ctr32XORGeneric job by job.
func multiBatch(t *testing.T, seed string, lens []int, keys int) (jobs []Job, want [][]byte, wantCtr [][16]byte) {
	rng := newRand(seed)
	scheds := make([]*Schedule, keys)
	for i := range scheds {
		keyLen := KeySize128
		if (i/3)%2 == 1 {
			keyLen = KeySize256
		}
		scheds[i] = newSchedule(t, testinput.Bytes(rng, keyLen), BlockSize)
	}
	for i, n := range lens {
		s := scheds[i%keys]
		src := testinput.Unaligned(testinput.Bytes(rng, n), i%5)
		dst := src
		if i%2 == 0 {
			dst = testinput.Unaligned(make([]byte, n), 3)
		}
		ctr := new([16]byte)
		copy(ctr[:], testinput.Bytes(rng, 16))
		if i%4 == 1 {
			binary.BigEndian.PutUint32(ctr[12:], 0xffffffff-uint32(i))
		}
		wc := *ctr
		w := make([]byte, n)
		ctr32XORGeneric(s, &wc, w, src)
		jobs = append(jobs, Job{S: s, Ctr: ctr, Dst: dst, Src: src})
		want = append(want, w)
		wantCtr = append(wantCtr, wc)
	}
	return jobs, want, wantCtr
}

// TestAllImplsCTR32XORMulti: on every tier (and generic), the multi-key
// path equals the single-key generic code job by job, for uniform
// tunnel-sized batches, mixed lengths, more jobs than a call's lanes,
// and one key shared by many jobs.
func TestAllImplsCTR32XORMulti(t *testing.T) {
	mixed := []int{0, 1, 15, 16, 17, 31, 32, 33, 64, 100, 127, 128, 129, 255, 256, 511, 512, 513, 1420, 1500, 4096, 7, 48, 3000}
	uniform := make([]int, 64)
	for i := range uniform {
		uniform[i] = 1420
	}
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		for _, tc := range []struct {
			name string
			lens []int
			keys int
		}{
			{"64x1420-64keys", uniform, 64},
			{"64x1420-1key", uniform, 1},
			{"mixed-24keys", mixed, len(mixed)},
			{"mixed-5keys", mixed, 5},
			{"one", []int{1420}, 1},
			{"empty", nil, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				jobs, want, wantCtr := multiBatch(t, "multi "+tc.name, tc.lens, tc.keys)
				CTR32XORMulti(jobs)
				for i, j := range jobs {
					if !bytes.Equal(j.Dst[:len(j.Src)], want[i]) {
						t.Fatalf("job %d (%d bytes): differs from ctr32XORGeneric", i, len(j.Src))
					}
					if *j.Ctr != wantCtr[i] {
						t.Fatalf("job %d (%d bytes): counter %x, want %x", i, len(j.Src), *j.Ctr, wantCtr[i])
					}
				}
			})
		}
	})
}

func TestCTR32XORMultiPanics(t *testing.T) {
	s128 := newSchedule(t, make([]byte, KeySize128), BlockSize)
	s256 := newSchedule(t, make([]byte, KeySize256), BlockSize256)
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		for name, j := range map[string]Job{
			"256-bit block": {S: s256, Ctr: new([16]byte), Dst: make([]byte, 32), Src: make([]byte, 32)},
			"short dst":     {S: s128, Ctr: new([16]byte), Dst: make([]byte, 3), Src: make([]byte, 4)},
		} {
			t.Run(name, func(t *testing.T) {
				defer func() {
					if recover() == nil {
						t.Fatal("no panic")
					}
				}()
				CTR32XORMulti([]Job{j})
			})
		}
	})
}

func TestCTR32XORMultiNoAllocs(t *testing.T) {
	jobs, _, _ := multiBatch(t, "multi allocs", []int{1420, 1420, 100, 7, 1420, 1420, 1420, 1420, 1420, 33}, 10)
	impltest.TestAllImplementations(t, ImplPackage, func(t *testing.T) {
		if a := testing.AllocsPerRun(10, func() { CTR32XORMulti(jobs) }); a != 0 {
			t.Fatalf("%v allocations per batch", a)
		}
	})
}

// FuzzTiersAgree compares every tier this CPU has with the generic code on
// one input: ECB encryption and decryption (any variant), the CTR32
// keystream (128-bit block) and the multi-key path over the input cut in
// pieces.
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

		run := func() (enc, dec, ks, multi []byte, c [16]byte) {
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
			// The same data in pieces of growing length, each its own
			// counter, through the multi-key path.
			multi = make([]byte, len(data))
			var jobs []Job
			for off, n := 0, 1; off < len(data); off, n = off+n, n*3+1 {
				n = min(n, len(data)-off)
				jc := new([16]byte)
				*jc = ctr
				jc[0] ^= byte(len(jobs))
				jobs = append(jobs, Job{S: s, Ctr: jc, Dst: multi[off : off+n], Src: data[off : off+n]})
			}
			CTR32XORMulti(jobs)
			return
		}
		impl.Select(ImplPackage, impl.Generic)
		gEnc, gDec, gKS, gMulti, gCtr := run()
		impl.Reset(ImplPackage)
		defer impl.Reset(ImplPackage)
		for _, name := range impl.List(ImplPackage) {
			if !impl.Select(ImplPackage, name) {
				continue
			}
			enc, dec, ks, multi, c := run()
			if !bytes.Equal(enc, gEnc) || !bytes.Equal(dec, gDec) {
				t.Fatalf("%s: ECB differs from generic (%s, %d bytes)", name, v.name, len(ecbIn))
			}
			if !bytes.Equal(ks, gKS) || c != gCtr {
				t.Fatalf("%s: CTR32 differs from generic (%d bytes)", name, len(data))
			}
			if !bytes.Equal(multi, gMulti) {
				t.Fatalf("%s: multi-key CTR32 differs from generic (%d bytes)", name, len(data))
			}
		}
	})
}
