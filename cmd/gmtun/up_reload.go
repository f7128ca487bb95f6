package main

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/control"
	"github.com/gmtun/gmtun/sdnotify"
	"github.com/gmtun/gmtun/tunnel/iface"
)

// Reloading the configuration (SIGHUP, gmtun reload) while the daemon runs.

// reload handles SIGHUP; it logs the outcome.
func (d *daemon) reload() {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if !d.ready.Load() || d.noReloads {
		return
	}
	d.reloadLocked()
}

// controlReload is `gmtun reload`: the same reload, answered with its
// outcome once it is applied.
func (d *daemon) controlReload() (control.ReloadResult, error) {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if !d.ready.Load() || d.noReloads {
		return control.ReloadResult{}, fmt.Errorf("%s is starting or stopping", d.name)
	}
	return d.reloadLocked(), nil
}

// reloadLocked re-reads and applies the configuration. d.reloadMu held.
func (d *daemon) reloadLocked() control.ReloadResult {
	if mono, err := sdnotify.MonotonicUsec(); err == nil {
		d.notify(sdnotify.Reloading, mono)
	} else {
		d.notify(sdnotify.Reloading)
	}
	res, err := d.applyReload()
	d.restoreLink() // a reload also repairs what was removed behind gmtun's back
	d.mu.Lock()
	d.lastReload = time.Now()
	d.lastReloadErr = ""
	if err != nil {
		d.lastReloadErr = err.Error()
	}
	if res.Error == "" || !res.ConfigError {
		d.pendingRestart = res.RestartNeeded
	}
	d.mu.Unlock()
	status := d.statusLine()
	if err != nil {
		res.Error = err.Error()
		d.log.Errorf("reload: %v", err)
		status += "; last reload failed"
	}
	d.notify(sdnotify.Ready, sdnotify.Status(status))
	return res
}

