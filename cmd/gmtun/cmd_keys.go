package main

import (
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"io"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/handshake"
)

// maxKeyInput bounds what pubkey reads from stdin.
const maxKeyInput = 4096

// keyTerminalWarning is printed when a secret is about to go to a terminal.
const keyTerminalWarning = "warning: printing a secret key to a terminal; redirect it to a file created under umask 077"

func init() {
	register(&command{
		name:    "genkey",
		summary: "print a new SM2 private key",
		order:   10,
		help: `Prints a new static SM2 private key: one line, the 32-byte scalar in base64.
The key is secret. Write it straight into a file that only root can read:

  umask 077; gmtun genkey > /etc/gmtun/gm0.key

or create the key and its public half at once:

  umask 077; gmtun genkey | tee /etc/gmtun/gm0.key | gmtun pubkey > /etc/gmtun/gm0.pub

gmtun refuses key files with any group or other permission (mode 0600 or
stricter) or owned by another user. A warning is printed when standard
output is a terminal.
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			return func(args []string) int {
				if len(args) != 0 {
					return usageErrorf(e, "genkey: takes no arguments, got %q", args[0])
				}
				k, err := handshake.GeneratePrivateKey(e.rand)
				if err != nil {
					return failf(e, exitFailure, "genkey: cannot generate a key: %v", err)
				}
				if e.isTerminal(e.stdout) {
					fmt.Fprintln(e.stderr, "gmtun: "+keyTerminalWarning)
				}
				return printLine(e, "genkey", k.Encode())
			}
		},
	})
	register(&command{
		name:    "pubkey",
		summary: "read a private key on stdin, print its public key",
		order:   11,
		help: `Reads one private key line (as written by 'gmtun genkey') from standard
input and prints the matching public key: one line, the 64-byte point x‖y in
base64. Give the public key to the operators of the peers; it goes into their
[[peer]] public_key.

  gmtun pubkey < /etc/gmtun/gm0.key
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			return func(args []string) int {
				if len(args) != 0 {
					return usageErrorf(e, "pubkey: takes no arguments (the key is read from stdin), got %q", args[0])
				}
				data, err := io.ReadAll(io.LimitReader(e.stdin, maxKeyInput+1))
				if err != nil {
					return failf(e, exitFailure, "pubkey: cannot read stdin: %v", err)
				}
				defer clear(data)
				if len(data) > maxKeyInput {
					return failf(e, exitFailure, "pubkey: stdin holds more than %d bytes; expected one private key line", maxKeyInput)
				}
				line, n := singleLine(data)
				if n != 1 {
					return failf(e, exitFailure, "pubkey: stdin must hold exactly one private key line, got %d", n)
				}
				k, err := handshake.ParsePrivateKey(line)
				if err != nil {
					return failf(e, exitFailure, "pubkey: stdin does not hold a valid private key: %v", err)
				}
				return printLine(e, "pubkey", k.Public().String())
			}
		},
	})
	register(&command{
		name:    "genpsk",
		summary: "print a new random preshared key",
		order:   12,
		help: `Prints a new random 32-byte preshared key in base64. Both sides of a peer
pair put the same key in a file named by preshared_key_file:

  umask 077; gmtun genpsk > /etc/gmtun/site-b.psk

Copy it to the other side over a secure channel. A warning is printed when
standard output is a terminal.
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			return func(args []string) int {
				if len(args) != 0 {
					return usageErrorf(e, "genpsk: takes no arguments, got %q", args[0])
				}
				var k [config.PresharedKeySize]byte
				defer clear(k[:])
				if _, err := io.ReadFull(e.rand, k[:]); err != nil {
					return failf(e, exitFailure, "genpsk: cannot read randomness: %v", err)
				}
				if e.isTerminal(e.stdout) {
					fmt.Fprintln(e.stderr, "gmtun: "+keyTerminalWarning)
				}
				return printLine(e, "genpsk", base64.StdEncoding.EncodeToString(k[:]))
			}
		},
	})
}

// singleLine returns the only non-blank line of data, trimmed, and the
// number of non-blank lines.
func singleLine(data []byte) (string, int) {
	var line []byte
	n := 0
	for l := range bytes.Lines(data) {
		if t := bytes.TrimSpace(l); len(t) > 0 {
			line = t
			n++
		}
	}
	return string(line), n
}

// printLine writes s and a newline to stdout.
func printLine(e *env, cmd, s string) int {
	if _, err := fmt.Fprintln(e.stdout, s); err != nil {
		return failf(e, exitFailure, "%s: cannot write to stdout: %v", cmd, err)
	}
	return exitOK
}
