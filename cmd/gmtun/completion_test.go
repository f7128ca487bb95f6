package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gmtun/gmtun/internal/testenv"
)

// completionFixture writes the bash and zsh scripts, generated for a
// configuration directory holding gm0.toml and site-b.toml, and returns
// the directory.
func completionFixture(t *testing.T) (dir, confDir string) {
	t.Helper()
	dir = t.TempDir()
	confDir = filepath.Join(dir, "etc gmtun") // a space: the scripts must quote it
	if err := os.Mkdir(confDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"gm0.toml", "site-b.toml", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(confDir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "gmtun.bash"), []byte(bashCompletion(confDir)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_gmtun"), []byte(zshCompletion(confDir)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, confDir
}

// bashComplete simulates bash completing the words of line (the last word
// is the one being completed) and returns COMPREPLY.
func bashComplete(t *testing.T, script, workdir string, words ...string) []string {
	t.Helper()
	var quoted []string
	for _, w := range words {
		quoted = append(quoted, shellQuote(w))
	}
	prog := "source " + shellQuote(script) + " || exit 9\n" +
		"COMP_WORDS=(" + strings.Join(quoted, " ") + ")\n" +
		"COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n" +
		"COMP_LINE=\"${COMP_WORDS[*]}\"; COMP_POINT=${#COMP_LINE}\n" +
		"_gmtun gmtun \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD-1]}\" || exit 8\n" +
		"printf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Dir = workdir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash completion of %q: %v\n%s", words, err, out)
	}
	var got []string
	for l := range strings.Lines(string(out)) {
		if l = strings.TrimSpace(l); l != "" {
			got = append(got, l)
		}
	}
	slices.Sort(got)
	return got
}

func TestCompletionBashLoads(t *testing.T) {
	testenv.RequireTools(t, "bash")
	dir, _ := completionFixture(t)
	script := filepath.Join(dir, "gmtun.bash")
	out, err := exec.Command("bash", "--norc", "--noprofile", "-c", "source "+shellQuote(script)+" && complete -p gmtun").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "complete -F _gmtun gmtun" {
		t.Fatalf("bash: source; complete -p gmtun: %v: %q", err, out)
	}
	// The installed form (gmtun completion bash) loads too.
	r := gmtun("completion", "bash")
	if r.code != 0 || !strings.Contains(r.stdout, "'"+completionConfDir+"'/*.toml") {
		t.Fatalf("gmtun completion bash: %d %q", r.code, r.stderr)
	}
}

func TestCompletionBash(t *testing.T) {
	testenv.RequireTools(t, "bash")
	dir, _ := completionFixture(t)
	script := filepath.Join(dir, "gmtun.bash")
	// Files in the working directory, for FILE completion.
	work := t.TempDir()
	for _, f := range []string{"gm0.toml", "other.conf"} {
		if err := os.WriteFile(filepath.Join(work, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(work, "sockets"), 0o700); err != nil {
		t.Fatal(err)
	}

	var sh []string // what the command table offers for "sh"
	for name := range commands {
		if strings.HasPrefix(name, "sh") {
			sh = append(sh, name)
		}
	}
	slices.Sort(sh)
	if !slices.Contains(sh, "show") {
		t.Fatal("the command table has no show")
	}
	showFlags := []string{"--help"}
	for _, f := range commandFlags(commands["show"]) {
		showFlags = append(showFlags, "--"+f.Name)
	}
	slices.Sort(showFlags)

	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"gmtun", "sh"}, sh},
		{[]string{"gmtun", "ver"}, []string{"version"}},
		{[]string{"gmtun", "show", ""}, []string{"gm0", "site-b"}},
		{[]string{"gmtun", "show", "si"}, []string{"site-b"}},
		{[]string{"gmtun", "show", "--"}, showFlags},
		{[]string{"gmtun", "check", "--q"}, []string{"--quiet"}},
		{[]string{"gmtun", "check", "--config", "gm"}, []string{"gm0.toml"}},
		{[]string{"gmtun", "check", "-config", "o"}, []string{"other.conf"}},
		{[]string{"gmtun", "up", "--socket-dir", "so"}, []string{"sockets"}},
		{[]string{"gmtun", "man", ""}, []string{"5", "8"}},
		{[]string{"gmtun", "completion", "z"}, []string{"zsh"}},
		{[]string{"gmtun", "help", "gen"}, []string{"genkey", "genpsk"}},
		{[]string{"gmtun", "bench", "--time", ""}, nil},
		{[]string{"gmtun", "nosuchcommand", ""}, nil},
	} {
		got := bashComplete(t, script, work, tc.words...)
		if !slices.Equal(got, tc.want) {
			t.Errorf("bash: %q<TAB> = %q, want %q", strings.Join(tc.words, " "), got, tc.want)
		}
	}
}

