package tunnel

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/gmtun/gmtun/handshake"
)

// ErrUnknownPeer reports a public key that names no configured peer.
var ErrUnknownPeer = errors.New("tunnel: no peer with that public key")

// SetPeerEndpoint points the peer with public key key at ap, as a
// configured endpoint: what a re-resolved DNS name for the peer's endpoint
// gives (cmd/gmtun up_resolve.go). Sessions, timers and counters are kept;
// the next packet to the peer goes to ap. Roaming works as before: an
// authenticated packet from another address moves the endpoint again
// (roaming = true), so this only wins until the peer is heard from
// elsewhere. It takes the peer's lock once and never blocks the data path
// for longer than a Stats snapshot does.
func (d *Device) SetPeerEndpoint(key *handshake.PublicKey, ap netip.AddrPort) error {
	if key == nil || !ap.IsValid() {
		return errors.New("tunnel: SetPeerEndpoint needs a key and an address")
	}
	ep, err := d.bind.ParseEndpoint(ap.String())
	if err != nil {
		return fmt.Errorf("tunnel: endpoint %s: %w", ap, err)
	}
	d.peersMu.RLock()
	p := d.peers[key.Bytes()]
	d.peersMu.RUnlock()
	if p == nil {
		return ErrUnknownPeer
	}
	p.mu.Lock()
	p.endpoint = ep
	p.endpointConfigured = true
	p.mu.Unlock()
	return nil
}
