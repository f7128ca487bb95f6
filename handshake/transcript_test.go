package handshake

import (
	"bytes"
	"crypto/cipher"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"testing"

	gmsm4 "github.com/emmansun/gmsm/sm4"

	"github.com/gmtun/gmtun/ciphers"
)

var update = flag.Bool("update", false, "rewrite handshake/testdata/transcript.json")

const transcriptPath = "testdata/transcript.json"

type namedHex struct {
	Name string `json:"name"`
	Hex  string `json:"hex"`
}

type transcript struct {
	Description string     `json:"description"`
	Inputs      []namedHex `json:"inputs"`
	Values      []namedHex `json:"values"`
	Messages    []namedHex `json:"messages"`
}

// genTranscript runs one handshake with fixed inputs: the static and
// ephemeral keys of GB/T 32918.5 Annex B (I = A, R = B, default IDs), a
// fixed PSK, fixed indices and time, an offer of zuc-256 then sm4-gcm.
func genTranscript(t *testing.T) transcript {
	v := loadKexVector(t)
	dI, err := NewPrivateKey(mustHex(t, v.DA))
	if err != nil {
		t.Fatal(err)
	}
	dR, _ := NewPrivateKey(mustHex(t, v.DB))
	var psk [32]byte
	for i := range psk {
		psk[i] = byte(i)
	}
	iIdx, rIdx := newTestIndices(0x0a000000), newTestIndices(0x0b000000)
	li, err := NewLocal(Config{PrivateKey: dI, Rand: bytes.NewReader(mustHex(t, v.RA)), Indices: iIdx})
	if err != nil {
		t.Fatal(err)
	}
	lr, _ := NewLocal(Config{PrivateKey: dR, Rand: bytes.NewReader(mustHex(t, v.RB)), Indices: rIdx})
	var vals []namedHex
	seen := map[string]string{}
	rec := func(side string) func(string, []byte) {
		return func(name string, b []byte) {
			h := hex.EncodeToString(b)
			if prev, ok := seen[name]; ok {
				if prev != h {
					t.Errorf("%s computed %s = %s, other side %s", side, name, h, prev)
				}
				return
			}
			seen[name] = h
			vals = append(vals, namedHex{name, h})
		}
	}
	li.trace, lr.trace = rec("initiator"), rec("responder")
	suites := []ciphers.SuiteID{ciphers.ZUC256, ciphers.SM4GCM}
	pi, _ := li.AddPeer(PeerConfig{PublicKey: dR.Public(), PresharedKey: &psk, Suites: suites})
	if _, err := lr.AddPeer(PeerConfig{PublicKey: dI.Public(), PresharedKey: &psk}); err != nil {
		t.Fatal(err)
	}

	m1, err := li.CreateInitiation(pi, t0)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := lr.ConsumeInitiation(m1[:], t0)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := li.ConsumeResponse(rr.Response[:], t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lr.ConsumeConfirm(ir.Confirm[:], t0); err != nil {
		t.Fatal(err)
	}
	pubI, pubR := dI.Public().Bytes(), dR.Public().Bytes()
	nowTAI := tai64n(t0)
	return transcript{
		Description: "gmtun v1 handshake known-answer transcript (docs/PROTOCOL.md). Static and ephemeral keys are " +
			"those of the GB/T 32918.5-2017 Annex B key-exchange example (initiator = A, responder = B, default IDs), " +
			"so V, K (first 16 bytes), S_B and S_A equal that example. Offer: zuc-256, sm4-gcm. Regenerate with " +
			"go test ./handshake -run TestTranscript -update.",
		Inputs: []namedHex{
			{"d_I", v.DA}, {"P_I", hex.EncodeToString(pubI[:])}, {"ID_I", hex.EncodeToString([]byte(DefaultID))},
			{"d_R", v.DB}, {"P_R", hex.EncodeToString(pubR[:])}, {"ID_R", hex.EncodeToString([]byte(DefaultID))},
			{"r_I", v.RA}, {"r_R", v.RB}, {"PSK", hex.EncodeToString(psk[:])},
			{"sender_index_I", "0100000a"}, {"sender_index_R", "0100000b"},
			{"timestamp_tai64n", hex.EncodeToString(nowTAI[:])},
		},
		Values:   vals,
		Messages: []namedHex{{"initiation", hex.EncodeToString(m1[:])}, {"response", hex.EncodeToString(rr.Response[:])}, {"confirm", hex.EncodeToString(ir.Confirm[:])}},
	}
}

func TestTranscript(t *testing.T) {
	got := genTranscript(t)
	if *update {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(transcriptPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want transcript
	readJSON(t, transcriptPath, &want)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		for i := range max(len(got.Values), len(want.Values)) {
			if i >= len(got.Values) || i >= len(want.Values) || got.Values[i] != want.Values[i] {
				t.Errorf("first differing value at %d", i)
				break
			}
		}
		t.Fatal("handshake transcript differs from testdata/transcript.json")
	}
	vals := map[string][]byte{}
	for _, nv := range want.Values {
		vals[nv.Name] = mustHex(t, nv.Hex)
	}
	msgs := map[string][]byte{}
	for _, nv := range want.Messages {
		msgs[nv.Name] = mustHex(t, nv.Hex)
	}
	in := map[string][]byte{}
	for _, nv := range want.Inputs {
		in[nv.Name] = mustHex(t, nv.Hex)
	}
	// Anchor to the standard: GB/T 32918.5 Annex B values.
	v := loadKexVector(t)
	if !bytes.Equal(vals["V"], mustHex(t, v.SharedPoint.X+v.SharedPoint.Y)) ||
		!bytes.Equal(vals["K"][:16], mustHex(t, v.K)) ||
		!bytes.Equal(vals["S_B"], mustHex(t, v.SB)) || !bytes.Equal(vals["S_A"], mustHex(t, v.SA)) {
		t.Fatal("transcript V/K/S_B/S_A do not match GB/T 32918.5 Annex B")
	}
	// Re-derive the transcript hashes and open every encrypted field from
	// the message bytes alone, as another implementation would.
	m1, m2, m3 := msgs["initiation"], msgs["response"], msgs["confirm"]
	h := func(parts ...[]byte) []byte { s := hashParts(parts...); return s[:] }
	c0 := h([]byte("gmtun v1 SM2-KE SM3 SM4-GCM"))
	t1 := h(h(c0, in["P_R"]), m1[:72])
	t2 := h(t1, m1[72:120])
	t3 := h(t2, m1[120:156])
	t4 := h(t3, m2[:108])
	t5 := h(t4, m2[108:132])
	t6 := h(t5, m3[:40])
	for name, x := range map[string][]byte{"C0": c0, "T1": t1, "T2": t2, "T3": t3, "T4": t4, "T5": t5, "T6": t6} {
		if !bytes.Equal(vals[name], x) {
			t.Errorf("%s re-derived %x, transcript %x", name, x, vals[name])
		}
	}
	// gmsm's SM4 and crypto/cipher's GCM: an oracle independent of the
	// ciphers/sm4 code the handshake seals with.
	openWith := func(key, ct, aad []byte) []byte {
		b, err := gmsm4.NewCipher(key)
		if err != nil {
			t.Fatal(err)
		}
		g, err := cipher.NewGCM(b)
		if err != nil {
			t.Fatal(err)
		}
		out, err := g.Open(nil, make([]byte, 12), ct, aad)
		if err != nil {
			t.Fatalf("cannot open field: %v", err)
		}
		return out
	}
	if sid := openWith(vals["k1"], m1[72:120], t1); !bytes.Equal(sid, h(in["P_I"])) {
		t.Error("enc_static does not hold SM3(P_I)")
	}
	pl := openWith(vals["k2"], m1[120:156], t2)
	if !bytes.Equal(pl[:12], in["timestamp_tai64n"]) || !bytes.Equal(pl[12:], []byte{2, 1, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("payload %x", pl)
	}
	if sel := openWith(vals["k3"], m2[108:132], t4); !bytes.Equal(sel, []byte{2, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("selection %x", sel)
	}
	if tag := openWith(vals["k_conf"], m3[40:56], t6); len(tag) != 0 {
		t.Error("confirm tag")
	}
	if !bytes.Equal(m2[76:108], vals["S_B"]) || !bytes.Equal(m3[8:40], vals["S_A"]) {
		t.Error("S_B/S_A not on the wire")
	}
	// mac1 of each message under the receiver's key.
	chk := func(m []byte, off int, pub []byte) {
		k := h([]byte("mac1----"), pub)
		mac := hmacSM3(k, m[:off])
		if !bytes.Equal(mac[:16], m[off:off+16]) {
			t.Errorf("mac1 at %d", off)
		}
	}
	chk(m1, 156, in["P_R"])
	chk(m2, 132, in["P_I"])
	chk(m3, 56, in["P_R"])
}