// TestCompletionBashNames: every command whose synopsis takes a NAME or
// IFACE completes the names of the configuration files.
func TestCompletionBashNames(t *testing.T) {
	testenv.RequireTools(t, "bash")
	dir, _ := completionFixture(t)
	script := filepath.Join(dir, "gmtun.bash")
	n := 0
	for _, s := range completionSpecs() {
		c := commands[s.name]
		takesName := strings.Contains(c.synopsis, "NAME") || strings.Contains(c.synopsis, "IFACE")
		if s.names != takesName {
			t.Errorf("%s: names completion %v, but its synopsis %q", s.name, s.names, c.synopsis)
		}
		if !takesName {
			continue
		}
		n++
		if got := bashComplete(t, script, t.TempDir(), "gmtun", s.name, ""); !slices.Contains(got, "gm0") || !slices.Contains(got, "site-b") || slices.Contains(got, "notes") {
			t.Errorf("bash: gmtun %s <TAB> = %q, want the names gm0 and site-b", s.name, got)
		}
	}
	if n == 0 {
		t.Error("no command takes an interface name")
	}
}

// TestCompletionZsh loads the zsh script in zsh -f and drives it with
// stand-ins for the completion system's builtins, which record what they
// were asked to offer.
func TestCompletionZsh(t *testing.T) {
	testenv.RequireTools(t, "zsh")
	dir, _ := completionFixture(t)
	script := filepath.Join(dir, "_gmtun")
	if out, err := exec.Command("zsh", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	// With the real completion system: the script registers itself.
	out, err := exec.Command("zsh", "-f", "-c",
		"autoload -Uz compinit && compinit -u -D && source "+shellQuote(script)+" && print -r -- $_comps[gmtun]").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "_gmtun" {
		t.Fatalf("zsh: compinit; source; $_comps[gmtun] = %q (%v)", out, err)
	}
	stubs := `compdef() { :; }
_describe() { local n=$4; print -r -- "describe ${(j:,:)${(P)n}}"; }
_arguments() { print -r -- "arguments ${(j:|:)@}"; }
compadd() { [[ $1 == -a ]] && print -r -- "compadd ${(j:,:)${(P)2}}"; }
_files() { :; }
source ` + shellQuote(script) + "\n"
	run := func(prog string) string {
		t.Helper()
		out, err := exec.Command("zsh", "-f", "-c", stubs+prog).CombinedOutput()
		if err != nil {
			t.Fatalf("zsh: %v\n%s", err, out)
		}
		return string(out)
	}
	got := run("words=(gmtun sh); CURRENT=2; _gmtun")
	for _, c := range sortedCommands() {
		if !strings.Contains(got, c.name+":") {
			t.Errorf("zsh: gmtun <TAB> does not offer %s: %q", c.name, got)
		}
	}
	got = run("words=(gmtun show ''); CURRENT=3; _gmtun")
	if !strings.Contains(got, "1::interface name:_gmtun_names") || !strings.Contains(got, "--json[") ||
		!strings.Contains(got, "--socket-dir[") || !strings.Contains(got, ":directory:_files -/") {
		t.Errorf("zsh: gmtun show <TAB>: %q", got)
	}
	got = run("words=(gmtun check ''); CURRENT=3; _gmtun")
	if !strings.Contains(got, "--config[the configuration FILE to check, instead of NAME]:file:_files") {
		t.Errorf("zsh: gmtun check <TAB>: %q", got)
	}
	if got = run("_gmtun_names"); strings.TrimSpace(got) != "compadd gm0,site-b" {
		t.Errorf("zsh: _gmtun_names = %q, want gm0 and site-b", got)
	}
}

func TestCompletionUsage(t *testing.T) {
	wantFailure(t, gmtun("completion"), exitUsage, "completion: give the shell: bash or zsh")
	wantFailure(t, gmtun("completion", "fish"), exitUsage, `completion: unknown shell "fish"; bash and zsh are supported`)
}
