package ublock

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/gmtun/gmtun/ciphers/internal/testinput"
)

// vectorFile is the shape of testdata/ublock/ublock.json (see its
// PROVENANCE).
type vectorFile struct {
	Variants map[string]struct {
		BlockBytes int `json:"block_bytes"`
		KeyBytes   int `json:"key_bytes"`
		Rounds     int `json:"rounds"`
	} `json:"variants"`
	Vectors map[string][]struct {
		Key        string   `json:"key"`
		Plaintext  string   `json:"plaintext"`
		Ciphertext string   `json:"ciphertext"`
		Kind       string   `json:"kind"`
		AllAgree   bool     `json:"all_agree"`
		Confirmed  []string `json:"confirmed_by"`
		Trace      *struct {
			RoundKeys []string `json:"round_keys"`
			States    []string `json:"state_after_round"`
		} `json:"trace"`
	} `json:"vectors"`
}

func loadVectors(t *testing.T) *vectorFile {
	t.Helper()
	b, err := os.ReadFile("../../../testdata/ublock/ublock.json")
	if err != nil {
		t.Fatal(err)
	}
	var f vectorFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newVariant returns the Cipher of the named variant for key.
func newVariant(t *testing.T, variant string, key []byte) *Cipher {
	t.Helper()
	var c *Cipher
	var err error
	if variant == "uBlock-256/256" {
		c, err = NewCipher256(key)
	} else {
		c, err = NewCipher(key)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestVectors checks every vector of every variant: the key schedule
// against the published round keys, the state after every round, and
// encryption and decryption of the dispatched, generic and table-oracle
// implementations.
func TestVectors(t *testing.T) {
	f := loadVectors(t)
	if len(f.Vectors) != 3 {
		t.Fatalf("%d variants in the vector file, want 3", len(f.Vectors))
	}
	total, traced := 0, 0
	for variant, vs := range f.Vectors {
		par := f.Variants[variant]
		for i, v := range vs {
			total++
			if !v.AllAgree || len(v.Confirmed) < 3 {
				t.Errorf("%s #%d: not confirmed by enough implementations", variant, i)
			}
			key, pt, ct := mustHex(t, v.Key), mustHex(t, v.Plaintext), mustHex(t, v.Ciphertext)
			if len(key) != par.KeyBytes || len(pt) != par.BlockBytes || len(ct) != par.BlockBytes {
				t.Fatalf("%s #%d: sizes %d/%d/%d", variant, i, len(key), len(pt), len(ct))
			}
			c := newVariant(t, variant, key)
			if c.BlockSize() != par.BlockBytes || c.Rounds() != par.Rounds {
				t.Fatalf("%s: block %d rounds %d, want %d %d", variant, c.BlockSize(), c.Rounds(), par.BlockBytes, par.Rounds)
			}
			got := make([]byte, len(pt))
			c.Encrypt(got, pt)
			if !bytes.Equal(got, ct) {
				t.Errorf("%s #%d (%s): Encrypt = %x, want %x", variant, i, v.Kind, got, ct)
			}
			c.Decrypt(got, ct)
			if !bytes.Equal(got, pt) {
				t.Errorf("%s #%d: Decrypt = %x, want %x", variant, i, got, pt)
			}
			encryptBlocksGeneric(&c.s, got, pt)
			if !bytes.Equal(got, ct) {
				t.Errorf("%s #%d: generic encryption = %x, want %x", variant, i, got, ct)
			}
			decryptBlocksGeneric(&c.s, got, ct)
			if !bytes.Equal(got, pt) {
				t.Errorf("%s #%d: generic decryption = %x, want %x", variant, i, got, pt)
			}
			if o := refEncrypt(key, pt, nil); !bytes.Equal(o, ct) {
				t.Errorf("%s #%d: table oracle = %x, want %x", variant, i, o, ct)
			}
			if o := refDecrypt(key, ct); !bytes.Equal(o, pt) {
				t.Errorf("%s #%d: table oracle decryption = %x, want %x", variant, i, o, pt)
			}
			if v.Trace == nil {
				continue
			}
			traced++
			tr := v.Trace
			if len(tr.RoundKeys) != par.Rounds+1 || len(tr.States) != par.Rounds {
				t.Fatalf("%s: trace has %d round keys and %d states", variant, len(tr.RoundKeys), len(tr.States))
			}
			n := par.BlockBytes
			ref := refSchedule(key, n)
			for r, rk := range tr.RoundKeys {
				want := mustHex(t, rk)
				if g := c.s.RK[r*n : (r+1)*n]; !bytes.Equal(g, want) {
					t.Errorf("%s: RK_%d = %x, want %x", variant, r, g, want)
				}
				if !bytes.Equal(ref[r], want) {
					t.Errorf("%s: oracle RK_%d = %x, want %x", variant, r, ref[r], want)
				}
			}
			if rest := c.s.RK[(par.Rounds+1)*n:]; !bytes.Equal(rest, make([]byte, len(rest))) {
				t.Errorf("%s: schedule bytes past RK_r are not zero", variant)
			}
			refEncrypt(key, pt, func(r int, x []byte) {
				if want := mustHex(t, tr.States[r-1]); !bytes.Equal(x, want) {
					t.Errorf("%s: state after round %d = %x, want %x", variant, r, x, want)
				}
			})
			// The nibble-sliced rounds, stopped after each round.
			for r := 1; r <= par.Rounds; r++ {
				s := c.s
				s.Rounds = r
				// With zero as the final key the output is the state after
				// round r.
				clear(s.RK[r*n : (r+1)*n])
				encryptBlocksGeneric(&s, got, pt)
				if want := mustHex(t, tr.States[r-1]); !bytes.Equal(got, want) {
					t.Errorf("%s: generic state after round %d = %x, want %x", variant, r, got, want)
				}
			}
		}
	}
	if total != 39 || traced != 3 {
		t.Errorf("checked %d vectors (%d traced), want 39 (3)", total, traced)
	}
}

// TestGenericVsTableOracle compares the nibble-sliced code with the
// byte-wise table oracle on random keys and blocks of every variant,
// several blocks per call (so all four slots of a pass are checked).
func TestGenericVsTableOracle(t *testing.T) {
	rng := newRand("oracle")
	for _, v := range variants {
		for trial := range 100 {
			key := testinput.Bytes(rng, v.keyLen)
			s := newSchedule(t, key, v.blkLen)
			nb := 1 + trial%9
			pt := testinput.Bytes(rng, nb*v.blkLen)
			ct := make([]byte, len(pt))
			encryptBlocksGeneric(s, ct, pt)
			for b := range nb {
				blk := pt[b*v.blkLen : (b+1)*v.blkLen]
				if want := refEncrypt(key, blk, nil); !bytes.Equal(ct[b*v.blkLen:(b+1)*v.blkLen], want) {
					t.Fatalf("%s key %x block %d: %x, oracle %x", v.name, key, b, ct[b*v.blkLen:(b+1)*v.blkLen], want)
				}
			}
			back := make([]byte, len(ct))
			decryptBlocksGeneric(s, back, ct)
			if !bytes.Equal(back, pt) {
				t.Fatalf("%s: decryption does not invert", v.name)
			}
		}
	}
}
