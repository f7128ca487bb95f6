package handshake

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
)

type done struct {
	ikeys, rkeys *Keys
	rres         *ResponderResult
}

// run performs a full handshake between p.i and p.r.
func run(t *testing.T, p *pair, now time.Time) done {
	t.Helper()
	m1, err := p.i.CreateInitiation(p.pi, now)
	if err != nil {
		t.Fatal(err)
	}
	if v := p.r.Screen(m1[:], srcA, false, now); v != VerdictAccept {
		t.Fatalf("Screen(initiation) = %v", v)
	}
	rr, err := p.r.ConsumeInitiation(m1[:], now)
	if err != nil {
		t.Fatalf("ConsumeInitiation: %v", err)
	}
	if rr.Peer != p.pr || rr.Refused || rr.Keys == nil {
		t.Fatalf("responder result %+v", rr)
	}
	if v := p.i.Screen(rr.Response[:], srcA, false, now); v != VerdictAccept {
		t.Fatalf("Screen(response) = %v", v)
	}
	ir, err := p.i.ConsumeResponse(rr.Response[:], now)
	if err != nil {
		t.Fatalf("ConsumeResponse: %v", err)
	}
	if ir.Peer != p.pi {
		t.Fatal("initiator result names the wrong peer")
	}
	if v := p.r.Screen(ir.Confirm[:], srcA, true, now); v != VerdictAccept {
		t.Fatalf("Screen(confirm) = %v", v)
	}
	rk, err := p.r.ConsumeConfirm(ir.Confirm[:], now)
	if err != nil {
		t.Fatalf("ConsumeConfirm: %v", err)
	}
	if rk != rr.Keys {
		t.Fatal("ConsumeConfirm returned other keys than ConsumeInitiation")
	}
	return done{ikeys: ir.Keys, rkeys: rk, rres: rr}
}

func checkKeysMatch(t *testing.T, ik, rk *Keys, suite ciphers.SuiteID) {
	t.Helper()
	if ik.Suite != suite || rk.Suite != suite {
		t.Fatalf("suites %s/%s, want %s", ik.Suite, rk.Suite, suite)
	}
	if !ik.IsInitiator || rk.IsInitiator {
		t.Fatal("IsInitiator wrong")
	}
	if ik.LocalIndex != rk.RemoteIndex || ik.RemoteIndex != rk.LocalIndex {
		t.Fatalf("indices: I %#x/%#x R %#x/%#x", ik.LocalIndex, ik.RemoteIndex, rk.LocalIndex, rk.RemoteIndex)
	}
	pr := suite.Params()
	eq := func(a, b ciphers.DirectionKeys, dir uint8) {
		t.Helper()
		if len(a.Enc) != pr.EncKeySize || len(a.MAC) != pr.MACKeySize || len(a.Salt) != pr.SaltSize {
			t.Fatalf("key sizes %d/%d/%d for %s", len(a.Enc), len(a.MAC), len(a.Salt), suite)
		}
		if !bytes.Equal(a.Enc, b.Enc) || !bytes.Equal(a.MAC, b.MAC) || !bytes.Equal(a.Salt, b.Salt) || a.Direction != dir || b.Direction != dir {
			t.Fatalf("direction %d keys differ between the sides", dir)
		}
	}
	eq(ik.Send, rk.Recv, 0)
	eq(rk.Send, ik.Recv, 1)
	if bytes.Equal(ik.Send.Enc, ik.Recv.Enc) || (pr.MACKeySize > 0 && bytes.Equal(ik.Send.Enc[:16], ik.Send.MAC[:16])) {
		t.Fatal("keys are not separated by direction and purpose")
	}
}

var srcA = mustAddrPort("192.0.2.1:51820")

func TestHandshakeAllSuites(t *testing.T) {
	for _, s := range ciphers.Suites {
		t.Run(s.String(), func(t *testing.T) {
			p := newPair(t, pairOpts{iSuites: []ciphers.SuiteID{s}, rSuites: ciphers.Suites[:]})
			d := run(t, p, t0)
			checkKeysMatch(t, d.ikeys, d.rkeys, s)
			if len(p.i.pending) != 0 || len(p.r.pending) != 0 {
				t.Fatal("pending handshakes left after completion")
			}
			if p.iIdx.inUse() != 1 || p.rIdx.inUse() != 1 {
				t.Fatalf("indices in use %d/%d, want 1/1", p.iIdx.inUse(), p.rIdx.inUse())
			}
			// A second handshake yields fresh keys.
			d2 := run(t, p, t0.Add(time.Second))
			if bytes.Equal(d2.ikeys.Send.Enc, d.ikeys.Send.Enc) {
				t.Fatal("second handshake repeated the keys")
			}
			d.ikeys.Wipe()
			if !bytes.Equal(d.ikeys.Send.Enc, make([]byte, len(d.ikeys.Send.Enc))) {
				t.Fatal("Wipe left key bytes")
			}
		})
	}
}

