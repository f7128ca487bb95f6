package main

import (
	"net/netip"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/tunnel/iface"
)

// Full tunnel (docs/OPERATIONS.md "Full tunnel"): with table = "auto" and
// a peer whose allowed_ips hold 0.0.0.0/0 or ::/0, the default routes go
// into a table of their own (iface.FullTunnelTable) that policy rules
// consult for unmarked packets after the main table without its default
// route, and the UDP sockets carry the mark so that the underlay is exempt
// — as wg-quick does. The fail-closed unreachable routes of the default
// prefixes live in the same table.

// fullTunnel reports, per family, whether cfg asks for the policy-routed
// full tunnel.
func fullTunnel(cfg *config.Config) (v4, v6 bool) {
	if cfg.Interface.Table.Off || cfg.Interface.Table.ID != 0 {
		return false, false // an explicit table: the operator routes
	}
	for i := range cfg.Peers {
		for _, p := range cfg.Peers[i].AllowedIPs {
			if p.Bits() == 0 {
				v4, v6 = v4 || p.Addr().Is4(), v6 || p.Addr().Is6()
			}
		}
	}
	return v4, v6
}

// applyFullTunnelMark sets the effective fwmark of a full-tunnel
// configuration: the table number when fwmark is not configured.
func applyFullTunnelMark(cfg *config.Config) {
	if v4, v6 := fullTunnel(cfg); (v4 || v6) && cfg.Interface.FwMark == 0 {
		cfg.Interface.FwMark = uint32(iface.FullTunnelTable(cfg.Interface.Name))
	}
}

// fullTunnelSetup runs at start before the fail-closed routes are set: the
// UDP sockets get the mark, and the default prefixes' unreachable routes
// go into the full-tunnel table.
func (d *daemon) fullTunnelSetup(fc *iface.FailClosed) {
	applyFullTunnelMark(d.cfg)
	if v4, v6 := fullTunnel(d.cfg); v4 || v6 {
		fc.SetDefaultTable(iface.FullTunnelTable(d.name))
	}
}

// fullTunnelRules installs the policy rules of a full tunnel (after
// removing those a run that did not stop cleanly left); without a full
// tunnel it only removes leftovers.
func (d *daemon) fullTunnelRules() error {
	table := iface.FullTunnelTable(d.name)
	if n, err := iface.RemoveFullTunnelRules(nil, table); err != nil {
		d.log.Warnf("removing full-tunnel rules left by an earlier run: %v", err)
	} else if n > 0 {
		d.log.Debugf("removed %d full-tunnel rule(s) left by an earlier run", n)
	}
	v4, v6 := fullTunnel(d.cfg)
	if !v4 && !v6 {
		return nil
	}
	mark := d.cfg.Interface.FwMark
	if _, err := iface.AddFullTunnelRules(nil, table, mark, v4, v6); err != nil {
		return errorf("up: cannot add the full-tunnel policy rules (table %d, fwmark %d): %w", table, mark, err)
	}
	d.log.Infof("full tunnel: default route(s) in table %d, used by packets without fwmark %d after the main table's more specific routes", table, mark)
	return nil
}

// fullTunnelCleanup removes the policy rules on shutdown, except when the
// fail-closed routes stay (they are useless without the rules).
func (d *daemon) fullTunnelCleanup() {
	if d.failClosed != nil && d.keepFailClosed {
		return
	}
	if _, err := iface.RemoveFullTunnelRules(nil, iface.FullTunnelTable(d.name)); err != nil {
		d.log.Warnf("%v", err)
	}
}

// routeTableFor is the table of the route to p: the full-tunnel table for
// a default prefix of a full tunnel, else table.
func (d *daemon) routeTableFor(p netip.Prefix, table int) int {
	if p.Bits() != 0 {
		return table
	}
	if v4, v6 := fullTunnel(d.cfg); (p.Addr().Is4() && v4) || (p.Addr().Is6() && v6) {
		return iface.FullTunnelTable(d.name)
	}
	return table
}

// inheritDerived gives a reloaded configuration the values start derived
// (the auto MTU, the full tunnel's fwmark), so that a reload does not
// report them as changed; and warns when the full tunnel is switched on or
// off, which needs a restart. d.mu held.
func (d *daemon) inheritDerived(next *config.Config) {
	if d.cfg.Interface.MTUAuto && next.Interface.MTUAuto {
		next.Interface.MTU = d.cfg.Interface.MTU
	}
	applyFullTunnelMark(next)
	r4, r6 := fullTunnel(d.cfg)
	n4, n6 := fullTunnel(next)
	if r4 != n4 || r6 != n6 {
		d.log.Warnf("reload: a full-tunnel peer (allowed_ips 0.0.0.0/0 or ::/0) was added or removed; restart gmtun to apply its policy routing")
	}
}
