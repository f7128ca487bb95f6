//go:build !linux

package iface

import (
	"errors"
	"net/netip"

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
