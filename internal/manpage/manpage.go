// Package manpage writes manual pages in roff with the man(7) macros, from
// plain help text and short Markdown: the one job it has is turning text
// that gmtun already keeps (command help, configuration key docs) into a
// page that man(1) renders without warnings.
//
// Input text is UTF-8; every character outside ASCII is written as a groff
// \[uXXXX] escape, so the page renders the same with or without preconv.
package manpage

import (
	"fmt"
	"regexp"
	"strings"
)

// Page is a manual page being written. The zero value is not usable; use
// New.
type Page struct {
	b strings.Builder
}

// New starts a page: name and section for the title line (.TH), source for
// the footer (e.g. "gmtun v1.2.3") and manual for the header (e.g. "System
// Administration"). The date is left empty so that the output depends only
// on its input.
func New(name, section, source, manual string) *Page {
	p := &Page{}
	fmt.Fprintf(&p.b, ".TH %s %s \"\" %s %s\n", arg(strings.ToUpper(name)), arg(section), arg(source), arg(manual))
	// Left-justified, no hyphenation: words such as option names and file
	// names must survive copying from the rendered page.
	p.b.WriteString(".ad l\n.nh\n")
	return p
}

// String returns the roff text written so far.
func (p *Page) String() string { return p.b.String() }

// SH starts a section (NAME, SYNOPSIS, …).
func (p *Page) SH(title string) { fmt.Fprintf(&p.b, ".SH %s\n", arg(title)) }

// SS starts a subsection.
func (p *Page) SS(title string) { fmt.Fprintf(&p.b, ".SS %s\n", arg(title)) }

// Raw writes roff lines as they are (for the NAME line and the like).
func (p *Page) Raw(roff string) {
	p.b.WriteString(roff)
	if !strings.HasSuffix(roff, "\n") {
		p.b.WriteByte('\n')
	}
}

// PP writes a filled paragraph of Markdown inline text.
func (p *Page) PP(md string) {
	p.b.WriteString(".PP\n")
	p.line(Inline(md))
}

// TP writes a tagged paragraph: tag (roff, e.g. from Bold) hanging before
// body (Markdown inline text).
func (p *Page) TP(tag, md string) {
	p.b.WriteString(".TP\n")
	p.line(tag)
	p.line(Inline(md))
}

// IP writes an indented paragraph with a bullet.
func (p *Page) IP(md string) {
	p.b.WriteString(".IP \\(bu 2\n")
	p.line(Inline(md))
}

// Pre writes lines verbatim in a no-fill block, indented.
func (p *Page) Pre(lines []string) {
	indent := -1 // the common indentation, removed
	for _, l := range lines {
		l = strings.ReplaceAll(l, "\t", "        ")
		if n := len(l) - len(strings.TrimLeft(l, " ")); l != "" && (indent < 0 || n < indent) {
			indent = n
		}
	}
	p.b.WriteString(".PP\n.RS 4\n.nf\n")
	for _, l := range lines {
		l = strings.ReplaceAll(l, "\t", "        ")
		l = strings.TrimRight(l[min(max(indent, 0), len(l)-len(strings.TrimLeft(l, " "))):], " ")
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			p.b.WriteString(`\&`)
		}
		p.b.WriteString(Escape(l))
		p.b.WriteByte('\n')
	}
	p.b.WriteString(".fi\n.RE\n")
}

// Text writes help text: blocks separated by blank lines; a block in which
// some line starts with white space is preformatted (a table of signals,
// a command line), any other block is a filled paragraph.
func (p *Page) Text(text string) {
	for _, block := range blocks(text) {
		pre := false
		for _, l := range block {
			if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
				pre = true
			}
		}
		if !pre {
			p.b.WriteString(".PP\n")
			p.line(Escape(strings.Join(block, " ")))
			continue
		}
		// A heading line ("Signals:") before an indented block stays a
		// paragraph of its own.
		if !strings.HasPrefix(block[0], " ") && !strings.HasPrefix(block[0], "\t") {
			p.b.WriteString(".PP\n")
			p.line(Escape(block[0]))
			block = block[1:]
		}
		p.Pre(block)
	}
}

// blocks splits text into runs of non-blank lines.
func blocks(text string) [][]string {
	var out [][]string
	var cur []string
	for l := range strings.Lines(text) {
		l = strings.TrimRight(l, " \t\n")
		if l == "" {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// line writes one text line, protecting a leading control character.
func (p *Page) line(roff string) {
	roff = strings.TrimSpace(roff)
	if strings.HasPrefix(roff, ".") || strings.HasPrefix(roff, "'") {
		p.b.WriteString(`\&`)
	}
	p.b.WriteString(roff)
	p.b.WriteByte('\n')
}

// Escape turns plain text into roff text: backslashes, and characters
// outside ASCII as \[uXXXX].
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '\t':
			b.WriteString("        ")
		case r < 0x20 || r == 0x7f:
			// control characters have no place in a page
		case r < 0x80:
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		}
	}
	return b.String()
}

// Bold is s in bold, with hyphens as \- (so that options can be searched
// and copied): for command names, options and literal values.
func Bold(s string) string { return `\fB` + strings.ReplaceAll(Escape(s), "-", `\-`) + `\fR` }

// Italic is s in italics: for placeholders such as FILE.
func Italic(s string) string { return `\fI` + Escape(s) + `\fR` }

var (
	mdCode = regexp.MustCompile("`([^`]*)`")
	mdLink = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
)

// Inline turns one paragraph of Markdown inline text into roff: `code`
// becomes bold, [text](link) becomes text; everything else is escaped.
func Inline(md string) string {
	md = mdLink.ReplaceAllString(md, "$1")
	var b strings.Builder
	last := 0
	for _, m := range mdCode.FindAllStringSubmatchIndex(md, -1) {
		b.WriteString(Escape(md[last:m[0]]))
		b.WriteString(Bold(md[m[2]:m[3]]))
		last = m[1]
	}
	b.WriteString(Escape(md[last:]))
	return b.String()
}

// arg quotes a macro argument.
func arg(s string) string {
	return `"` + strings.ReplaceAll(Escape(s), `"`, `\(dq`) + `"`
}
