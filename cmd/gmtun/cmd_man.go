package main

import (
	"flag"
	"io"
	"strings"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/control"
	"github.com/gmtun/gmtun/internal/manpage"
)

func init() {
	register(&command{
		name:     "man",
		synopsis: "[8|5]",
		summary:  "print the manual page gmtun(8) or gmtun.toml(5) in roff",
		order:    95,
		help: `Prints a manual page in roff (man(7) macros) on standard output: gmtun(8),
the command line, generated from the same command table as 'gmtun help'
(every command, its help and flags, the exit codes), or gmtun.toml(5), the
configuration file, generated from the documentation of every key that
'gmtun check' enforces. The pages cannot drift from the binary; packages
install them from here ('make man', 'make deb'). To read one directly:

  gmtun man 5 | man -l -
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			return func(args []string) int {
				sec := "8"
				switch len(args) {
				case 0:
				case 1:
					sec = args[0]
				default:
					return usageErrorf(e, "man: takes at most one argument (8 or 5), got %d", len(args))
				}
				switch sec {
				case "8":
					_, err := io.WriteString(e.stdout, manPage8())
					return writeResult(e, "man", err)
				case "5":
					_, err := io.WriteString(e.stdout, manPage5())
					return writeResult(e, "man", err)
				}
				return usageErrorf(e, "man: unknown section %q; 8 is gmtun(8), 5 is gmtun.toml(5)", sec)
			}
		},
	})
}

// writeResult maps a write error on standard output to exit code 1.
func writeResult(e *env, cmd string, err error) int {
	if err != nil {
		return failf(e, exitFailure, "%s: cannot write to standard output: %v", cmd, err)
	}
	return exitOK
}

// quietEnv is an env for inspecting the command table (flags, help)
// without running anything.
func quietEnv() *env {
	return &env{
		stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
		rand: strings.NewReader(""), getenv: func(string) string { return "" },
		isTerminal: func(io.Writer) bool { return false },
	}
}

// commandFlags returns c's flags in the order flag.VisitAll gives
// (sorted by name).
func commandFlags(c *command) []*flag.Flag {
	fs, _ := newFlagSet(quietEnv(), c)
	var out []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f) })
	return out
}

// exitCodes parses exitCodesHelp: the code and its meaning per line.
func exitCodes() [][2]string {
	var out [][2]string
	for l := range strings.Lines(exitCodesHelp) {
		f := strings.Fields(l)
		if len(f) >= 2 && len(f[0]) == 1 && f[0][0] >= '0' && f[0][0] <= '9' {
			out = append(out, [2]string{f[0], strings.Join(f[1:], " ")})
		}
	}
	return out
}

// synopsisRoff renders a synopsis: options bold, placeholders (upper-case
// words) italic, the rest as it is.
func synopsisRoff(s string) string {
	var out []string
	for _, tok := range strings.Fields(s) {
		var b strings.Builder
		word := ""
		flush := func() {
			switch {
			case word == "":
			case strings.HasPrefix(word, "-"):
				b.WriteString(manpage.Bold(word))
			case strings.ToUpper(word) == word && strings.ToLower(word) != word:
				b.WriteString(manpage.Italic(word))
			default:
				b.WriteString(manpage.Bold(word))
			}
			word = ""
		}
		for _, r := range tok {
			if strings.ContainsRune("[]|=,", r) {
				flush()
				b.WriteString(manpage.Escape(string(r)))
				continue
			}
			word += string(r)
		}
		flush()
		out = append(out, b.String())
	}
	return strings.Join(out, " ")
}

// flagTag is the .TP tag of one flag: --name VALUE.
func flagTag(f *flag.Flag) string {
	name, _ := flag.UnquoteUsage(f)
	tag := manpage.Bold("--" + f.Name)
	if name != "" {
		tag += " " + manpage.Italic(name)
	}
	return tag
}

// flagText is the description of one flag, with its default when it has
// one.
func flagText(f *flag.Flag) string {
	_, usage := flag.UnquoteUsage(f)
	switch f.DefValue {
	case "", "false", "0", "0s":
	default:
		usage += " (default " + f.DefValue + ")"
	}
	return usage
}

// manPage8 is gmtun(8), generated from the command table.
func manPage8() string {
	p := manpage.New("gmtun", "8", "gmtun "+versionString(), "System Administration")
	p.SH("NAME")
	p.Raw(`gmtun \- site\-to\-site VPN with SM2 key exchange and SM4, ZUC and uBlock data suites`)
	p.SH("SYNOPSIS")
	for i, c := range sortedCommands() {
		if i > 0 {
			p.Raw(".br")
		}
		line := manpage.Bold("gmtun") + " " + manpage.Bold(c.name)
		if c.synopsis != "" {
			line += " " + synopsisRoff(c.synopsis)
		}
		p.Raw(line)
	}
	p.SH("DESCRIPTION")
	p.PP("gmtun is a site-to-site VPN daemon. Each interface is one configuration file, " +
		"`/etc/gmtun/NAME.toml` (gmtun.toml(5)); under systemd the instance `gmtun@NAME` runs it. " +
		"The static key of each side is an SM2 key pair; sessions are established with an SM2 key exchange " +
		"and carry packets in SM4-GCM or ZUC.")
	p.PP("Flags come after the command name. Both `-flag` and `--flag` work, as do `--flag value` and " +
		"`--flag=value`. `gmtun help` lists the commands; `gmtun COMMAND --help` describes one. " +
		"Errors are one line on standard error, starting with `gmtun: `.")
	p.SH("COMMANDS")
	for _, c := range sortedCommands() {
		title := "gmtun " + c.name
		if c.synopsis != "" {
			title += " " + c.synopsis
		}
		p.SS(title)
		p.Text(c.help)
		if fl := commandFlags(c); len(fl) > 0 {
			p.PP("Flags:")
			p.Raw(".RS 4")
			for _, f := range fl {
				p.TP(flagTag(f), flagText(f))
			}
			p.Raw(".RE")
		}
	}
	p.SH("EXIT STATUS")
	for _, ec := range exitCodes() {
		p.TP(manpage.Bold(ec[0]), ec[1])
	}
	p.SH("FILES")
	p.TP(manpage.Italic("/etc/gmtun/NAME.toml"), "the configuration of interface NAME; see gmtun.toml(5)")
	p.TP(manpage.Italic(control.DefaultDir+"/"), "the control sockets of the running interfaces (private to root), which `gmtun show` queries")
	p.TP(manpage.Italic("gmtun@.service"), "the systemd unit template; `systemctl enable --now gmtun@NAME` runs `/etc/gmtun/NAME.toml`")
	p.SH("SEE ALSO")
	p.Raw(manpage.Bold("gmtun.toml") + "(5), " + manpage.Bold("systemctl") + "(1), " + manpage.Bold("journalctl") + "(1), " +
		manpage.Bold("ip") + "(8)")
	p.PP("The full reference, with examples: `/usr/share/doc/gmtun/OPERATIONS.md`.")
	return p.String()
}

// manExample is the EXAMPLE section of gmtun.toml(5); TestManExampleLoads
// checks that it is a valid configuration.
const manExample = `[interface]
name = "gm0"
private_key_file = "/etc/gmtun/gm0.key"
listen_port = 51900
address = ["198.19.0.1/24"]

[[peer]]
name = "site-b"
public_key = "…the output of gmtun pubkey on site B…"
endpoint = "198.18.0.2:51900"
allowed_ips = ["198.19.0.2/32"]
`

// manPage5 is gmtun.toml(5), generated from config.Keys.
func manPage5() string {
	p := manpage.New("gmtun.toml", "5", "gmtun "+versionString(), "File Formats")
	p.SH("NAME")
	p.Raw(`gmtun.toml \- gmtun interface configuration`)
	p.SH("SYNOPSIS")
	p.Raw(manpage.Italic("/etc/gmtun/NAME.toml"))
	p.SH("DESCRIPTION")
	p.PP("One TOML (v1.0) file per interface, by convention `/etc/gmtun/NAME.toml`, read by `gmtun up` and " +
		"validated by `gmtun check` (gmtun(8)). Two sections: one `[interface]` and any number of `[[peer]]`.")
	p.PP("Decoding is strict:")
	for _, s := range []string{
		"Every key must be one listed below, spelled exactly so. Keys are case-sensitive; a miscased key " +
			"or a typo is an error with a hint. Tables or dotted keys below a listed key are errors too.",
		"Peers must be written as `[[peer]]` sections; `peer = [{ … }]` and `[peer]` are rejected.",
		"Values must have the type shown; integers are not accepted as strings or vice versa.",
		"The first problem found, in file order, is reported as `FILE:LINE: key \"SECTION.KEY\": what is wrong`; " +
			"fix it and run `gmtun check` again.",
		"The file may be at most 1 MiB. A file writable by group or others, or owned by another user than root " +
			"or the daemon's, is refused by the daemon (`gmtun check` only warns).",
	} {
		p.IP(s)
	}
	for _, sec := range []string{"interface", "peer"} {
		p.SH(strings.ToUpper(sec) + " KEYS")
		p.PP("Keys of the `" + config.SectionHeader(sec) + "` section.")
		for _, k := range config.SectionKeys(sec) {
			p.TP(manpage.Bold(k.Name)+" ("+manpage.Inline(k.Type)+"; default: "+manpage.Inline(k.Default)+")", k.Doc)
		}
	}
	p.SH("KEY FILES")
	p.PP("`private_key_file` and `preshared_key_file` name files that must be regular files, have no group or " +
		"other permission bits (mode 0600 or stricter), be owned by the user the daemon runs as, and hold exactly " +
		"one non-blank line of at most 4096 bytes. Paths are absolute or relative to the directory of the " +
		"configuration file. A path `credential:NAME` reads `$CREDENTIALS_DIRECTORY/NAME`, a systemd credential " +
		"(`LoadCredential=`). Create keys under `umask 077`.")
	p.SH("EXAMPLE")
	p.Pre(strings.Split(strings.TrimSuffix(manExample, "\n"), "\n"))
	p.SH("SEE ALSO")
	p.Raw(manpage.Bold("gmtun") + "(8)")
	p.PP("The full reference, with examples: `/usr/share/doc/gmtun/OPERATIONS.md`.")
	return p.String()
}
