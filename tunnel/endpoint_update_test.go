package tunnel

import (
	"errors"
	"net/netip"
	"testing"
)

// TestSetPeerEndpoint: the endpoint moves to the given address (and Stats
// shows it), the session survives, an authenticated packet from the real
// address moves it back (roaming), and an unknown key is an error.
func TestSetPeerEndpoint(t *testing.T) {
	a, b := newPair(t, pairOptions{})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 1, 100)})
	real := a.dev.Stats().Peers[0].Endpoint
	moved := netip.MustParseAddrPort("[fd00::99]:51820")
	if err := a.dev.SetPeerEndpoint(b.key.Public(), moved); err != nil {
		t.Fatal(err)
	}
	if got := a.dev.Stats().Peers[0].Endpoint; got != moved {
		t.Fatalf("endpoint after SetPeerEndpoint = %v, want %v", got, moved)
	}
	// B sends: A authenticates it and roams back to B's real address.
	sendExpect(t, b, a, [][]byte{ipPacket(addrB4, addrA4, 2, 100)})
	if got := a.dev.Stats().Peers[0].Endpoint; got != real {
		t.Fatalf("endpoint after an authenticated packet = %v, want the roamed-to %v", got, real)
	}
	if err := a.dev.SetPeerEndpoint(genKey(t).Public(), moved); !errors.Is(err, ErrUnknownPeer) {
		t.Fatalf("unknown key: %v, want ErrUnknownPeer", err)
	}
	if err := a.dev.SetPeerEndpoint(b.key.Public(), netip.AddrPort{}); err == nil {
		t.Fatal("invalid address accepted")
	}
}
