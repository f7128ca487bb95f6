package handshake

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/emmansun/gmsm/ecdh"
	"github.com/emmansun/gmsm/sm3"
)

type xy struct{ X, Y string }

type kexVector struct {
	ID          string `json:"id"`
	Curve       string `json:"curve"`
	IDA         string `json:"id_a"`
	IDB         string `json:"id_b"`
	DA          string `json:"d_a"`
	DB          string `json:"d_b"`
	PA          xy     `json:"p_a"`
	PB          xy     `json:"p_b"`
	ZA          string `json:"z_a"`
	ZB          string `json:"z_b"`
	RA          string `json:"r_a"`
	RB          string `json:"r_b"`
	RAPub       xy     `json:"R_a"`
	RBPub       xy     `json:"R_b"`
	SharedPoint xy     `json:"shared_point"`
	KlenBits    int    `json:"klen_bits"`
	K           string `json:"k"`
	InnerHash   string `json:"inner_hash"`
	SB          string `json:"s_b"`
	SA          string `json:"s_a"`
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// loadKexVector returns the GB/T 32918.5 Annex B recommended-curve example.
func loadKexVector(t testing.TB) kexVector {
	t.Helper()
	var f struct{ Vectors []kexVector }
	readJSON(t, "../testdata/vectors/sm2_kex.json", &f)
	for _, v := range f.Vectors {
		if v.Curve == "recommended" {
			return v
		}
	}
	t.Fatal("no recommended-curve vector in sm2_kex.json")
	return kexVector{}
}

func hex32(t testing.TB, s string) (a [32]byte) {
	t.Helper()
	b := mustHex(t, s)
	if len(b) != 32 {
		t.Fatalf("want 32 bytes, got %d", len(b))
	}
	copy(a[:], b)
	return a
}

func hexPoint(t testing.TB, p xy) (a Point) {
	t.Helper()
	copy(a[:], mustHex(t, p.X+p.Y))
	return a
}

// TestSM2KeyExchangeVector reproduces GB/T 32918.5 Annex B (K, S_B, S_A)
// through the functions the handshake uses.
func TestSM2KeyExchangeVector(t *testing.T) {
	v := loadKexVector(t)
	dA, err := NewPrivateKey(mustHex(t, v.DA))
	if err != nil {
		t.Fatal(err)
	}
	dB, err := NewPrivateKey(mustHex(t, v.DB))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dB.Public().Bytes(), hexPoint(t, v.PB); got != want {
		t.Fatalf("P_B = %x, want %x", got, want)
	}
	rA, err := ecdh.P256().NewPrivateKey(mustHex(t, v.RA))
	if err != nil {
		t.Fatal(err)
	}
	rB, err := ecdh.P256().NewPrivateKey(mustHex(t, v.RB))
	if err != nil {
		t.Fatal(err)
	}
	RA, RB := pointBytes(rA.PublicKey()), pointBytes(rB.PublicKey())
	if RA != hexPoint(t, v.RAPub) || RB != hexPoint(t, v.RBPub) {
		t.Fatal("ephemeral public keys differ from the vector")
	}
	idA, idB := mustHex(t, v.IDA), mustHex(t, v.IDB)
	zA, err := za(dA.Public(), idA)
	if err != nil {
		t.Fatal(err)
	}
	zB, _ := za(dB.Public(), idB)
	if zA != hex32(t, v.ZA) || zB != hex32(t, v.ZB) {
		t.Fatalf("Z_A/Z_B = %x/%x", zA, zB)
	}
	// The default ID must give the same Z (gmsm substitutes it for nil).
	if z0, _ := za(dA.Public(), nil); z0 != zA {
		t.Fatal("empty ID does not map to the default ID")
	}
	// A side: U = [t_A](P_B + [x̄2]R_B); B side: V.
	u, err := dA.k.SM2MQV(rA, dB.Public().k, mustPub(t, RB))
	if err != nil {
		t.Fatal(err)
	}
	vv, err := dB.k.SM2MQV(rB, dA.Public().k, mustPub(t, RA))
	if err != nil {
		t.Fatal(err)
	}
	var U, V [64]byte
	copy(U[:], u.Bytes()[1:])
	copy(V[:], vv.Bytes()[1:])
	want := hexPoint(t, v.SharedPoint)
	if U != want || V != want {
		t.Fatalf("U = %x\nV = %x\nwant %x", U, V, want)
	}
	k := sm2SharedKey(&U, &zA, &zB)
	klen := v.KlenBits / 8
	if !bytes.Equal(k[:klen], mustHex(t, v.K)) {
		t.Fatalf("K = %x, want %x", k[:klen], mustHex(t, v.K))
	}
	// KDF output is a prefix-stable stream: the standard's 128-bit K is
	// the prefix of gmtun's 256-bit K_std. Cross-check with gmsm's own
	// SM2SharedKey.
	ref, err := u.SM2SharedKey(false, 32, dA.Public().k, dB.Public().k, idA, idB)
	if err != nil || !bytes.Equal(ref, k[:]) {
		t.Fatalf("gmsm SM2SharedKey = %x, ours %x (%v)", ref, k, err)
	}
	inner := hashParts(U[:32], zA[:], zB[:], RA[:], RB[:])
	if !bytes.Equal(inner[:], mustHex(t, v.InnerHash)) {
		t.Fatalf("inner hash %x", inner)
	}
	sB := confirmValue(prefixSB, &V, &zA, &zB, &RA, &RB)
	sA := confirmValue(prefixSA, &U, &zA, &zB, &RA, &RB)
	if !bytes.Equal(sB[:], mustHex(t, v.SB)) || !bytes.Equal(sA[:], mustHex(t, v.SA)) {
		t.Fatalf("S_B = %x\nS_A = %x", sB, sA)
	}
}

func mustPub(t testing.TB, p Point) *ecdh.PublicKey {
	t.Helper()
	k, err := parsePoint(&p)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestPrimitiveVectors checks the gmsm SM3, HMAC-SM3 and SM3-KDF against
// the standards' examples, through the package's wrappers.
func TestPrimitiveVectors(t *testing.T) {
	var h struct {
		Vectors []struct{ ID, Message, Digest string }
	}
	readJSON(t, "../testdata/vectors/sm3.json", &h)
	for _, v := range h.Vectors {
		got := hashParts(mustHex(t, v.Message))
		if hex.EncodeToString(got[:]) != v.Digest {
			t.Errorf("%s: SM3 = %x", v.ID, got)
		}
	}
	var m struct {
		Vectors []struct{ ID, Key, Message, Mac string }
	}
	readJSON(t, "../testdata/vectors/hmac_sm3.json", &m)
	for _, v := range m.Vectors {
		got := hmacSM3(mustHex(t, v.Key), mustHex(t, v.Message))
		if hex.EncodeToString(got[:]) != v.Mac {
			t.Errorf("%s: HMAC-SM3 = %x", v.ID, got)
		}
	}
	var k struct {
		Vectors []struct {
			ID, Z, Output string
			KlenBits      int `json:"klen_bits"`
		}
	}
	readJSON(t, "../testdata/vectors/sm3_kdf.json", &k)
	for _, v := range k.Vectors {
		got := sm3.Kdf(mustHex(t, v.Z), v.KlenBits/8)
		if hex.EncodeToString(got) != v.Output {
			t.Errorf("%s: KDF = %x", v.ID, got)
		}
	}
	if len(h.Vectors) == 0 || len(m.Vectors) == 0 || len(k.Vectors) == 0 {
		t.Fatal("vector files are empty")
	}
}
