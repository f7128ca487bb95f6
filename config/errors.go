package config

import (
	"fmt"
	"strings"
)

// Error is a configuration problem tied to a place in a file. Its text has
// the compiler-style form
//
//	FILE:LINE: key "interface.listen_port": must be in 1..65535, got 70000
//
// so that editors can jump to it. LINE is omitted when the problem is a
// missing key or concerns the file as a whole; for keys under [[peer]] the
// peer is named after the key:
//
//	FILE:LINE: key "peer.endpoint" (peer "site-b"): …
//
// Unlike gmtun's plain errors the text does not start with "config: ":
// the file name takes that place, as in go/scanner.Error.
type Error struct {
	// File is the configuration file (or secret file) path as given.
	File string
	// Line is the 1-based line of the key, or 0 if there is none.
	Line int
	// Key is the dotted TOML path of the key ("interface.mtu",
	// "peer.allowed_ips"); array-of-table entries carry no index, Peer
	// names them. Empty for errors that concern no key (TOML syntax).
	Key string
	// Peer is the name of the [[peer]] the key belongs to, or "#N" (1-based
	// position) while the peer has no valid name; empty outside [[peer]].
	Peer string
	// Msg says what is wrong, in lower case without a trailing period.
	Msg string
	// Err is the underlying cause, if any (a *toml.ParseError, an
	// *os.PathError, a handshake key error, …). Msg already includes it.
	Err error
}

// Error implements the error interface.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		fmt.Fprintf(&b, "key %q", e.Key)
		if e.Peer != "" {
			if strings.HasPrefix(e.Peer, "#") {
				fmt.Fprintf(&b, " (peer %s)", e.Peer)
			} else {
				fmt.Fprintf(&b, " (peer %q)", e.Peer)
			}
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }
