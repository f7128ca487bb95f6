package ciphers

import "errors"

// newZUC256Key returns the zuc-256 Key for one direction (work in progress).
func newZUC256Key(k DirectionKeys) (Key, error) {
	return nil, errors.New("ciphers: zuc-256 not yet implemented")
}
