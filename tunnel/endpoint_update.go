// The peer's endpoint: where its datagrams go, as configured
// (SetPeerEndpoint, reconfigure) and as followed from authenticated data
// and handshake messages (roaming).

package tunnel

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
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

// getEndpoint returns the current endpoint, or nil.
func (p *Peer) getEndpoint() netio.Endpoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.endpoint
}

// setEndpointFromData follows a roaming peer to the source of an
// authenticated data packet.
func (p *Peer) setEndpointFromData(ep netio.Endpoint) {
	if ep == nil {
		return
	}
	p.mu.Lock()
	if p.roaming {
		p.endpoint = ep
	}
	p.mu.Unlock()
}

// setEndpointFromHandshake updates the endpoint from an authenticated
// handshake message: always when roaming, otherwise only while no endpoint
// was configured.
func (p *Peer) setEndpointFromHandshake(ep netio.Endpoint) {
	if ep == nil {
		return
	}
	p.mu.Lock()
	if p.roaming || !p.endpointConfigured {
		p.endpoint = ep
	}
	p.mu.Unlock()
}
