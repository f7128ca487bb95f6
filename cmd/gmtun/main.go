// Command gmtun is the gmtun VPN daemon and its tools.
//
// Usage:
//
//	gmtun COMMAND [ARGUMENTS]
//
// Run `gmtun help` for the list of commands and `gmtun COMMAND --help`
// for one command. docs/OPERATIONS.md is the full reference, including
// the exit codes below.
//
// Each command lives in its own file (cmd_NAME.go) and registers itself
// in the command table from an init function, so adding a command touches
// no other file.
package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Exit codes, documented in `gmtun help` and docs/OPERATIONS.md.
const (
	exitOK      = 0 // success
	exitFailure = 1 // runtime failure: I/O, bad key on stdin, daemon error
	exitUsage   = 2 // bad command line: unknown command or flag, missing argument
	exitConfig  = 3 // the configuration file is invalid (or unreadable)
)

// env is what a command may touch of the process, injected so that tests
// run commands in-process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// rand is the randomness source for key generation.
	rand io.Reader
	// getenv reads an environment variable.
	getenv func(string) string
	// isTerminal reports whether w is an interactive terminal.
	isTerminal func(w io.Writer) bool
}

// command is one entry of the command table.
type command struct {
	name     string // what the user types
	synopsis string // arguments after the name, for usage lines
	summary  string // one line for `gmtun help`
	help     string // the body of `gmtun NAME --help`, after the usage line
	order    int    // position in `gmtun help` (ascending)
	// setup declares the command's flags on fs and returns the function
	// that runs the command with the arguments left after the flags.
	setup func(e *env, fs *flag.FlagSet) func(args []string) int
}

// commands is the command table, filled by register from init functions.
var commands = map[string]*command{}

// register adds c to the command table. It panics on a duplicate name
// (a programming error caught by every test run).
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("gmtun: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func main() {
	// Before any key is read: no core dump and no ptrace attach by other
	// processes of the same user can expose the keys in memory.
	if err := disableCoreDumps(); err != nil {
		fmt.Fprintf(os.Stderr, "gmtun: cannot disable core dumps: %v\n", err)
		os.Exit(exitFailure)
	}
	e := &env{
		stdin:      os.Stdin,
		stdout:     os.Stdout,
		stderr:     os.Stderr,
		rand:       rand.Reader,
		getenv:     os.Getenv,
		isTerminal: isTerminal,
	}
	os.Exit(run(e, os.Args[1:]))
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// run dispatches args (without the program name) and returns the exit code.
func run(e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, topUsage())
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "--version", "-version", "-V":
		name = "version" // `gmtun --version`, as wg and most tools accept
	case "help", "-h", "-help", "--help":
		if len(rest) == 0 {
			fmt.Fprint(e.stdout, topUsage())
			return exitOK
		}
		c, ok := commands[rest[0]]
		if !ok {
			return usageErrorf(e, "help: unknown command %q; run 'gmtun help' for the list", rest[0])
		}
		fs, _ := newFlagSet(e, c)
		fmt.Fprint(e.stdout, commandHelp(c, fs))
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		if strings.HasPrefix(name, "-") {
			return usageErrorf(e, "unknown option %q; flags go after the command name (run 'gmtun help')", name)
		}
		return usageErrorf(e, "unknown command %q; run 'gmtun help' for the list", name)
	}
	fs, exec := newFlagSet(e, c)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, commandHelp(c, fs))
			return exitOK
		}
		return usageErrorf(e, "%s: %v; run 'gmtun %s --help'", c.name, err, c.name)
	}
	return exec(fs.Args())
}

// newFlagSet returns c's flag set, silent (errors and help are printed by
// run), and the function that runs c.
func newFlagSet(e *env, c *command) (*flag.FlagSet, func([]string) int) {
	fs := flag.NewFlagSet("gmtun "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs, c.setup(e, fs)
}

// usageErrorf prints one line to stderr and returns exitUsage.
func usageErrorf(e *env, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "gmtun: "+format+"\n", args...)
	return exitUsage
}

// failf prints one line to stderr and returns code.
func failf(e *env, code int, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "gmtun: "+format+"\n", args...)
	return code
}

// sortedCommands returns the table in help order.
func sortedCommands() []*command {
	cs := make([]*command, 0, len(commands))
	for _, c := range commands {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *command) int {
		if a.order != b.order {
			return a.order - b.order
		}
		return strings.Compare(a.name, b.name)
	})
	return cs
}

// exitCodesHelp is shared by the top-level and per-command help.
const exitCodesHelp = `Exit codes:
  0  success
  1  runtime failure (I/O error, invalid key on stdin, daemon error)
  2  usage error (unknown command or flag, missing or extra argument)
  3  configuration error (the file is unreadable or invalid)
`

func topUsage() string {
	var b strings.Builder
	b.WriteString("Usage: gmtun COMMAND [ARGUMENTS]\n\n")
	b.WriteString("gmtun is a site-to-site VPN using SM2 key exchange and SM4, ZUC and uBlock data suites.\n\nCommands:\n")
	width := 0
	for _, c := range sortedCommands() {
		width = max(width, len(c.name))
	}
	for _, c := range sortedCommands() {
		fmt.Fprintf(&b, "  %-*s %s\n", width, c.name, c.summary)
	}
	b.WriteString("\nRun 'gmtun COMMAND --help' for details of one command.\n\n")
	b.WriteString(exitCodesHelp)
	return b.String()
}

// commandHelp is the text of `gmtun NAME --help`: usage line, the
// command's help, its flags (from fs) and the exit codes.
func commandHelp(c *command, fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("Usage: gmtun " + c.name)
	if c.synopsis != "" {
		b.WriteString(" " + c.synopsis)
	}
	b.WriteString("\n\n" + c.help + "\n")
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		b.WriteString("Flags:\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		b.WriteString("\n")
	}
	b.WriteString(exitCodesHelp)
	return b.String()
}
