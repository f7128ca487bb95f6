//go:build !linux

package iface

import (
	"errors"
	"net/netip"
	"time"

	"github.com/vishvananda/netlink"
)

// Applied is the record of what Configure changed on one link. Outside
// Linux Configure always fails, so no Applied exists.
type Applied struct{}

// Configure is implemented only on Linux; elsewhere it returns
// errors.ErrUnsupported.
func Configure(h *netlink.Handle, name string, cfg Config) (*Applied, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return nil, errors.ErrUnsupported
}

// Teardown does nothing outside Linux.
func (a *Applied) Teardown() error { return nil }

// Routes returns nil outside Linux.
func (a *Applied) Routes() []netip.Prefix { return nil }

// Addresses returns nil outside Linux.
func (a *Applied) Addresses() []netip.Prefix { return nil }

// RemoveStaleRoutes is implemented only on Linux; elsewhere it returns
// errors.ErrUnsupported.
func RemoveStaleRoutes(h *netlink.Handle, name string, protocol int) (int, error) {
	return 0, errors.ErrUnsupported
}

// Restore does nothing outside Linux.
func (a *Applied) Restore() (int, error) { return 0, nil }

// Watch is implemented only on Linux; elsewhere it returns
// errors.ErrUnsupported.
func Watch(name string, done <-chan struct{}, settle, interval time.Duration, changed func()) error {
	return errors.ErrUnsupported
}

// FailClosed keeps unreachable routes for the peers' allowed_ips; outside
// Linux it installs nothing.
type FailClosed struct{}

// FailClosedMetric is the metric of the interface's fail-closed routes.
func FailClosedMetric(name string) int { return 0 }

// NewFailClosed returns an empty route set outside Linux.
func NewFailClosed(h *netlink.Handle, name string, table int) *FailClosed { return &FailClosed{} }

// Set is implemented only on Linux; elsewhere it returns
// errors.ErrUnsupported.
func (f *FailClosed) Set(prefixes []netip.Prefix) error { return errors.ErrUnsupported }

// Prefixes returns nil outside Linux.
func (f *FailClosed) Prefixes() []netip.Prefix { return nil }

// Present returns nil outside Linux.
func (f *FailClosed) Present() ([]netip.Prefix, error) { return nil, nil }

// Remove does nothing outside Linux.
func (f *FailClosed) Remove() error { return nil }

// SetDefaultTable does nothing outside Linux.
func (f *FailClosed) SetDefaultTable(table int) {}
