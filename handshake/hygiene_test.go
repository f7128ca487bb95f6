package handshake

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
)

// TestPrivateKeyRedacts checks that no fmt verb prints a private key's
// scalar, directly, through a pointer or nested in a struct, while Encode
// still gives the text form.
func TestPrivateKeyRedacts(t *testing.T) {
	k := testKey(t, "redact")
	text := k.Encode()
	raw := k.Bytes()
	secrets := []string{text, hex.EncodeToString(raw), strings.ToUpper(hex.EncodeToString(raw)), text[:16]}
	type holder struct {
		Key  *PrivateKey
		Name string
	}
	vals := []any{k, *k, holder{Key: k, Name: "x"}, &holder{Key: k}, []*PrivateKey{k}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		for i, v := range vals {
			out := fmt.Sprintf(verb, v)
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("fmt %s of value %d prints the secret: %q", verb, i, out)
				}
			}
			if i < 2 && out != "(redacted)" {
				t.Errorf("fmt %s of value %d = %q, want (redacted)", verb, i, out)
			}
		}
	}
	if s := k.String(); s != "(redacted)" {
		t.Errorf("String() = %q", s)
	}
	if s := k.GoString(); s != "(redacted)" {
		t.Errorf("GoString() = %q", s)
	}
	if q, err := ParsePrivateKey(text); err != nil || !q.Equal(k) {
		t.Fatalf("Encode does not round-trip: %v", err)
	}
}

// TestParsePrivateKeyText checks that the byte-slice parser accepts what
// ParsePrivateKey accepts and rejects what it rejects.
func TestParsePrivateKeyText(t *testing.T) {
	k := testKey(t, "text")
	good := k.Encode()
	cases := []string{good, "  " + good + "\n", "", "AAAA", good[:43] + "=", strings.Repeat("A", 43) + "=",
		strings.Repeat("/", 43) + "=", good + "AAAA", good[:40], strings.Repeat("A", 300)}
	for _, c := range cases {
		want, werr := ParsePrivateKey(c)
		got, gerr := ParsePrivateKeyText([]byte(c))
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%q: ParsePrivateKey err %v, ParsePrivateKeyText err %v", c, werr, gerr)
			continue
		}
		if werr != nil {
			for _, e := range []error{ErrKeyEncoding, ErrKeyLength, ErrKeyRange} {
				if errors.Is(werr, e) != errors.Is(gerr, e) {
					t.Errorf("%q: error kinds differ: %v vs %v", c, werr, gerr)
				}
			}
			continue
		}
		if !got.Equal(want) {
			t.Errorf("%q: different keys", c)
		}
	}
}

// TestDefaultSuitesNeverZUC128 checks that a peer configured without
// suites neither offers nor accepts zuc-128.
func TestDefaultSuitesNeverZUC128(t *testing.T) {
	p := newPair(t, pairOpts{iSuites: []ciphers.SuiteID{ciphers.ZUC128}})
	for _, id := range p.pr.Suites() {
		if id == ciphers.ZUC128 {
			t.Fatalf("default suites %v include zuc-128", p.pr.Suites())
		}
	}
	m1, err := p.i.CreateInitiation(p.pi, t0)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := p.r.ConsumeInitiation(m1[:], t0)
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Refused || rr.Keys != nil {
		t.Fatal("a responder with default suites accepted zuc-128")
	}
}

// TestRefuseSuite checks the back-off hook: a refused suite is neither
// offered nor accepted until the given time, then both again.
func TestRefuseSuite(t *testing.T) {
	both := []ciphers.SuiteID{ciphers.ZUC128, ciphers.SM4GCM}
	p := newPair(t, pairOpts{iSuites: both, rSuites: both})
	until := t0.Add(time.Hour)
	// Responder side: zuc-128 refused, the initiator's second choice wins.
	p.pr.RefuseSuite(ciphers.ZUC128, until)
	m1, _ := p.i.CreateInitiation(p.pi, t0)
	rr, err := p.r.ConsumeInitiation(m1[:], t0)
	if err != nil || rr.Keys == nil {
		t.Fatalf("ConsumeInitiation: %v, %+v", err, rr)
	}
	if rr.Keys.Suite != ciphers.SM4GCM {
		t.Fatalf("responder selected %v while zuc-128 is refused", rr.Keys.Suite)
	}
	// Initiator side: a refused suite is not offered.
	p.pi.RefuseSuite(ciphers.ZUC128, until)
	p.pi.RefuseSuite(ciphers.SM4GCM, until)
	inUse := p.iIdx.inUse()
	if _, err := p.i.CreateInitiation(p.pi, t0.Add(time.Second)); !errors.Is(err, ErrSuitesRefused) {
		t.Fatalf("CreateInitiation with every suite refused: %v", err)
	}
	if p.iIdx.inUse() != inUse {
		t.Fatal("refused initiation kept its index")
	}
	p.pi.RefuseSuite(ciphers.SM4GCM, time.Time{})
	m1, err = p.i.CreateInitiation(p.pi, t0.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if off := p.pi.init.offer; off[0] != byte(ciphers.SM4GCM) || off[1] != 0 {
		t.Fatalf("offer %x while zuc-128 is refused", off)
	}
	// After the refusal ends zuc-128 is accepted again.
	m1, _ = p.i.CreateInitiation(p.pi, until.Add(time.Second))
	rr, err = p.r.ConsumeInitiation(m1[:], until.Add(time.Second))
	if err != nil || rr.Keys == nil || rr.Keys.Suite != ciphers.ZUC128 {
		t.Fatalf("after the refusal: %v, %+v", err, rr)
	}
}

// TestAbandonedInitiationWiped checks that an initiation replaced by a
// newer one has its chaining values zeroed and its ephemeral dropped.
func TestAbandonedInitiationWiped(t *testing.T) {
	p := newPair(t, pairOpts{})
	if _, err := p.i.CreateInitiation(p.pi, t0); err != nil {
		t.Fatal(err)
	}
	old := p.pi.init
	if old.ck2 == ([32]byte{}) || old.eph == nil {
		t.Fatal("fresh initiation has no state")
	}
	if _, err := p.i.CreateInitiation(p.pi, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if old.ck2 != ([32]byte{}) || old.t3 != ([32]byte{}) || old.eph != nil {
		t.Fatal("abandoned initiation still holds its secrets")
	}
}
