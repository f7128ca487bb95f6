package handshake

import (
	"slices"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
)

func TestRekeyAndReject(t *testing.T) {
	gcm, zuc := ciphers.SM4GCM.Params(), ciphers.ZUC128.Params()
	// Time: only the initiator rekeys at 120 s.
	if ShouldRekeyOnSend(gcm, true, RekeyAfterTime-time.Nanosecond, 0, 0) ||
		!ShouldRekeyOnSend(gcm, true, RekeyAfterTime, 0, 0) ||
		ShouldRekeyOnSend(gcm, false, RekeyAfterTime+time.Minute, 0, 0) {
		t.Fatal("time-based rekey")
	}
	// Messages and bytes: either side.
	if !ShouldRekeyOnSend(zuc, false, 0, 1<<36, 0) || ShouldRekeyOnSend(zuc, false, 0, 1<<36-1, 0) {
		t.Fatal("zuc-128 message rekey limit")
	}
	if !ShouldRekeyOnSend(gcm, false, 0, 0, 1<<38) || ShouldRekeyOnSend(gcm, false, 0, 0, 1<<38-1) {
		t.Fatal("sm4-gcm byte rekey limit")
	}
	if ShouldRekeyOnSend(ciphers.ZUC256.Params(), false, 0, 0, 1<<62) {
		t.Fatal("zuc-256 has no byte limit")
	}
	// Reject.
	if !SendExpired(gcm, RejectAfterTime, 0, 0, 0) || SendExpired(gcm, RejectAfterTime-1, 0, 0, 1400) {
		t.Fatal("time-based reject")
	}
	if !SendExpired(gcm, 0, 0, 1<<39-100, 101) || SendExpired(gcm, 0, 0, 1<<39-100, 100) {
		t.Fatal("byte reject")
	}
	if !SendExpired(zuc, 0, 1<<37-1<<13-1, 0, 0) || SendExpired(zuc, 0, 1<<37-1<<13-2, 0, 0) {
		t.Fatal("zuc-128 message reject")
	}
	if !ShouldRekeyOnReceive(true, 165*time.Second) || ShouldRekeyOnReceive(true, 164*time.Second) || ShouldRekeyOnReceive(false, 170*time.Second) {
		t.Fatal("receive-side rekey")
	}
	// Integrity budget: zuc-128 allows 2^10 failures.
	if AuthFailureExceeded(zuc, 1<<10-1) || !AuthFailureExceeded(zuc, 1<<10) || AuthFailureExceeded(gcm, 1<<10) {
		t.Fatal("auth-failure budget")
	}
	if !ReceiveExpired(zuc, time.Second, 1<<10) || !ReceiveExpired(gcm, RejectAfterTime, 0) || ReceiveExpired(gcm, time.Second, 5) {
		t.Fatal("ReceiveExpired")
	}
	if !ShouldZeroKeys(t0, t0.Add(540*time.Second)) || ShouldZeroKeys(t0, t0.Add(539*time.Second)) || ShouldZeroKeys(time.Time{}, t0) {
		t.Fatal("ShouldZeroKeys")
	}
	if RetryTimeout(0) != RekeyTimeout || RetryTimeout(0xffff) >= RekeyTimeout+MaxRekeyJitter || RetryTimeout(0x8000) <= RekeyTimeout {
		t.Fatal("RetryTimeout jitter range")
	}
	if GiveUpHandshake(t0, t0.Add(89*time.Second)) || !GiveUpHandshake(t0, t0.Add(RekeyAttemptTime)) || MaxHandshakeAttempts != 18 {
		t.Fatal("GiveUpHandshake")
	}
}

func TestKeypairRotation(t *testing.T) {
	var k Keypairs[int]
	if _, ok := k.Current(); ok {
		t.Fatal("zero value not empty")
	}
	// Initiator installs 1, then 2: 1 becomes previous.
	if d := k.Install(1, true, t0); len(d) != 0 {
		t.Fatal(d)
	}
	k.Install(2, true, t0.Add(RekeyAfterTime))
	if c, _ := k.Current(); c != 2 {
		t.Fatal("current")
	}
	if p, _ := k.Previous(); p != 1 {
		t.Fatal("previous")
	}
	// Third initiator keypair drops 1.
	if d := k.Install(3, true, t0.Add(2*RekeyAfterTime)); !slices.Equal(d, []int{1}) {
		t.Fatalf("dropped %v", d)
	}
	// Responder keypair 4 goes to next and drops previous (2).
	if d := k.Install(4, false, t0.Add(3*RekeyAfterTime)); !slices.Equal(d, []int{2}) {
		t.Fatalf("dropped %v", d)
	}
	if c, _ := k.Current(); c != 3 {
		t.Fatal("responder install changed current")
	}
	if _, ok := k.Confirm(99); ok {
		t.Fatal("confirmed a non-next keypair")
	}
	if d, ok := k.Confirm(4); !ok || len(d) != 0 {
		t.Fatal("confirm next")
	}
	if c, _ := k.Current(); c != 4 {
		t.Fatal("next not promoted")
	}
	if p, _ := k.Previous(); p != 3 {
		t.Fatal("current not demoted")
	}
	// Initiator install while a next exists: next → previous, current dropped.
	k.Install(5, false, t0.Add(3*RekeyAfterTime))
	d := k.Install(6, true, t0.Add(3*RekeyAfterTime))
	if c, _ := k.Current(); c != 6 {
		t.Fatal("current")
	}
	if p, _ := k.Previous(); p != 5 || !slices.Contains(d, 4) {
		t.Fatalf("previous %v dropped %v", p, d)
	}
	// Expiry on the fake clock.
	if d := k.Expire(t0.Add(3*RekeyAfterTime + RejectAfterTime - 1)); len(d) != 0 {
		t.Fatal("expired early")
	}
	if d := k.Expire(t0.Add(3*RekeyAfterTime + RejectAfterTime)); len(d) != 2 {
		t.Fatalf("expire dropped %v", d)
	}
	k.Install(7, false, t0)
	if d := k.Clear(); !slices.Equal(d, []int{7}) {
		t.Fatalf("clear %v", d)
	}
}
