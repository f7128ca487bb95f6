package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/internal/testenv"
)

// roffTitles returns the arguments of every line starting with macro
// (".SH", ".SS") in page, unquoted and unescaped enough to compare with
// plain text.
func roffTitles(page, macro string) []string {
	var out []string
	for l := range strings.Lines(page) {
		if rest, ok := strings.CutPrefix(strings.TrimRight(l, "\n"), macro+" "); ok {
			rest = strings.Trim(rest, `"`)
			out = append(out, strings.ReplaceAll(rest, `\(dq`, `"`))
		}
	}
	return out
}

// TestManPage8HasEveryCommand fails if a command of the table lacks its
// subsection in gmtun(8), or a flag of it is missing there, or the page
// lacks an exit code of exitCodesHelp.
func TestManPage8HasEveryCommand(t *testing.T) {
	r := gmtun("man", "8")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("gmtun man 8: code %d, stderr %q", r.code, r.stderr)
	}
	page := r.stdout
	subs := roffTitles(page, ".SS")
	// Split the page at its subsections to find what each one contains.
	parts := regexp.MustCompile(`(?m)^\.SS `).Split(page, -1)
	for _, c := range sortedCommands() {
		title := "gmtun " + c.name
		if c.synopsis != "" {
			title += " " + c.synopsis
		}
		idx := -1
		for i, s := range subs {
			if s == title {
				idx = i
			}
		}
		if idx < 0 {
			t.Errorf("gmtun(8) has no subsection %q for command %s", title, c.name)
			continue
		}
		body := parts[idx+1]
		firstLine, _, _ := strings.Cut(strings.TrimSpace(c.help), "\n")
		if !strings.Contains(body, firstLine[:min(len(firstLine), 30)]) {
			t.Errorf("gmtun(8) section of %s does not start with its help text %q", c.name, firstLine)
		}
		for _, f := range commandFlags(c) {
			if !strings.Contains(body, `\fB\-\-`+strings.ReplaceAll(f.Name, "-", `\-`)+`\fR`) {
				t.Errorf("gmtun(8) section of %s lacks flag --%s", c.name, f.Name)
			}
		}
	}
	if got, want := len(subs), len(commands); got != want {
		t.Errorf("gmtun(8) has %d command subsections, the table %d commands", got, want)
	}
	codes := exitCodes()
	if len(codes) < 4 {
		t.Fatalf("parsed %d exit codes from exitCodesHelp, want at least 4", len(codes))
	}
	_, exitPart, ok := strings.Cut(page, ".SH \"EXIT STATUS\"\n")
	if !ok {
		t.Fatal("gmtun(8) has no EXIT STATUS section")
	}
	for _, ec := range codes {
		if !strings.Contains(exitPart, ".TP\n\\fB"+ec[0]+"\\fR\n") {
			t.Errorf("gmtun(8) EXIT STATUS lacks code %s", ec[0])
		}
	}
}

// TestManPage5HasEveryKey fails if a documented configuration key lacks its
// entry, in its section, in gmtun.toml(5).
func TestManPage5HasEveryKey(t *testing.T) {
	r := gmtun("man", "5")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("gmtun man 5: code %d, stderr %q", r.code, r.stderr)
	}
	page := r.stdout
	_, afterIface, ok1 := strings.Cut(page, ".SH \"INTERFACE KEYS\"\n")
	ifacePart, peerPart, ok2 := strings.Cut(afterIface, ".SH \"PEER KEYS\"\n")
	if !ok1 || !ok2 {
		t.Fatal("gmtun.toml(5) lacks the INTERFACE KEYS or PEER KEYS section")
	}
	for _, k := range config.Keys {
		part := ifacePart
		if k.Section == "peer" {
			part = peerPart
		}
		tag := ".TP\n\\fB" + strings.ReplaceAll(k.Name, "-", `\-`) + "\\fR ("
		if !strings.Contains(part, tag) {
			t.Errorf("gmtun.toml(5) lacks key %s.%s", k.Section, k.Name)
		}
	}
}

// TestManPagesRenderClean renders both pages with groff, all warnings on,
// and with man -l, as a user would read them.
func TestManPagesRenderClean(t *testing.T) {
	testenv.RequireTools(t, "groff", "man")
	dir := t.TempDir()
	for _, sec := range []string{"8", "5"} {
		r := gmtun("man", sec)
		if r.code != 0 {
			t.Fatalf("gmtun man %s: %d %s", sec, r.code, r.stderr)
		}
		path := filepath.Join(dir, "page."+sec)
		if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		checkManRenders(t, path, sec)
	}
}

// checkManRenders fails unless the page at path (roff, or gzipped roff for
// man -l) renders without any groff warning, and its rendered text has the
// expected headings.
func checkManRenders(t *testing.T, path, sec string) {
	t.Helper()
	if !strings.HasSuffix(path, ".gz") {
		cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z", path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("groff -man -ww %s: %v\n%s", path, err, stderr.String())
		}
	}
	cmd := exec.Command("man", "--warnings", "-l", path)
	cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat", "LC_ALL=C.UTF-8", "MAN_DISABLE_SECCOMP=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("man --warnings -l %s: %v\n%s", path, err, stderr.String())
	}
	out := stdout.String()
	want := []string{"NAME", "SYNOPSIS", "DESCRIPTION", "SEE ALSO"}
	if sec == "8" {
		want = append(want, "COMMANDS", "EXIT STATUS", "gmtun check NAME | --config FILE [--quiet]", "--socket-dir DIR")
		for _, c := range sortedCommands() {
			want = append(want, "gmtun "+c.name)
		}
	} else {
		want = append(want, "INTERFACE KEYS", "PEER KEYS", "private_key_file (string; default: required)", "sm4-gcm")
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("man -l %s: rendered page lacks %q", path, w)
		}
	}
	// Non-ASCII text arrives intact (escaped as \[uXXXX] in the source).
	if sec == "5" && !strings.Contains(out, "1–15 bytes") {
		t.Errorf("man -l %s: the en dash of the name key did not render", path)
	}
}

// TestManExampleLoads: the EXAMPLE of gmtun.toml(5) is a valid
// configuration once its placeholders are filled.
func TestManExampleLoads(t *testing.T) {
	dir := t.TempDir()
	priv, err := handshake.GeneratePrivateKey(&seedReader{next: 1})
	if err != nil {
		t.Fatal(err)
	}
	peer, err := handshake.GeneratePrivateKey(&seedReader{next: 99})
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "gm0.key")
	if err := os.WriteFile(keyFile, []byte(priv.Encode()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(manExample, "/etc/gmtun/gm0.key", keyFile, 1)
	doc = strings.Replace(doc, "…the output of gmtun pubkey on site B…", peer.Public().String(), 1)
	cfgFile := filepath.Join(dir, "gm0.toml")
	if err := os.WriteFile(cfgFile, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(cfgFile); err != nil {
		t.Fatalf("the gmtun.toml(5) example does not load: %v", err)
	}
	if !strings.Contains(manPage5(), "listen_port = 51900") {
		t.Error("gmtun.toml(5) does not contain its example")
	}
}

func TestManUsage(t *testing.T) {
	wantFailure(t, gmtun("man", "3"), exitUsage, `man: unknown section "3"; 8 is gmtun(8), 5 is gmtun.toml(5)`)
	wantFailure(t, gmtun("man", "8", "5"), exitUsage, "man: takes at most one argument (8 or 5), got 2")
	if a, b := gmtun("man"), gmtun("man", "8"); a.code != 0 || a.stdout != b.stdout {
		t.Error("gmtun man without an argument is not gmtun(8)")
	}
}
