package config

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestKeyLines(t *testing.T) {
	doc := `# "a = 1" in a comment
s = """
name = "not a key"
"""
t = '''x = 1'''
[interface]   # header
  name = "gm0" # trailing
"quoted key" = 1
dotted.part = 2
arr = [
  1, # name = 2
  "x = ]",
]
inl = { a = 1, b = { c = "}" } }
[[peer]]
date = 1979-05-27 07:32:00
s2 = "esc \" name = 3"
aot = [{ k = 1 }, { k = 2 }]
'lit.key' = """multi "" quote"""""
[[peer]]
[ 'peer' . sub ]
x = 1
`
	want := []struct {
		key  string
		line int
	}{
		{"s", 2}, {"t", 5}, {"interface", 6}, {"interface.name", 7}, {`interface."quoted key"`, 8},
		{"interface.dotted.part", 9}, {"interface.arr", 10}, {"interface.inl", 14}, {"interface.inl.a", 14},
		{"interface.inl.b", 14}, {"interface.inl.b.c", 14}, {"peer", 15}, {"peer.date", 16}, {"peer.s2", 17},
		{"peer.aot", 18}, {"peer.aot.k", 18}, {"peer.aot.k", 18}, {`peer."lit.key"`, 19}, {"peer", 20},
		{"peer.sub", 21}, {"peer.sub.x", 22},
	}
	var m map[string]any
	md, err := toml.Decode(doc, &m)
	if err != nil {
		t.Fatal(err)
	}
	keys := md.Keys()
	var gotKeys []string
	for _, k := range keys {
		gotKeys = append(gotKeys, k.String())
	}
	var wantKeys []string
	var wantLines []int
	for _, w := range want {
		wantKeys = append(wantKeys, w.key)
		wantLines = append(wantLines, w.line)
	}
	if !slices.Equal(gotKeys, wantKeys) {
		t.Fatalf("md.Keys() = %q\nwant        %q\n(the scanner's assumption about key order no longer holds)", gotKeys, wantKeys)
	}
	if got := keyLines([]byte(doc), keys); !slices.Equal(got, wantLines) {
		t.Errorf("keyLines = %v\nwant       %v", got, wantLines)
	}
	// With a UTF-8 BOM and CRLF line ends the lines are the same.
	crlf := "\xef\xbb\xbf" + strings.ReplaceAll(doc, "\n", "\r\n")
	md2, err := toml.Decode(crlf, &m)
	if err != nil {
		t.Fatal(err)
	}
	if got := keyLines([]byte(crlf), md2.Keys()); !slices.Equal(got, wantLines) {
		t.Errorf("keyLines with BOM and CRLF = %v\nwant                        %v", got, wantLines)
	}
}

func TestKeyLinesMismatch(t *testing.T) {
	src := []byte("a = 1\nb = 2\n")
	// Fewer keys than declarations, or a different key name: no lines
	// rather than wrong ones.
	if got := keyLines(src, []toml.Key{{"a"}}); got != nil {
		t.Errorf("count mismatch: got %v, want nil", got)
	}
	if got := keyLines(src, []toml.Key{{"a"}, {"c"}}); got != nil {
		t.Errorf("name mismatch: got %v, want nil", got)
	}
	if got := keyLines(src, []toml.Key{{"a"}, {"b"}}); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("got %v, want [1 2]", got)
	}
}

// checkKeyLines asserts the fuzz invariant of keyLines: when it returns
// lines, every bare last key part occurs on its line.
func checkKeyLines(t *testing.T, src []byte, keys []toml.Key) {
	lines := keyLines(src, keys)
	if lines == nil {
		return
	}
	all := bytes.Split(src, []byte("\n"))
	for i, k := range keys {
		last := k[len(k)-1]
		bare := last != ""
		for j := 0; j < len(last); j++ {
			bare = bare && isBareKeyByte(last[j])
		}
		if !bare {
			continue
		}
		if l := lines[i]; l < 1 || l > len(all) || !bytes.Contains(all[l-1], []byte(last)) {
			t.Fatalf("key %q placed on line %d, which does not contain it", k, l)
		}
	}
}
