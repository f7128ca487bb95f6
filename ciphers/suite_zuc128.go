package ciphers

import "errors"

// newZUC128Key returns the zuc-128 Key for one direction (work in progress).
func newZUC128Key(k DirectionKeys) (Key, error) {
	return nil, errors.New("ciphers: zuc-128 not yet implemented")
}