func TestNegotiation(t *testing.T) {
	p := newPair(t, pairOpts{
		iSuites: []ciphers.SuiteID{ciphers.ZUC128, ciphers.SM4GCM},
		rSuites: []ciphers.SuiteID{ciphers.SM4GCM, ciphers.ZUC128},
	})
	d := run(t, p, t0)
	if d.ikeys.Suite != ciphers.ZUC128 {
		t.Fatalf("selected %s, want the initiator's first choice zuc-128", d.ikeys.Suite)
	}
	if !slices.Equal(d.rres.Offered, []ciphers.SuiteID{ciphers.ZUC128, ciphers.SM4GCM}) {
		t.Fatalf("offered %v", d.rres.Offered)
	}
}

func TestNoCommonSuite(t *testing.T) {
	p := newPair(t, pairOpts{
		iSuites: []ciphers.SuiteID{ciphers.ZUC128},
		rSuites: []ciphers.SuiteID{ciphers.SM4GCM, ciphers.ZUC256},
	})
	m1, _ := p.i.CreateInitiation(p.pi, t0)
	rr, err := p.r.ConsumeInitiation(m1[:], t0)
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Refused || rr.Keys != nil || p.rIdx.inUse() != 0 || len(p.r.pending) != 0 {
		t.Fatal("refusal allocated state on the responder")
	}
	_, err = p.i.ConsumeResponse(rr.Response[:], t0)
	var nc *NoCommonSuiteError
	if !errors.Is(err, ErrNoCommonSuite) || !errors.As(err, &nc) || Reason(err) != "no_common_suite" {
		t.Fatalf("err = %v", err)
	}
	if !slices.Equal(nc.Offered, []ciphers.SuiteID{ciphers.ZUC128}) ||
		!slices.Equal(nc.Allowed, []ciphers.SuiteID{ciphers.SM4GCM, ciphers.ZUC256}) {
		t.Fatalf("refusal details %v", nc)
	}
	want := "handshake: peer refused: no common suite (we offered zuc-128; peer allows sm4-gcm, zuc-256)"
	if err.Error() != want {
		t.Fatalf("message %q", err)
	}
	if p.pi.init != nil || p.iIdx.inUse() != 0 {
		t.Fatal("initiator kept the refused handshake")
	}
}

// expectReject runs f and checks it fails with want and leaves l unchanged.
func expectReject(t *testing.T, name string, l *Local, idx *testIndices, want error, f func() error) {
	t.Helper()
	before := snap(l, idx)
	err := f()
	if !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want %v", name, err, want)
	}
	if after := snap(l, idx); after != before {
		t.Errorf("%s: state changed:\n%+v\n%+v", name, before, after)
	}
}

func flip(b []byte, i int) []byte {
	c := slices.Clone(b)
	c[i] ^= 0x01
	return c
}

