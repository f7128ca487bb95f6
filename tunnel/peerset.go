// The device's peer set: SetPeers validates a configuration, keeps,
// replaces or removes peers, and publishes the set with its routing table.

package tunnel

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/allowedips"
)

// SetPeers replaces the peer set with syncconf semantics: peers are matched
// by public key; a peer whose ID, PSK and suites are unchanged keeps its
// sessions, pending handshakes and counters and only takes the new name,
// endpoint (if one is given and differs), AllowedIPs, keepalive and roaming
// setting; other peers are removed or (re)created. The whole set is
// validated first (canonical, non-overlapping AllowedIPs, distinct keys), so
// on error nothing changed.
func (d *Device) SetPeers(cfgs []PeerConfig) error {
	d.configMu.Lock()
	defer d.configMu.Unlock()
	if d.stateClosed.Load() {
		return errors.New("tunnel: device is closed")
	}
	var all []netip.Prefix
	seen := make(map[[handshake.PublicKeySize]byte]bool)
	for i := range cfgs {
		c := &cfgs[i]
		if c.PublicKey == nil {
			return fmt.Errorf("tunnel: peer %q: public key is required", c.Name)
		}
		k := c.PublicKey.Bytes()
		if seen[k] {
			return fmt.Errorf("tunnel: peer %q: public key configured twice", c.Name)
		}
		seen[k] = true
		for _, pfx := range c.AllowedIPs {
			if err := allowedips.CheckPrefix(pfx); err != nil {
				return fmt.Errorf("tunnel: peer %q: %w", c.Name, err)
			}
		}
		if c.PublicKey.Equal(d.local.PublicKey()) {
			return fmt.Errorf("tunnel: peer %q: public key is the device's own", c.Name)
		}
		if len(c.ID) >= 0x2000 {
			return fmt.Errorf("tunnel: peer %q: SM2 ID too long", c.Name)
		}
		if err := checkSuites(effectiveSuites(c, d.suites)); err != nil {
			return fmt.Errorf("tunnel: peer %q: %w", c.Name, err)
		}
		if c.PersistentKeepalive < 0 {
			return fmt.Errorf("tunnel: peer %q: negative persistent keepalive", c.Name)
		}
		all = append(all, c.AllowedIPs...)
	}
	if a, b, ok := allowedips.FirstOverlap(all); ok {
		return fmt.Errorf("tunnel: allowed IPs %s and %s overlap", a, b)
	}

	d.peersMu.RLock()
	old := maps(d.peers)
	d.peersMu.RUnlock()

	// Peers that keep their session, and those that go (removed, or
	// replaced because ID, PSK or suites changed). The old ones are
	// stopped before their replacements register with the handshake.
	keep := make(map[*Peer]bool)
	for i := range cfgs {
		if p := old[cfgs[i].PublicKey.Bytes()]; p != nil && p.sameSession(&cfgs[i], d.suites) {
			keep[p] = true
		}
	}
	var removed []*Peer
	for _, p := range old {
		if !keep[p] {
			removed = append(removed, p)
		}
	}
	if len(removed) > 0 {
		d.peersMu.Lock()
		for _, p := range removed {
			delete(d.peers, p.hs.PublicKey().Bytes())
		}
		d.peerList = slices.DeleteFunc(slices.Clone(d.peerList), func(p *Peer) bool { return !keep[p] })
		d.peersMu.Unlock()
		for _, p := range removed {
			p.stop()
			d.log.Verbosef("%v - removed", p)
		}
	}

	newList := make([]*Peer, 0, len(cfgs))
	var created []*Peer
	for i := range cfgs {
		c := &cfgs[i]
		if p := old[c.PublicKey.Bytes()]; p != nil && keep[p] {
			newList = append(newList, p)
			continue
		}
		p, err := d.newPeer(c, old[c.PublicKey.Bytes()])
		if err != nil {
			// Validation makes this unreachable in practice; keep the
			// device consistent: the peers handled so far stay.
			for j, q := range newList {
				q.reconfigure(&cfgs[j])
			}
			d.publishPeers(newList)
			return fmt.Errorf("tunnel: peer %q: %w", c.Name, err)
		}
		created = append(created, p)
		newList = append(newList, p)
	}
	for i, p := range newList {
		p.reconfigure(&cfgs[i])
	}
	d.publishPeers(newList)

	for _, p := range created {
		d.log.Verbosef("%v - added", p)
		if p.keepaliveInterval() > 0 && d.stateUp {
			p.sendKeepalive()
		}
	}
	return nil
}

// publishPeers installs list as the peer set and rebuilds the routing
// table from the peers' AllowedIPs.
func (d *Device) publishPeers(list []*Peer) {
	routes := new(allowedips.Table[*Peer])
	for _, p := range list {
		p.mu.Lock()
		for _, pfx := range p.allowedIPs {
			if err := routes.Insert(pfx, p); err != nil {
				d.log.Errorf("%v - route %v: %v", p, pfx, err) // unreachable: checked
			}
		}
		p.mu.Unlock()
	}
	d.peersMu.Lock()
	clear(d.peers)
	for _, p := range list {
		d.peers[p.hs.PublicKey().Bytes()] = p
	}
	d.peerList = list
	d.peersMu.Unlock()
	routes.Freeze() // published tables never change: lock-free lookups
	d.routes.Store(routes)
}

// emptyRoutes returns a frozen table without routes.
func emptyRoutes() *allowedips.Table[*Peer] {
	t := new(allowedips.Table[*Peer])
	t.Freeze()
	return t
}

func maps(m map[[handshake.PublicKeySize]byte]*Peer) map[[handshake.PublicKeySize]byte]*Peer {
	out := make(map[[handshake.PublicKeySize]byte]*Peer, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func checkSuites(s []ciphers.SuiteID) error {
	if len(s) > handshake.MaxOffer {
		return fmt.Errorf("at most %d suites", handshake.MaxOffer)
	}
	for i, id := range s {
		if !slices.Contains(ciphers.Suites[:], id) || slices.Contains(s[:i], id) {
			return fmt.Errorf("unknown or repeated suite %v", id)
		}
	}
	return nil
}

func effectiveSuites(c *PeerConfig, def []ciphers.SuiteID) []ciphers.SuiteID {
	if len(c.Suites) > 0 {
		return c.Suites
	}
	return def
}

// sameSession reports whether c keeps p's session: same identity, PSK and
// suites.
func (p *Peer) sameSession(c *PeerConfig, def []ciphers.SuiteID) bool {
	if p.id != c.ID || (p.psk == nil) != (c.PSK == nil) || (p.psk != nil && *p.psk != *c.PSK) {
		return false
	}
	return slices.Equal(p.suites, effectiveSuites(c, def))
}
