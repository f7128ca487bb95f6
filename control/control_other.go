//go:build !linux

package control

import (
	"io/fs"
	"net"
)

// maxSocketPath is a conservative sun_path size (104 on the BSDs).
const maxSocketPath = 104

// withPrivateUmask runs f; outside Linux the directory mode alone keeps
// the socket private.
func withPrivateUmask(f func() error) error { return f() }

// fileOwner is not reported outside Linux.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

// checkPeer accepts every connection outside Linux; the private directory
// is the access control.
func checkPeer(*net.UnixConn) error { return nil }
