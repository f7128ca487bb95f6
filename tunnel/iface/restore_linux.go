package iface

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Restore puts back what Configure installed and the kernel or an operator
// removed since: addresses and routes. Setting a link down makes the kernel
// delete every route through it (and, for IPv6, its addresses); when the
// link is up again, Restore re-adds them. It does nothing while the link is
// down (routes cannot be added then) and reports how many items it put
// back. It never brings the link up itself: down is the operator's choice.
func (a *Applied) Restore() (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return 0, nil
	}
	link, err := a.h.LinkByIndex(a.index)
	if err != nil {
		return 0, fmt.Errorf("iface: restore %s: %w", a.name, err)
	}
	if link.Attrs().Flags&net.FlagUp == 0 {
		return 0, nil
	}
	n := 0
	var errs []error
	if len(a.addrs) > 0 {
		have, err := a.h.AddrList(link, netlink.FAMILY_ALL)
		if err != nil {
			return 0, fmt.Errorf("iface: list addresses of %s: %w", a.name, err)
		}
		for i := range a.addrs {
			if containsAddr(have, &a.addrs[i]) {
				continue
			}
			addr := a.addrs[i] // AddrReplace fills in fields of its argument
			if err := a.h.AddrReplace(link, &addr); err != nil {
				errs = append(errs, fmt.Errorf("iface: restore address %v on %s: %w", prefixOf(addr.IPNet), a.name, err))
				continue
			}
			n++
		}
	}
	for i := range a.routes {
		r := a.routes[i]
		err := a.h.RouteAdd(&r)
		switch {
		case err == nil:
			n++
		case errors.Is(err, unix.EEXIST):
			// still there
		default:
			errs = append(errs, fmt.Errorf("iface: restore route %v dev %s: %w", prefixOf(r.Dst), a.name, err))
		}
	}
	return n, errors.Join(errs...)
}

func containsAddr(have []netlink.Addr, want *netlink.Addr) bool {
	for i := range have {
		if ipNetEqual(have[i].IPNet, want.IPNet) {
			return true
		}
	}
	return false
}

// Watch calls changed (from one goroutine, never concurrently) soon after
// the link called name changes state or loses an address or route, and at
// least every interval, until done is closed. Bursts of events (a link flap
// deletes every route at once) are coalesced into one call after settle.
// The netlink subscriptions are opened in the calling thread's network
// namespace; if one fails or overflows, Watch reopens it, and calls changed
// in between so nothing is missed.
func Watch(name string, done <-chan struct{}, settle, interval time.Duration, changed func()) error {
	link, err := netlink.LinkByName(name)
	if err != nil {
		return fmt.Errorf("iface: watch %q: %w", name, err)
	}
	w := &watcher{index: link.Attrs().Index, done: done, kick: make(chan struct{}, 1)}
	if err := w.subscribe(); err != nil {
		return err
	}
	go w.run(settle, interval, changed)
	return nil
}

type watcher struct {
	index int
	done  <-chan struct{}
	kick  chan struct{} // capacity 1: a pending change
}

func (w *watcher) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// subscribe opens the link, address and route subscriptions and starts the
// goroutines that turn their events into pokes.
func (w *watcher) subscribe() error {
	stop := make(chan struct{}) // closing it ends these subscriptions
	failed := func(error) { w.poke() }
	links := make(chan netlink.LinkUpdate, 64)
	addrs := make(chan netlink.AddrUpdate, 64)
	routes := make(chan netlink.RouteUpdate, 256)
	if err := netlink.LinkSubscribeWithOptions(links, stop, netlink.LinkSubscribeOptions{ErrorCallback: failed}); err != nil {
		close(stop)
		return fmt.Errorf("iface: subscribe to link changes: %w", err)
	}
	if err := netlink.AddrSubscribeWithOptions(addrs, stop, netlink.AddrSubscribeOptions{ErrorCallback: failed}); err != nil {
		close(stop)
		return fmt.Errorf("iface: subscribe to address changes: %w", err)
	}
	if err := netlink.RouteSubscribeWithOptions(routes, stop, netlink.RouteSubscribeOptions{ErrorCallback: failed}); err != nil {
		close(stop)
		return fmt.Errorf("iface: subscribe to route changes: %w", err)
	}
	lost := make(chan struct{}, 3)
	go func() {
		for u := range links {
			if int(u.Attrs().Index) == w.index {
				w.poke()
			}
		}
		lost <- struct{}{}
	}()
	go func() {
		for u := range addrs {
			if u.LinkIndex == w.index && !u.NewAddr {
				w.poke()
			}
		}
		lost <- struct{}{}
	}()
	go func() {
		for u := range routes {
			if u.Type == unix.RTM_DELROUTE && (u.LinkIndex == w.index || u.Route.Type == unix.RTN_UNREACHABLE) {
				w.poke()
			}
		}
		lost <- struct{}{}
	}()
	go func() {
		select {
		case <-lost: // a subscription ended (error or overflow): reopen all
			close(stop)
			w.poke()
			w.resubscribe()
		case <-w.done:
			close(stop)
		}
	}()
	return nil
}

// resubscribe retries subscribe until it works or done is closed.
func (w *watcher) resubscribe() {
	for {
		select {
		case <-w.done:
			return
		case <-time.After(100 * time.Millisecond):
		}
		if w.subscribe() == nil {
			return
		}
	}
}

func (w *watcher) run(settle, interval time.Duration, changed func()) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-tick.C:
		case <-w.kick:
			select {
			case <-w.done:
				return
			case <-time.After(settle):
			}
			// Drain what arrived while settling: it is covered.
			select {
			case <-w.kick:
			default:
			}
		}
		changed()
	}
}
