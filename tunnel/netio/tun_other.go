//go:build !linux

package netio

import "errors"

// OpenTUN is implemented only on Linux; elsewhere it returns
// errors.ErrUnsupported.
func OpenTUN(cfg TUNConfig) (*TUNDevice, error) {
	return nil, errors.ErrUnsupported
}
