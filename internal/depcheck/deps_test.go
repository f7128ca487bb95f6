package depcheck

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gmtun/gmtun"

// rule forbids packages matching from (a prefix, relative to the module)
// to import packages matching any of the forbidden prefixes, except
// importers under exceptFrom and imports under allow.
type rule struct {
	from       string
	exceptFrom []string
	forbidden  []string
	allow      []string
	why        string
}

var rules = []rule{
	{from: "kernels/", forbidden: []string{""}, allow: []string{"kernels/cpu", "kernels/internal/", reftablesPkg},
		why: "kernels import nothing from gmtun except kernels/cpu and their shared kernels/internal helpers (and internal/reftables in test helpers; TestReftablesNotInProduct keeps it out of the binary)"},
	{from: "handshake", forbidden: []string{"tunnel", "config", "cmd/", "control", "kernels/"},
		why: "the handshake never touches the tunnel or the CLI"},
	{from: "tunnel", exceptFrom: []string{"tunnel/netio"}, forbidden: []string{"kernels/", "config", "cmd/", "control", "net/http"},
		why: "the tunnel sees ciphers.Key, not kernels, and has no HTTP"},
	{from: "tunnel/netio", forbidden: []string{"kernels/", "config", "cmd/", "control", "net/http"}, allow: []string{"kernels/csum"},
		why: "netio's one kernel is the Internet checksum of its TSO split and coalescer (kernels/csum); ciphers stay behind ciphers.Key, and it has no HTTP"},
	{from: "ciphers", forbidden: []string{"tunnel", "handshake", "config", "cmd/", "control"},
		why: "ciphers are below everything else"},
	{from: "config", forbidden: []string{"tunnel", "cmd/", "control", "kernels/"},
		why: "configuration parsing does not reach into the data plane"},
	{from: "", exceptFrom: []string{"kernels/", "ciphers/internal/", "tunnel/netio"}, forbidden: []string{"kernels/"},
		why: "only ciphers/internal dispatch files import kernels (and tunnel/netio kernels/csum, under its own rule)"},
	{from: "", exceptFrom: []string{"cmd/"}, forbidden: []string{"cmd/"},
		why: "nothing imports cmd/"},
	{from: "", exceptFrom: []string{"bench/"}, forbidden: []string{"github.com/emmansun/gmsm/sm4", "github.com/emmansun/gmsm/zuc", "github.com/emmansun/gmsm/cipher"},
		why: "gmsm's SM4 and ZUC index tables by secret data (without AES-NI and under purego); the product seals with ciphers/sm4 and ciphers/zuc, and gmsm stays a test oracle and a bench anchor (docs/SECURITY.md)"},
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Skipf("go list is not available: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	pkgs := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		pkgs++
		from := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		for _, imp := range fields[1:] {
			for _, r := range rules {
				if violates(r, from, imp) {
					t.Errorf("%s imports %s: %s", fields[0], imp, r.why)
				}
			}
		}
	}
	if pkgs < 10 {
		t.Fatalf("go list returned %d packages; expected the whole module", pkgs)
	}
}

func violates(r rule, from, imp string) bool {
	if !strings.HasPrefix(from, r.from) {
		return false
	}
	for _, e := range r.exceptFrom {
		if strings.HasPrefix(from, e) {
			return false
		}
	}
	target, internal := strings.CutPrefix(imp, module+"/")
	if !internal {
		// Standard library or third party: only exact names count.
		return slices.Contains(r.forbidden, imp)
	}
	for _, a := range r.allow {
		if strings.HasPrefix(target, a) {
			return false
		}
	}
	for _, f := range r.forbidden {
		if strings.HasPrefix(target, f) {
			return true
		}
	}
	return false
}

func TestViolates(t *testing.T) {
	for _, c := range []struct {
		r         rule
		from, imp string
		want      bool
	}{
		{rules[0], "kernels/sm4", module + "/kernels/cpu", false},
		{rules[0], "kernels/sm4", module + "/ciphers", true},
		{rules[2], "tunnel/netio", "net/http", false}, // rules[3] covers it
		{rules[3], "tunnel/netio", "net/http", true},
		{rules[2], "tunnel", module + "/kernels/zuc", true},
		{rules[2], "tunnel", module + "/kernels/csum", true},
		{rules[2], "tunnel", module + "/ciphers", false},
		{rules[3], "tunnel/netio", module + "/kernels/csum", false},
		{rules[3], "tunnel/netio", module + "/kernels/sm4", true},
		{rules[6], "tunnel", module + "/kernels/cpu", true},
		{rules[6], "tunnel/netio", module + "/kernels/csum", false},
		{rules[6], "ciphers/internal/sm4", module + "/kernels/sm4", false},
		{rules[7], "bench/tunnelbed", module + "/cmd/gmtun", true},
		{rules[0], "kernels/zuc", module + "/kernels/sm4", true},
		{rules[0], "kernels/zuc", module + "/ciphers", true},
		{rules[0], "kernels/internal/sm4ref", module + "/internal/reftables", false},
	} {
		if got := violates(c.r, c.from, c.imp); got != c.want {
			t.Errorf("violates(%q, %q, %q) = %v, want %v", c.r.why, c.from, c.imp, got, c.want)
		}
	}
}

// reftablesPkg is the home of the standards' reference tables, relative to
// the module: for tests and generators only.
const reftablesPkg = "internal/reftables"

// TestReftablesNotInProduct enforces the rule of internal/reftables: the
// reference tables are for tests and generators, so no package the gmtun
// binary links (in any of the production builds) may import them. Test
// files and the generator module (kernels/_gen) may.
func TestReftablesNotInProduct(t *testing.T) {
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			deps := strings.Fields(string(productDeps(t, b.env, b.tags, "{{.ImportPath}}")))
			if !slices.Contains(deps, module+"/ciphers") {
				t.Fatalf("go list -deps ./cmd/gmtun lacks %s/ciphers; is ./cmd/gmtun still the product?", module)
			}
			if slices.Contains(deps, module+"/"+reftablesPkg) {
				t.Errorf("the gmtun binary links %s/%s: production code must not import the reference tables (move the constant into the package, pinned to the table by a test)", module, reftablesPkg)
			}
		})
	}
}
