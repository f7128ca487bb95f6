package manpage

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		`a\b`:     `a\eb`,
		"x‖y":     `x\[u2016]y`,
		"1–15":    `1\[u2013]15`,
		"tab\tx":  "tab        x",
		"bell\ax": "bellx",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestInline(t *testing.T) {
	got := Inline("see [Key files](#key-files); `gmtun genkey` or `\"auto\"`")
	want := `see Key files; \fBgmtun genkey\fR or \fB"auto"\fR`
	if got != want {
		t.Errorf("Inline = %q\nwant     %q", got, want)
	}
	if got := Bold("--socket-dir"); got != `\fB\-\-socket\-dir\fR` {
		t.Errorf("Bold = %q", got)
	}
}

func TestControlCharacterAtLineStart(t *testing.T) {
	p := New("x", "1", "src", "manual")
	p.PP(".hidden line")
	p.Text("'quoted\n\nnormal")
	s := p.String()
	if strings.Contains(s, "\n.hidden") || strings.Contains(s, "\n'quoted") {
		t.Errorf("a text line starting with . or ' was not protected:\n%s", s)
	}
	if !strings.Contains(s, "\\&.hidden line\n") || !strings.Contains(s, "\\&'quoted\n") {
		t.Errorf("missing \\& protection:\n%s", s)
	}
}

func TestText(t *testing.T) {
	p := New("x", "1", "src", "manual")
	p.Text("First line\ncontinues.\n\nSignals:\n  HUP  reload\n  TERM stop,\n       then exit\n")
	s := p.String()
	if !strings.Contains(s, ".PP\nFirst line continues.\n") {
		t.Errorf("paragraph not filled:\n%s", s)
	}
	if !strings.Contains(s, ".PP\nSignals:\n.PP\n.RS 4\n.nf\nHUP  reload\nTERM stop,\n     then exit\n.fi\n.RE\n") {
		t.Errorf("indented block not preformatted:\n%s", s)
	}
	if !strings.HasPrefix(s, `.TH "X" "1" "" "src" "manual"`) {
		t.Errorf("title line: %q", s)
	}
}