// applyReload re-reads the configuration and applies what it can. The
// result lists what changed; an error says why (part of) it was not
// applied, and the result's ConfigError says whether the file was invalid.
func (d *daemon) applyReload() (control.ReloadResult, error) {
	var res control.ReloadResult
	d.mu.Lock()
	defer d.mu.Unlock()
	path := d.cfg.Path
	next, err := config.Load(path)
	if err != nil {
		res.ConfigError = true
		var ce *config.Error
		if !errors.As(err, &ce) {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return res, fmt.Errorf("%w; keeping the running configuration", err)
	}
	d.log.Infof("reloading %s", path)
	for _, w := range next.Warnings {
		d.log.Warnf("%s", w)
	}
	res.Warnings = next.Warnings
	d.inheritDerived(next) // up_routing.go
	keys, identity := restartKeys(d.cfg, next)
	res.RestartNeeded = keys
	if identity {
		return res, fmt.Errorf("%s changed; restart gmtun to apply it; nothing was changed", strings.Join(keys, ", "))
	}
	if len(keys) > 0 {
		d.log.Warnf("reload: %s changed; restart gmtun to apply it (the running value is kept)", strings.Join(keys, ", "))
	}
	d.syncResolver(next) // up_resolve.go: the resolved endpoint names
	if err := d.dev.SetPeers(peerConfigs(next.Peers)); err != nil {
		return res, fmt.Errorf("applying the peers: %w; keeping the running peers", err)
	}
	added, removed, changed := peerChanges(d.cfg.Peers, next.Peers)
	res.Added, res.Removed, res.Updated = added, removed, changed
	sl := d.log.Slog()
	for _, n := range removed {
		sl.Info("peer removed", "peer", n)
	}
	for _, n := range added {
		sl.Info("peer added", "peer", n)
	}
	for _, n := range changed {
		sl.Info("peer updated", "peer", n)
	}
	if next.Interface.LogLevel != d.cfg.Interface.LogLevel {
		d.log.SetLevel(next.Interface.LogLevel)
		d.log.Infof("log level is now %s", strings.ToLower(next.Interface.LogLevel.String()))
	}

	// The running interface keeps its restart-only settings (table
	// included: routes stay in the table they were created in).
	running := *d.cfg
	running.Peers = next.Peers
	running.Warnings = next.Warnings
	running.Interface.LogLevel = next.Interface.LogLevel
	running.Interface.Suites = next.Interface.Suites
	d.cfg = &running

	var errs []error
	if d.failClosed != nil { // before the routes: a new prefix is never open
		if err := d.failClosed.Set(wantRoutes(d.cfg)); err != nil {
			errs = append(errs, err)
		}
	}
	add, del := diffRoutes(d.routes, wantRoutes(d.cfg))
	for _, p := range del {
		if err := d.routes[p].Teardown(); err != nil {
			errs = append(errs, err)
		}
		delete(d.routes, p)
	}
	if err := d.addRoutes(add, routeTable(d.cfg.Interface.Table)); err != nil {
		errs = append(errs, err)
	}
	if len(add)+len(del) > 0 {
		d.log.Debugf("routes: %d added, %d removed", len(add), len(del))
	}
	d.log.Infof("reloaded: %d peer(s): %d added, %d removed, %d updated",
		len(next.Peers), len(added), len(removed), len(changed))
	return res, errors.Join(errs...)
}

// restartKeys lists the interface settings that differ between running
// and next and that a reload cannot apply. identity reports whether one of
// them changes who this side is (then nothing is applied).
func restartKeys(running, next *config.Config) (keys []string, identity bool) {
	a, b := &running.Interface, &next.Interface
	check := func(key string, changed, ident bool) {
		if changed {
			keys = append(keys, "interface."+key)
			identity = identity || ident
		}
	}
	check("name", a.Name != b.Name, true)
	check("private_key_file", !a.PrivateKey.Equal(b.PrivateKey), true)
	check("id", a.ID != b.ID, true)
	check("listen_port", a.ListenPort != b.ListenPort, false)
	check("mtu", a.MTU != b.MTU, false)
	check("address", !slices.Equal(a.Addresses, b.Addresses), false)
	check("table", a.Table != b.Table, false)
	check("fwmark", a.FwMark != b.FwMark, false)
	check("fail_closed", a.FailClosed != b.FailClosed, false)
	check("run_to_completion", a.RunToCompletion != b.RunToCompletion || a.RunToCompletionAuto != b.RunToCompletionAuto, false)
	check("metrics_listen", a.MetricsListen != b.MetricsListen, false)
	return keys, identity
}

// peerChanges compares peer lists by public key and returns the names of
// added, removed and changed peers.
func peerChanges(old, next []config.Peer) (added, removed, changed []string) {
	byKey := make(map[string]*config.Peer, len(old))
	for i := range old {
		byKey[old[i].PublicKey.String()] = &old[i]
	}
	for i := range next {
		n := &next[i]
		o, ok := byKey[n.PublicKey.String()]
		if !ok {
			added = append(added, n.Name)
			continue
		}
		delete(byKey, n.PublicKey.String())
		if !samePeer(o, n) {
			changed = append(changed, n.Name)
		}
	}
	for i := range old {
		if _, ok := byKey[old[i].PublicKey.String()]; ok {
			removed = append(removed, old[i].Name)
		}
	}
	return added, removed, changed
}

func samePeer(a, b *config.Peer) bool {
	pskEqual := (a.PresharedKey == nil) == (b.PresharedKey == nil) &&
		(a.PresharedKey == nil || *a.PresharedKey == *b.PresharedKey)
	return a.Name == b.Name && a.ID == b.ID && pskEqual && a.Endpoint == b.Endpoint &&
		slices.Equal(a.AllowedIPs, b.AllowedIPs) && a.PersistentKeepalive == b.PersistentKeepalive &&
		a.Roaming == b.Roaming && slices.Equal(a.Suites, b.Suites)
}

// diffRoutes returns the prefixes of want missing from have, and those of
// have not in want, each sorted.
func diffRoutes(have map[netip.Prefix]*iface.Applied, want []netip.Prefix) (add, del []netip.Prefix) {
	wantSet := make(map[netip.Prefix]bool, len(want))
	for _, p := range want {
		wantSet[p] = true
		if _, ok := have[p]; !ok {
			add = append(add, p)
		}
	}
	for p := range have {
		if !wantSet[p] {
			del = append(del, p)
		}
	}
	slices.SortFunc(add, comparePrefix)
	slices.SortFunc(del, comparePrefix)
	return add, del
}

func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}
