package config

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestKeyDocsMatchSchema: Keys documents exactly the keys the loader
// accepts, each once, with every column filled.
func TestKeyDocsMatchSchema(t *testing.T) {
	for _, sec := range []struct {
		name   string
		schema []string
	}{{"interface", interfaceKeys}, {"peer", peerKeys}} {
		var documented []string
		for _, k := range SectionKeys(sec.name) {
			documented = append(documented, k.Name)
			if k.Type == "" || k.Default == "" || k.Doc == "" {
				t.Errorf("%s.%s: every column of its KeyDoc must be filled: %+v", sec.name, k.Name, k)
			}
			for _, col := range []string{k.Type, k.Default, k.Doc} {
				if strings.ContainsAny(col, "|\n") {
					t.Errorf("%s.%s: a KeyDoc column may not hold '|' or a newline (it is a Markdown table cell): %q", sec.name, k.Name, col)
				}
			}
		}
		for _, name := range sec.schema {
			if !slices.Contains(documented, name) {
				t.Errorf("%s.%s is accepted by the loader but has no KeyDoc in config/keydoc.go", sec.name, name)
			}
		}
		for _, name := range documented {
			if !slices.Contains(sec.schema, name) {
				t.Errorf("%s.%s has a KeyDoc but the loader does not accept it", sec.name, name)
			}
		}
		for i, name := range documented {
			if slices.Contains(documented[:i], name) {
				t.Errorf("%s.%s has two KeyDocs", sec.name, name)
			}
		}
	}
	for _, k := range Keys {
		if k.Section != "interface" && k.Section != "peer" {
			t.Errorf("KeyDoc %q has unknown section %q", k.Name, k.Section)
		}
	}
}

// TestKeyDocsMatchOperations: the key tables of docs/OPERATIONS.md are
// exactly the rows rendered from Keys, in order, so the reference and
// gmtun.toml(5) say the same.
func TestKeyDocsMatchOperations(t *testing.T) {
	b, err := os.ReadFile("../docs/OPERATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []string{"interface", "peer"} {
		rows := operationsRows(t, string(b), "### `"+SectionHeader(sec)+"`")
		want := SectionKeys(sec)
		for i, k := range want {
			if i >= len(rows) {
				t.Errorf("OPERATIONS.md %s table lacks the row of %s; add:\n%s", SectionHeader(sec), k.Name, k.MarkdownRow())
				continue
			}
			if rows[i] != k.MarkdownRow() {
				t.Errorf("OPERATIONS.md %s table row %d differs from config/keydoc.go (the source):\n got: %s\nwant: %s",
					SectionHeader(sec), i+1, rows[i], k.MarkdownRow())
			}
		}
		for _, r := range rows[min(len(rows), len(want)):] {
			t.Errorf("OPERATIONS.md %s table has a row without a KeyDoc: %s", SectionHeader(sec), r)
		}
	}
}

// operationsRows returns the key rows (those starting with "| `") of the
// first table after heading in doc.
func operationsRows(t *testing.T, doc, heading string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("OPERATIONS.md has no heading %q", heading)
	}
	var rows []string
	inTable := false
	for line := range strings.Lines(rest) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "|"):
			inTable = true
			if strings.HasPrefix(line, "| `") {
				rows = append(rows, line)
			}
		case inTable:
			return rows
		case strings.HasPrefix(line, "#"):
			t.Fatalf("OPERATIONS.md: no table under %q", heading)
		}
	}
	return rows
}
