//go:build amd64 && gc && !purego

package zuc

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("../../testdata/vectors/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hexWord(t *testing.T, s string) uint32 {
	return binary.BigEndian.Uint32(unhex(t, s))
}

// job is one lane of a vector batch: a spec, the keystream length it needs
// and a check of the produced words.
type job struct {
	id    string
	spec  laneSpec
	words int
	check func(ks []uint32) error
}

// runJobs places the jobs in lanes in a rotated order (so every vector lands
// in several lane positions across calls) and runs them in one batch each.
func runJobs(t *testing.T, tc tierCase, jobs []job) {
	maxWords := 0
	for _, j := range jobs {
		maxWords = max(maxWords, j.words)
	}
	for rot := 0; rot < tc.lanes; rot += 3 {
		st := tc.newState()
		ks := make([]uint32, tc.lanes*maxWords)
		lanes := make([]int, len(jobs))
		for i := 0; i < len(jobs); i += tc.lanes {
			batch := jobs[i:min(i+tc.lanes, len(jobs))]
			for k, j := range batch {
				lanes[i+k] = (k + rot) % tc.lanes
				load(st, lanes[i+k], j.spec)
			}
			st.Init()
			st.KeyStream(ks, maxWords, maxWords)
			for k, j := range batch {
				c := lanes[i+k]
				if err := j.check(ks[c*maxWords : (c+1)*maxWords]); err != nil {
					t.Errorf("%s in lane %d: %v", j.id, c, err)
				}
			}
		}
	}
}

func zucKeystreamJobs(t *testing.T) []job {
	var z128 struct {
		Vectors []struct {
			ID, Key, IV    string
			KeystreamWords []struct {
				Index int
				Word  string
			} `json:"keystream_words"`
		}
	}
	readJSON(t, "zuc128.json", &z128)
	var jobs []job
	for _, v := range z128.Vectors {
		j := job{id: v.ID, spec: laneSpec{key: unhex(t, v.Key), iv: unhex(t, v.IV)}}
		want := map[int]uint32{}
		for _, w := range v.KeystreamWords {
			want[w.Index] = hexWord(t, w.Word)
			j.words = max(j.words, w.Index)
		}
		j.check = func(ks []uint32) error {
			for idx, w := range want {
				if ks[idx-1] != w {
					return fmt.Errorf("z%d = %08x, want %08x", idx, ks[idx-1], w)
				}
			}
			return nil
		}
		jobs = append(jobs, j)
	}
	var z256 struct {
		Vectors []struct {
			ID, Key, IV    string
			KeystreamWords []string `json:"keystream_words"`
		}
	}
	readJSON(t, "zuc256.json", &z256)
	for _, v := range z256.Vectors {
		want := make([]uint32, len(v.KeystreamWords))
		for i, w := range v.KeystreamWords {
			want[i] = hexWord(t, w)
		}
		jobs = append(jobs, job{
			id: v.ID, spec: laneSpec{key: unhex(t, v.Key), iv: unhex(t, v.IV)}, words: len(want),
			check: func(ks []uint32) error {
				for i, w := range want {
					if ks[i] != w {
						return fmt.Errorf("z%d = %08x, want %08x", i+1, ks[i], w)
					}
				}
				return nil
			},
		})
	}
	return jobs
}

// window returns the 32 keystream bits starting at bit i (bit 0 = MSB of
// word 0), as in the EIA3 and ZUC-256-MAC definitions.
func window(ks []uint32, i int) uint32 {
	w, b := i/32, i%32
	if b == 0 {
		return ks[w]
	}
	return ks[w]<<b | ks[w+1]>>(32-b)
}

func msgBit(m []byte, i int) bool { return m[i/8]>>(7-i%8)&1 == 1 }

// eia3 computes 128-EIA3 (ETSI/SAGE Document 1 §4) from keystream words.
func eia3(ks []uint32, m []byte, length int) uint32 {
	var tag uint32
	for i := 0; i < length; i++ {
		if msgBit(m, i) {
			tag ^= window(ks, i)
		}
	}
	tag ^= window(ks, length)
	l := (length+31)/32 + 2
	return tag ^ ks[l-1]
}

// zuc256MAC computes the 2018 ZUC-256 MAC with a t-bit tag (t/32 words).
func zuc256MAC(ks []uint32, m []byte, length, t int) []uint32 {
	n := t / 32
	tag := make([]uint32, n)
	for j := range tag {
		tag[j] = window(ks, 32*j)
	}
	for i := 0; i <= length; i++ {
		if i == length || msgBit(m, i) {
			for j := range tag {
				tag[j] ^= window(ks, t+i+32*j)
			}
		}
	}
	return tag
}

func macJobs(t *testing.T) []job {
	var e struct {
		Vectors []struct {
			ID, Key, Count, Message, Mac string
			Bearer, Direction            int
			LengthBits                   int `json:"length_bits"`
		}
	}
	readJSON(t, "eia3.json", &e)
	var jobs []job
	for _, v := range e.Vectors {
		count := unhex(t, v.Count)
		iv := make([]byte, 16)
		copy(iv, count)
		iv[4] = byte(v.Bearer << 3)
		copy(iv[8:], iv[:8])
		iv[8] ^= byte(v.Direction << 7)
		iv[14] ^= byte(v.Direction << 7)
		msg, length, want := unhex(t, v.Message), v.LengthBits, hexWord(t, v.Mac)
		jobs = append(jobs, job{
			id: v.ID, spec: laneSpec{key: unhex(t, v.Key), iv: iv}, words: (length+31)/32 + 2,
			check: func(ks []uint32) error {
				if got := eia3(ks, msg, length); got != want {
					return fmt.Errorf("MAC %08x, want %08x", got, want)
				}
				return nil
			},
		})
	}
	var z struct {
		Vectors []struct {
			ID, Key, IV, Message, Tag string
			LengthBits                int `json:"length_bits"`
			TagBits                   int `json:"tag_bits"`
		}
	}
	readJSON(t, "zuc256_mac.json", &z)
	for _, v := range z.Vectors {
		c := map[int]ZUC256Constants{32: ZUC256MAC32, 64: ZUC256MAC64, 128: ZUC256MAC128}[v.TagBits]
		msg, length, tbits, want := unhex(t, v.Message), v.LengthBits, v.TagBits, unhex(t, v.Tag)
		jobs = append(jobs, job{
			id: v.ID, spec: laneSpec{key: unhex(t, v.Key), iv: unhex(t, v.IV), c: c}, words: (length+2*tbits+31)/32 + 1,
			check: func(ks []uint32) error {
				tag := zuc256MAC(ks, msg, length, tbits)
				for j, w := range tag {
					if want := binary.BigEndian.Uint32(want[4*j:]); w != want {
						return fmt.Errorf("tag word %d = %08x, want %08x", j, w, want)
					}
				}
				return nil
			},
		})
	}
	return jobs
}

// TestVectors runs the ZUC-128 (incl. z2000), ZUC-256, 128-EIA3 and
// ZUC-256-MAC vectors together, every vector in several lane positions.
func TestVectors(t *testing.T) {
	forEachTier(t, func(t *testing.T, tc tierCase) {
		jobs := append(zucKeystreamJobs(t), macJobs(t)...)
		if len(jobs) < 20 {
			t.Fatalf("only %d vectors read", len(jobs))
		}
		runJobs(t, tc, jobs)
	})
}