func TestRejectInitiation(t *testing.T) {
	p := newPair(t, pairOpts{})
	m1, _ := p.i.CreateInitiation(p.pi, t0)
	rPub := p.r.PublicKey()
	consume := func(m []byte) func() error {
		return func() error { _, err := p.r.ConsumeInitiation(m, t0); return err }
	}
	remacd := func(m []byte) []byte { remac(m, rPub); return m }
	offCurve := flip(m1[:], MessageInitiationOffsetEphemeral+63)
	zeroPt := slices.Clone(m1[:])
	clear(zeroPt[MessageInitiationOffsetEphemeral:MessageInitiationOffsetStatic])
	xGeP := slices.Clone(m1[:])
	for i := range 32 {
		xGeP[MessageInitiationOffsetEphemeral+i] = 0xff
	}
	cases := []struct {
		name string
		msg  []byte
		want error
	}{
		{"truncated", m1[:len(m1)-1], ErrMessageLength},
		{"oversized", append(m1[:], 0), ErrMessageLength},
		{"empty", nil, ErrMessageLength},
		{"version", remacd(flip(m1[:], 1)), ErrMessageHeader},
		{"reserved", remacd(flip(m1[:], 3)), ErrMessageHeader},
		{"type", flip(m1[:], 0), ErrMessageHeader},
		{"mac1", flip(m1[:], MessageInitiationOffsetMAC1), ErrMAC1},
		{"tampered sender", flip(m1[:], MessageInitiationOffsetSender), ErrMAC1},
		{"off-curve ephemeral", remacd(offCurve), ErrInvalidPoint},
		{"zero (infinity) ephemeral", remacd(zeroPt), ErrInvalidPoint},
		{"x >= p ephemeral", remacd(xGeP), ErrInvalidPoint},
		{"tampered ephemeral-bound sender", remacd(flip(m1[:], MessageInitiationOffsetSender)), ErrDecrypt},
		{"tampered static", remacd(flip(m1[:], MessageInitiationOffsetStatic+3)), ErrDecrypt},
		{"tampered offer", remacd(flip(m1[:], MessageInitiationOffsetPayload+tsSize)), ErrDecrypt},
		{"tampered payload tag", remacd(flip(m1[:], MessageInitiationOffsetMAC1-1)), ErrDecrypt},
	}
	for _, c := range cases {
		expectReject(t, c.name, p.r, p.rIdx, c.want, consume(c.msg))
	}
	// Reflected: our own initiation sent back to us.
	expectReject(t, "reflected initiation", p.i, p.iIdx, ErrMAC1, func() error {
		_, err := p.i.ConsumeInitiation(m1[:], t0)
		return err
	})
	refl := slices.Clone(m1[:])
	remac(refl, p.i.PublicKey())
	expectReject(t, "reflected initiation, re-MACed", p.i, p.iIdx, ErrDecrypt, func() error {
		_, err := p.i.ConsumeInitiation(refl, t0)
		return err
	})
	// Sanity: the untouched message is still accepted afterwards.
	if _, err := p.r.ConsumeInitiation(m1[:], t0); err != nil {
		t.Fatalf("original initiation rejected after the negative cases: %v", err)
	}
	expectReject(t, "replayed initiation", p.r, p.rIdx, ErrStaleTimestamp, consume(m1[:]))
}

func TestRejectWrongStaticKey(t *testing.T) {
	// The initiator believes the responder has another key: mac1 fails.
	p := newPair(t, pairOpts{})
	other := testKey(t, "someone-else")
	wrong, err := p.i.AddPeer(PeerConfig{PublicKey: other.Public()})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := p.i.CreateInitiation(wrong, t0)
	expectReject(t, "initiation to the wrong key", p.r, p.rIdx, ErrMAC1, func() error {
		_, err := p.r.ConsumeInitiation(m[:], t0)
		return err
	})
	// An initiator the responder does not know (correct responder key).
	stranger, _ := NewLocal(Config{PrivateKey: other, Rand: &detRand{seed: "s"}, Indices: newTestIndices(0x3000)})
	sp, _ := stranger.AddPeer(PeerConfig{PublicKey: p.r.PublicKey()})
	m2, _ := stranger.CreateInitiation(sp, t0)
	expectReject(t, "unknown initiator", p.r, p.rIdx, ErrUnknownPeer, func() error {
		_, err := p.r.ConsumeInitiation(m2[:], t0)
		return err
	})
	if Reason(ErrUnknownPeer) != "unknown_static" {
		t.Fatal("reason code")
	}
}

func TestRejectStaleAndFlood(t *testing.T) {
	p := newPair(t, pairOpts{})
	older, _ := p.i.CreateInitiation(p.pi, t0)
	newer, _ := p.i.CreateInitiation(p.pi, t0.Add(time.Second))
	if _, err := p.r.ConsumeInitiation(newer[:], t0); err != nil {
		t.Fatal(err)
	}
	expectReject(t, "stale timestamp", p.r, p.rIdx, ErrStaleTimestamp, func() error {
		_, err := p.r.ConsumeInitiation(older[:], t0.Add(time.Second))
		return err
	})
	// A fresh timestamp arriving within HandshakeInitiationRate.
	soon, _ := p.i.CreateInitiation(p.pi, t0.Add(2*time.Second))
	expectReject(t, "flood", p.r, p.rIdx, ErrInitiationFlood, func() error {
		_, err := p.r.ConsumeInitiation(soon[:], t0.Add(HandshakeInitiationRate/2))
		return err
	})
	if _, err := p.r.ConsumeInitiation(soon[:], t0.Add(HandshakeInitiationRate)); err != nil {
		t.Fatalf("initiation after the rate interval: %v", err)
	}
}

