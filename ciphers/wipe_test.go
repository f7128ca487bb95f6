package ciphers

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/gmtun/gmtun/ciphers/internal/sm4"
)

// keyBytes returns the memory of a Key's implementation struct, minus the
// trailing wiped flag (and its padding), for inspection.
func keyBytes(t *testing.T, k Key) []byte {
	t.Helper()
	switch k := k.(type) {
	case *sm4gcmKey:
		return unsafe.Slice((*byte)(unsafe.Pointer(k)), unsafe.Offsetof(k.wiped))
	case *zuc128Key:
		return unsafe.Slice((*byte)(unsafe.Pointer(k)), unsafe.Offsetof(k.direction))
	case *zuc256Key:
		return unsafe.Slice((*byte)(unsafe.Pointer(k)), unsafe.Offsetof(k.wiped))
	case *ublockgcmKey:
		return unsafe.Slice((*byte)(unsafe.Pointer(k)), unsafe.Offsetof(k.wiped))
	}
	t.Fatalf("unknown key type %T", k)
	return nil
}

func testDirectionKeys(id SuiteID) DirectionKeys {
	p := id.Params()
	fill := func(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }
	return DirectionKeys{Enc: fill(p.EncKeySize, 0xa5), MAC: fill(p.MACKeySize, 0x5a), Salt: fill(p.SaltSize, 0x3c)}
}

// TestWipeZeroesKeyMaterial checks that Wipe overwrites every byte of a
// key's schedule (round keys, GHASH powers, ZUC keys, salt) and that a
// wiped key seals nothing and opens nothing.
func TestWipeZeroesKeyMaterial(t *testing.T) {
	for _, id := range Suites {
		t.Run(id.String(), func(t *testing.T) {
			k, err := NewKey(id, testDirectionKeys(id))
			if err != nil {
				t.Fatal(err)
			}
			pkt := make([]byte, HeaderSize+64, HeaderSize+64+MaxTagSize)
			if err := k.Seal([][]byte{pkt}); err != nil {
				t.Fatal(err)
			}
			mem := keyBytes(t, k)
			if bytes.Count(mem, []byte{0}) == len(mem) {
				t.Fatal("key memory is all zeros before Wipe: the inspection looks at the wrong bytes")
			}
			k.Wipe()
			if n := len(mem) - bytes.Count(mem, []byte{0}); n != 0 {
				t.Errorf("%d of %d bytes of key material are non-zero after Wipe", n, len(mem))
			}
			if gk, ok := k.(*sm4gcmKey); ok && gk.gcm != (sm4.GCM{}) {
				t.Error("SM4-GCM schedule not zero after Wipe")
			}
			if m := k.Open([][]byte{pkt}); m.Count() != 0 {
				t.Error("a wiped key opened a packet")
			}
			fresh := make([]byte, HeaderSize+64, HeaderSize+64+MaxTagSize)
			if err := k.Seal([][]byte{fresh}); err == nil {
				t.Error("a wiped key sealed a packet")
			}
		})
	}
}

// TestDefaultSuitesExcludeZUC128 checks that zuc-128 (32-bit tag) is never
// a default: only a configuration naming it enables it.
func TestDefaultSuitesExcludeZUC128(t *testing.T) {
	for _, id := range DefaultSuites {
		if id.Params().TagSize < 16 {
			t.Errorf("default suite %s has a %d-byte tag", id, id.Params().TagSize)
		}
	}
	if len(DefaultSuites) == 0 {
		t.Fatal("no default suites")
	}
}
