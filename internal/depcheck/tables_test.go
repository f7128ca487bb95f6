package depcheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// minTableLen is the length from which an integer array in cipher code is
// taken for a lookup table. Round keys ([32]uint32), ZUC's 16 constants and
// state words stay below it; every S-box or T-table (≥ 256 entries) is above.
const minTableLen = 64

// builds are the configurations a production binary can be built in: the
// SIMD build, the portable one and the main non-x86 gateway architecture.
var builds = []struct {
	name string
	env  []string
	tags string
}{
	{"linux/amd64", []string{"GOOS=linux", "GOARCH=amd64"}, ""},
	{"linux/amd64 purego", []string{"GOOS=linux", "GOARCH=amd64"}, "purego"},
	{"linux/arm64", []string{"GOOS=linux", "GOARCH=arm64"}, ""},
}

// productDeps returns `go list -deps -f format ./cmd/gmtun` in the build
// given by env and tags: one line per package the gmtun binary links.
func productDeps(t *testing.T, env []string, tags, format string) []byte {
	t.Helper()
	args := []string{"list", "-deps", "-f", format}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, "./cmd/gmtun")...)
	cmd.Dir = moduleRoot(t)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return out
}

// TestNoLookupTablesInProduction enforces the constant-time structure of
// docs/SECURITY.md: no Go file of ciphers/ or kernels/ that the gmtun binary
// links (in any build above) declares an integer lookup table — a
// package-level array of minTableLen entries or more, or an array or slice
// literal that long anywhere — and no assembly it links uses a gather
// instruction (a memory access at a data-dependent address). S-boxes are
// Boolean circuits or in-register shuffles; the tables stay in _test.go
// files as oracles.
func TestNoLookupTablesInProduction(t *testing.T) {
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			out := productDeps(t, b.env, b.tags, "{{.ImportPath}}|{{.Dir}}|{{join .GoFiles \",\"}}|{{join .SFiles \",\"}}")
			checked := 0
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				f := strings.Split(sc.Text(), "|")
				if len(f) != 4 || !(strings.HasPrefix(f[0], module+"/ciphers") || strings.HasPrefix(f[0], module+"/kernels")) {
					continue
				}
				for _, name := range splitList(f[2]) {
					checked++
					for _, p := range lookupTables(t, filepath.Join(f[1], name)) {
						t.Errorf("%s: lookup table in production code (move it to a _test.go oracle; compute the S-box as a circuit)", p)
					}
				}
				for _, name := range splitList(f[3]) {
					for _, p := range gathers(t, filepath.Join(f[1], name)) {
						t.Errorf("%s: gather instruction (secret-dependent memory address) in production assembly", p)
					}
				}
			}
			if checked < 10 {
				t.Fatalf("checked only %d files of ciphers/ and kernels/; is ./cmd/gmtun still the product?", checked)
			}
		})
	}
}

// TestLookupTableDetector proves the detector finds what it must.
func TestLookupTableDetector(t *testing.T) {
	src := `package p
const n = 4
var sbox = [256]byte{1, 2, 3}
var t0 [n * 64]uint32
var small = [32]uint32{}
func f() { _ = []uint8{` + strings.Repeat("1, ", 70) + `} }
var scratch [4096]byte // flagged too: a package-level buffer is shared mutable state
var tt = [4][256]uint32{{1}, {2}}
var rows = [4][16]byte{{1}, {2}}
`
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := lookupTables(t, path)
	if len(got) != 5 {
		t.Fatalf("found %d tables, want 5 (sbox, t0, the literal, scratch, the nested tt; not rows): %v", len(got), got)
	}
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// lookupTables returns the positions of integer arrays of minTableLen or
// more entries declared at package level, and of integer array or slice
// literals with that many elements.
func lookupTables(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]int64{}
	for _, d := range file.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if v, ok := evalInt(vs.Values[i], consts); ok {
							consts[n.Name] = v
						}
					}
				}
			}
		}
	}
	var found []string
	report := func(n ast.Node, what string) {
		found = append(found, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if at, ok := vs.Type.(*ast.ArrayType); ok {
				if n, ok := intArrayLen(at, consts); ok && n >= minTableLen {
					report(vs, fmt.Sprintf("package-level [%d] array %s", n, vs.Names[0].Name))
				}
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		at, ok := cl.Type.(*ast.ArrayType)
		if !ok {
			return true
		}
		if n, ok := intArrayLen(at, consts); ok && n >= minTableLen {
			report(cl, fmt.Sprintf("[%d] array literal", n))
		} else if isInt(at.Elt) && len(cl.Elts) >= minTableLen {
			report(cl, fmt.Sprintf("literal of %d integers", len(cl.Elts)))
		}
		return true
	})
	return found
}

// intArrayLen returns the longest dimension of the integer array type at
// (nested arrays count: [4][256]uint32 is four 256-entry tables, while
// [4][16]byte, four rows of constants, stays short), or false if its
// innermost element is not an integer or a length is not constant. A slice
// type counts as length 0.
func intArrayLen(at *ast.ArrayType, consts map[string]int64) (int64, bool) {
	n := int64(0)
	if at.Len != nil {
		var ok bool
		if n, ok = evalInt(at.Len, consts); !ok {
			return 0, false
		}
	}
	if inner, ok := at.Elt.(*ast.ArrayType); ok {
		m, ok := intArrayLen(inner, consts)
		return max(n, m), ok
	}
	return n, isInt(at.Elt)
}

func isInt(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	if !ok {
		return false
	}
	switch id.Name {
	case "byte", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "int", "uint", "uintptr":
		return true
	}
	return false
}

// evalInt evaluates an integer constant expression of literals, operators
// and constants of the same file.
func evalInt(e ast.Expr, consts map[string]int64) (int64, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.INT {
			v, err := strconv.ParseInt(e.Value, 0, 64)
			return v, err == nil
		}
	case *ast.Ident:
		v, ok := consts[e.Name]
		return v, ok
	case *ast.ParenExpr:
		return evalInt(e.X, consts)
	case *ast.BinaryExpr:
		x, ok1 := evalInt(e.X, consts)
		y, ok2 := evalInt(e.Y, consts)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch e.Op {
		case token.ADD:
			return x + y, true
		case token.SUB:
			return x - y, true
		case token.MUL:
			return x * y, true
		case token.QUO:
			if y != 0 {
				return x / y, true
			}
		case token.SHL:
			return x << uint(y), true
		}
	}
	return 0, false
}

// gathers returns the lines of an assembly file that use a gather
// instruction.
func gathers(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for i, line := range strings.Split(string(src), "\n") {
		code, _, _ := strings.Cut(line, "//")
		if strings.Contains(strings.ToUpper(code), "GATHER") {
			found = append(found, fmt.Sprintf("%s:%d: %s", path, i+1, strings.TrimSpace(code)))
		}
	}
	return found
}

// moduleRoot is the directory of go.mod, two levels up from this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod in %s: %v", dir, err)
	}
	return dir
}