func TestRejectResponse(t *testing.T) {
	p := newPair(t, pairOpts{})
	m1, _ := p.i.CreateInitiation(p.pi, t0)
	rr, err := p.r.ConsumeInitiation(m1[:], t0)
	if err != nil {
		t.Fatal(err)
	}
	resp := rr.Response[:]
	iPub := p.i.PublicKey()
	remacd := func(m []byte) []byte { remac(m, iPub); return m }
	consume := func(m []byte) func() error {
		return func() error { _, err := p.i.ConsumeResponse(m, t0); return err }
	}
	refl := slices.Clone(resp)
	copy(refl[MessageResponseOffsetEphemeral:], m1[MessageInitiationOffsetEphemeral:MessageInitiationOffsetStatic])
	zeroPt := slices.Clone(resp)
	clear(zeroPt[MessageResponseOffsetEphemeral:MessageResponseOffsetConfirm])
	unknown := slices.Clone(resp)
	unknown[MessageResponseOffsetReceiver] ^= 0x40
	cases := []struct {
		name string
		msg  []byte
		want error
	}{
		{"truncated", resp[:len(resp)-1], ErrMessageLength},
		{"oversized", append(slices.Clone(resp), 0), ErrMessageLength},
		{"header", remacd(flip(resp, 2)), ErrMessageHeader},
		{"mac1", flip(resp, MessageResponseOffsetMAC1+5), ErrMAC1},
		{"unknown index", remacd(unknown), ErrUnknownIndex},
		{"reflected ephemeral", remacd(refl), ErrReflection},
		{"off-curve ephemeral", remacd(flip(resp, MessageResponseOffsetEphemeral+40)), ErrInvalidPoint},
		{"infinity ephemeral", remacd(zeroPt), ErrInvalidPoint},
		{"tampered S_B", remacd(flip(resp, MessageResponseOffsetConfirm+7)), ErrConfirmMismatch},
		{"tampered sender index", remacd(flip(resp, MessageResponseOffsetSender)), ErrSelectDecrypt},
		{"tampered selection", remacd(flip(resp, MessageResponseOffsetSelect)), ErrSelectDecrypt},
	}
	for _, c := range cases {
		expectReject(t, c.name, p.i, p.iIdx, c.want, consume(c.msg))
	}
	// Reflected: the responder's message fed back to the responder.
	expectReject(t, "reflected response", p.r, p.rIdx, ErrMAC1, func() error {
		_, err := p.r.ConsumeResponse(resp, t0)
		return err
	})
	// Expired pending initiation.
	expectReject(t, "expired", p.i, p.iIdx, ErrHandshakeExpired, func() error {
		_, err := p.i.ConsumeResponse(resp, t0.Add(RejectAfterTime+time.Second))
		return err
	})
	// The genuine response still completes the handshake.
	ir, err := p.i.ConsumeResponse(resp, t0)
	if err != nil {
		t.Fatal(err)
	}
	expectReject(t, "duplicate response", p.i, p.iIdx, ErrUnknownIndex, consume(resp))

	// Confirm.
	conf := ir.Confirm[:]
	rPub := p.r.PublicKey()
	rm := func(m []byte) []byte { remac(m, rPub); return m }
	cconsume := func(m []byte) func() error {
		return func() error { _, err := p.r.ConsumeConfirm(m, t0); return err }
	}
	ccases := []struct {
		name string
		msg  []byte
		want error
	}{
		{"truncated", conf[:len(conf)-1], ErrMessageLength},
		{"oversized", append(slices.Clone(conf), 0), ErrMessageLength},
		{"mac1", flip(conf, MessageConfirmOffsetMAC1), ErrMAC1},
		{"unknown index", rm(flip(conf, MessageConfirmOffsetReceiver+1)), ErrUnknownIndex},
		{"tampered S_A", rm(flip(conf, MessageConfirmOffsetConfirm+31)), ErrConfirmMismatch},
		{"tampered tag", rm(flip(conf, MessageConfirmOffsetTag)), ErrConfirmTag},
	}
	for _, c := range ccases {
		expectReject(t, c.name, p.r, p.rIdx, c.want, cconsume(c.msg))
	}
	if _, err := p.r.ConsumeConfirm(conf, t0); err != nil {
		t.Fatal(err)
	}
	expectReject(t, "replayed confirm", p.r, p.rIdx, ErrUnknownIndex, cconsume(conf))
}

