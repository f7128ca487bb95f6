package main

import (
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/internal/sm2pem"
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

With --pem the key is written as a PEM PKCS#8 "PRIVATE KEY" block, the
format of 'openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:SM2',
which OpenSSL, Tongsuo and GmSSL read; private_key_file accepts either.

gmtun refuses key files with any group or other permission (mode 0600 or
stricter) or owned by another user. A warning is printed when standard
output is a terminal, or a file that group or others can read.
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			asPEM := fs.Bool("pem", false, "write the key as PEM PKCS#8 (OpenSSL's format) instead of one base64 line")
			return func(args []string) int {
				if len(args) != 0 {
					return usageErrorf(e, "genkey: takes no arguments, got %q", args[0])
				}
				k, err := handshake.GeneratePrivateKey(e.rand)
				if err != nil {
					return failf(e, exitFailure, "genkey: cannot generate a key: %v", err)
				}
				warnSecretOutput(e)
				if *asPEM {
					return printPrivatePEM(e, "genkey", k)
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

Standard input may also hold a PEM private key (PKCS#8 "PRIVATE KEY" from
'openssl genpkey' or 'gmtun genkey --pem', SEC 1 "EC PRIVATE KEY" or
"SM2 PRIVATE KEY"), or a PEM "PUBLIC KEY" (SubjectPublicKeyInfo, from
'openssl pkey -pubout'), which is converted. With --pem the public key is
written as a PEM "PUBLIC KEY" block instead, which OpenSSL reads:

  gmtun pubkey --pem < /etc/gmtun/gm0.key | openssl pkey -pubin -noout -text
  openssl pkey -in sm2.pem -pubout | gmtun pubkey
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			asPEM := fs.Bool("pem", false, "write the public key as PEM SubjectPublicKeyInfo instead of one base64 line")
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
				if sm2pem.IsPEM(data) {
					pub, err := pemPublicKey(data)
					if err != nil {
						return failf(e, exitFailure, "pubkey: stdin does not hold a valid PEM key: %v", err)
					}
					return printPublic(e, pub, *asPEM)
				}
				line, n := singleLine(data)
				if n != 1 {
					return failf(e, exitFailure, "pubkey: stdin must hold exactly one private key line, got %d", n)
				}
				k, err := handshake.ParsePrivateKey(line)
				if err != nil {
					return failf(e, exitFailure, "pubkey: stdin does not hold a valid private key: %v", err)
				}
				return printPublic(e, k.Public(), *asPEM)
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
standard output is a terminal, or a file that group or others can read.
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
				warnSecretOutput(e)
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

// openOutputWarning is printed when a secret goes to a file that group or
// others can read (wg(8) warns the same way).
const openOutputWarning = "warning: writing a secret key to %s, which group or others can read (mode %04o); " +
	"remove it, then write it again under umask 077, or run: chmod 600 %s"

// warnSecretOutput warns on stderr when the secret about to be written to
// stdout can be seen by others: stdout is a terminal, or a regular file
// with a group or other permission bit. It never changes the exit code.
func warnSecretOutput(e *env) {
	if e.isTerminal(e.stdout) {
		fmt.Fprintln(e.stderr, "gmtun: "+keyTerminalWarning)
		return
	}
	f, ok := e.stdout.(*os.File)
	if !ok {
		return
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
		return
	}
	name := f.Name()
	if p, err := os.Readlink("/proc/self/fd/" + fmt.Sprint(f.Fd())); err == nil {
		name = p // the file's path, not "/dev/stdout"
	}
	fmt.Fprintf(e.stderr, "gmtun: "+openOutputWarning+"\n", name, fi.Mode().Perm(), name)
}

// pemPublicKey returns the public key of a PEM private key, or the key of
// a PEM public key.
func pemPublicKey(data []byte) (*handshake.PublicKey, error) {
	if bytes.Contains(data, []byte("-----BEGIN "+sm2pem.TypePublic+"-----")) {
		return sm2pem.ParsePublicKey(data)
	}
	k, err := sm2pem.ParsePrivateKey(data)
	if err != nil {
		return nil, err
	}
	return k.Public(), nil
}

// printPublic writes k as base64 (one line) or as a PEM block.
func printPublic(e *env, k *handshake.PublicKey, asPEM bool) int {
	if !asPEM {
		return printLine(e, "pubkey", k.String())
	}
	b, err := sm2pem.EncodePublicKey(k)
	if err != nil {
		return failf(e, exitFailure, "pubkey: cannot encode the key: %v", err)
	}
	if _, err := e.stdout.Write(b); err != nil {
		return failf(e, exitFailure, "pubkey: cannot write to stdout: %v", err)
	}
	return exitOK
}

// printPrivatePEM writes k as a PEM PKCS#8 block and wipes the text.
func printPrivatePEM(e *env, cmd string, k *handshake.PrivateKey) int {
	b, err := sm2pem.EncodePrivateKey(k)
	if err != nil {
		return failf(e, exitFailure, "%s: cannot encode the key: %v", cmd, err)
	}
	defer clear(b)
	if _, err := e.stdout.Write(b); err != nil {
		return failf(e, exitFailure, "%s: cannot write to stdout: %v", cmd, err)
	}
	return exitOK
}