func TestRejectWrongIDAndPSK(t *testing.T) {
	psk1, psk2 := [32]byte{1}, [32]byte{2}
	cases := []struct {
		name string
		o    pairOpts
		want error
	}{
		{"initiator has wrong responder ID", pairOpts{iIDofR: []byte("not-the-id")}, ErrConfirmMismatch},
		{"responder has wrong initiator ID", pairOpts{rIDofI: []byte("ALICE123@YAHOO.COM")}, ErrConfirmMismatch},
		{"PSK mismatch", pairOpts{iPSK: &psk1, rPSK: &psk2}, ErrSelectDecrypt},
		{"PSK on one side only", pairOpts{iPSK: &psk1}, ErrSelectDecrypt},
	}
	for _, c := range cases {
		p := newPair(t, c.o)
		m1, _ := p.i.CreateInitiation(p.pi, t0)
		rr, err := p.r.ConsumeInitiation(m1[:], t0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		expectReject(t, c.name, p.i, p.iIdx, c.want, func() error {
			_, err := p.i.ConsumeResponse(rr.Response[:], t0)
			return err
		})
	}
	// Matching PSKs work and change the keys.
	a := run(t, newPair(t, pairOpts{iPSK: &psk1, rPSK: &psk1}), t0)
	b := run(t, newPair(t, pairOpts{}), t0)
	if bytes.Equal(a.ikeys.Send.Enc, b.ikeys.Send.Enc) {
		t.Fatal("PSK not mixed into the keys")
	}
}

// TestSuiteNotOffered makes a responder select a suite the initiator did not
// offer (as a downgrading responder with valid keys would) and checks the
// initiator refuses it.
func TestSuiteNotOffered(t *testing.T) {
	p := newPair(t, pairOpts{iSuites: []ciphers.SuiteID{ciphers.SM4GCM}})
	m1, _ := p.i.CreateInitiation(p.pi, t0)
	// The responder honestly selects sm4-gcm; rewriting the initiator's
	// record of its offer makes that selection one it did not offer.
	rr, err := p.r.ConsumeInitiation(m1[:], t0)
	if err != nil {
		t.Fatal(err)
	}
	p.pi.mu.Lock()
	p.pi.init.offer = [offerSize]byte{byte(ciphers.ZUC128)}
	p.pi.mu.Unlock()
	_, err = p.i.ConsumeResponse(rr.Response[:], t0)
	if !errors.Is(err, ErrSuiteNotOffered) {
		t.Fatalf("err = %v", err)
	}
}

func TestAddPeerValidation(t *testing.T) {
	p := newPair(t, pairOpts{})
	k := testKey(t, "x")
	bad := []PeerConfig{
		{},
		{PublicKey: p.i.PublicKey()}, // ourselves (reflection)
		{PublicKey: p.r.PublicKey()}, // duplicate
		{PublicKey: k.Public(), Suites: []ciphers.SuiteID{9}},
		{PublicKey: k.Public(), Suites: []ciphers.SuiteID{1, 1}},
		{PublicKey: k.Public(), Suites: []ciphers.SuiteID{1, 2, 3, 1, 2}},
		{PublicKey: k.Public(), ID: make([]byte, 0x2000)},
	}
	for i, c := range bad {
		if _, err := p.i.AddPeer(c); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	if _, err := NewLocal(Config{PrivateKey: k}); err == nil {
		t.Error("NewLocal without Indices accepted")
	}
	peer, err := p.i.AddPeer(PeerConfig{PublicKey: k.Public(), Context: "ctx"})
	if err != nil || peer.Context() != "ctx" || !slices.Equal(peer.Suites(), ciphers.DefaultSuites[:]) {
		t.Fatalf("AddPeer: %v", err)
	}
	if _, err := p.i.CreateInitiation(peer, t0); err != nil {
		t.Fatal(err)
	}
	if p.iIdx.inUse() != 1 {
		t.Fatal("index not allocated")
	}
	p.i.RemovePeer(peer)
	if p.iIdx.inUse() != 0 || len(p.i.pending) != 0 {
		t.Fatal("RemovePeer left pending state")
	}
}

func TestConfirmedByData(t *testing.T) {
	p := newPair(t, pairOpts{})
	m1, _ := p.i.CreateInitiation(p.pi, t0)
	rr, _ := p.r.ConsumeInitiation(m1[:], t0)
	ir, err := p.i.ConsumeResponse(rr.Response[:], t0)
	if err != nil {
		t.Fatal(err)
	}
	if p.pr.ConfirmedByData(rr.Keys.LocalIndex + 1) {
		t.Fatal("confirmed a wrong index")
	}
	if !p.pr.ConfirmedByData(rr.Keys.LocalIndex) {
		t.Fatal("not confirmed")
	}
	if p.rIdx.inUse() != 1 {
		t.Fatal("confirmed index was freed")
	}
	if _, err := p.r.ConsumeConfirm(ir.Confirm[:], t0); !errors.Is(err, ErrUnknownIndex) {
		t.Fatalf("late confirm: %v", err)
	}
}

// TestSimultaneousInitiation runs two crossing handshakes and checks both
// complete and that the keypair slots leave each side able to talk.
func TestSimultaneousInitiation(t *testing.T) {
	p := newPair(t, pairOpts{})
	a2b, _ := p.i.CreateInitiation(p.pi, t0)
	b2a, _ := p.r.CreateInitiation(p.pr, t0)
	ra, err := p.i.ConsumeInitiation(b2a[:], t0) // A responds to B
	if err != nil {
		t.Fatal(err)
	}
	rb, err := p.r.ConsumeInitiation(a2b[:], t0) // B responds to A
	if err != nil {
		t.Fatal(err)
	}
	ia, err := p.i.ConsumeResponse(rb.Response[:], t0)
	if err != nil {
		t.Fatal(err)
	}
	ib, err := p.r.ConsumeResponse(ra.Response[:], t0)
	if err != nil {
		t.Fatal(err)
	}
	var kpA, kpB Keypairs[*Keys]
	kpA.Install(ra.Keys, false, t0)
	kpA.Install(ia.Keys, true, t0)
	kpB.Install(rb.Keys, false, t0)
	kpB.Install(ib.Keys, true, t0)
	if _, err := p.r.ConsumeConfirm(ia.Confirm[:], t0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.i.ConsumeConfirm(ib.Confirm[:], t0); err != nil {
		t.Fatal(err)
	}
	// Each side sends on current; the other must hold the matching key.
	holds := func(kp *Keypairs[*Keys], idx uint32, send []byte) bool {
		for _, get := range []func() (*Keys, bool){kp.Previous, kp.Current, kp.Next} {
			if k, ok := get(); ok && k.LocalIndex == idx && bytes.Equal(k.Recv.Enc, send) {
				return true
			}
		}
		return false
	}
	ca, _ := kpA.Current()
	cb, _ := kpB.Current()
	if !holds(&kpB, ca.RemoteIndex, ca.Send.Enc) || !holds(&kpA, cb.RemoteIndex, cb.Send.Enc) {
		t.Fatal("after simultaneous initiation a side cannot decrypt the other's current keypair")
	}
	// B receives A's data on its next slot: promotion converges.
	if n, ok := kpB.Next(); ok && n.RemoteIndex == ca.LocalIndex {
		if _, promoted := kpB.Confirm(n); !promoted {
			t.Fatal("no promotion")
		}
	}
	if len(p.i.pending) != 0 || len(p.r.pending) != 0 {
		t.Fatal("pending state left")
	}
}

// TestConcurrentResponders runs handshakes from several initiators against
// one responder in parallel (run with -race).
func TestConcurrentResponders(t *testing.T) {
	rIdx := newTestIndices(0x5000)
	r, _ := NewLocal(Config{PrivateKey: testKey(t, "R"), Rand: &detRand{seed: "r"}, Indices: rIdx})
	const n = 4
	errs := make(chan error, n)
	for g := range n {
		seed := string(rune('a' + g))
		ki := testKey(t, seed)
		li, _ := NewLocal(Config{PrivateKey: ki, Rand: &detRand{seed: seed}, Indices: newTestIndices(uint32(g) << 24)})
		pi, _ := li.AddPeer(PeerConfig{PublicKey: r.PublicKey()})
		if _, err := r.AddPeer(PeerConfig{PublicKey: ki.Public()}); err != nil {
			t.Fatal(err)
		}
		go func() {
			for k := range 3 {
				now := t0.Add(time.Duration(k) * time.Second)
				m1, _ := li.CreateInitiation(pi, now)
				rr, err := r.ConsumeInitiation(m1[:], now)
				if err != nil {
					errs <- err
					return
				}
				ir, err := li.ConsumeResponse(rr.Response[:], now)
				if err != nil {
					errs <- err
					return
				}
				if _, err := r.ConsumeConfirm(ir.Confirm[:], now); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if rIdx.inUse() != 3*n || len(r.pending) != 0 {
		t.Fatalf("indices %d pending %d", rIdx.inUse(), len(r.pending))
	}
}
