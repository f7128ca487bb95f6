package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gmtun/gmtun/internal/testenv"
)

var (
	staticOnce sync.Once
	staticBin  string
	staticErr  string
	staticDir  string
)

// buildStatic builds the daemon the way `make static` does (CGO_ENABLED=0,
// -trimpath), once per test binary.
func buildStatic(t *testing.T) string {
	t.Helper()
	testenv.RequireTools(t, "go")
	staticOnce.Do(func() {
		var err error
		if staticDir, err = os.MkdirTemp("", "gmtun-static-"); err != nil {
			staticErr = err.Error()
			return
		}
		bin := filepath.Join(staticDir, "gmtun")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=v0.0.0-test", "-o", bin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			staticErr = err.Error() + "\n" + string(out)
			return
		}
		staticBin = bin
	})
	if staticErr != "" {
		t.Fatalf("go build (CGO_ENABLED=0): %s", staticErr)
	}
	return staticBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if staticDir != "" {
		os.RemoveAll(staticDir)
	}
	os.Exit(code)
}

// TestStaticBinary: the CGO_ENABLED=0 build has no program interpreter
// and needs no shared library, so it runs on any Linux of its
// architecture.
func TestStaticBinary(t *testing.T) {
	bin := buildStatic(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a PT_INTERP segment: dynamically linked", bin)
		}
		if p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s has a PT_DYNAMIC segment", bin)
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v", bin, libs)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "gmtun v0.0.0-test\n") {
		t.Errorf("%s version: %v %q", bin, err, out)
	}
}

// TestDebPackage builds the package with configs/deb/build.sh (what `make
// deb` runs) and checks its metadata, file list, modes, conffiles and
// maintainer scripts; then installs it into a scratch root with dpkg,
// removes it (only the conffile stays) and purges it (nothing stays).
func TestDebPackage(t *testing.T) {
	testenv.RequireTools(t, "dpkg-deb", "dpkg", "gzip", "md5sum", "sh")
	bin := buildStatic(t)
	out := t.TempDir()
	cmd := exec.Command("configs/deb/build.sh", bin, out, "0~test.1", "amd64")
	cmd.Dir = "../.."
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("configs/deb/build.sh: %v\n%s", err, b)
	}
	deb := strings.TrimSpace(string(b))
	if filepath.Base(deb) != "gmtun_0~test.1_amd64.deb" {
		t.Fatalf("build.sh printed %q", deb)
	}
	dpkgDeb := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("dpkg-deb", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("dpkg-deb %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for field, want := range map[string]string{"Package": "gmtun", "Version": "0~test.1", "Architecture": "amd64"} {
		if got := strings.TrimSpace(dpkgDeb("-f", deb, field)); got != want {
			t.Errorf("control %s = %q, want %q", field, got, want)
		}
	}
	if got := strings.TrimSpace(dpkgDeb("-I", deb, "conffiles")); got != "/etc/gmtun/gm0.toml.example" {
		t.Errorf("conffiles = %q", got)
	}

	// The file list with modes and owners.
	want := map[string]string{
		"./usr/bin/gmtun":                               "-rwxr-xr-x root/root",
		"./usr/lib/systemd/system/gmtun@.service":       "-rw-r--r-- root/root",
		"./usr/share/man/man8/gmtun.8.gz":               "-rw-r--r-- root/root",
		"./usr/share/man/man5/gmtun.toml.5.gz":          "-rw-r--r-- root/root",
		"./usr/share/bash-completion/completions/gmtun": "-rw-r--r-- root/root",
		"./usr/share/zsh/vendor-completions/_gmtun":     "-rw-r--r-- root/root",
		"./usr/share/doc/gmtun/README.md":               "-rw-r--r-- root/root",
		"./usr/share/doc/gmtun/OPERATIONS.md":           "-rw-r--r-- root/root",
		"./usr/share/doc/gmtun/copyright":               "-rw-r--r-- root/root",
		"./usr/share/doc/gmtun/examples/site-a.toml":    "-rw-r--r-- root/root",
		"./usr/share/doc/gmtun/examples/site-b.toml":    "-rw-r--r-- root/root",
		"./etc/gmtun/":                 "drwx------ root/root",
		"./etc/gmtun/gm0.toml.example": "-rw------- root/root",
	}
	got := map[string]string{}
	for l := range strings.Lines(dpkgDeb("-c", deb)) {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		got[f[len(f)-1]] = f[0] + " " + f[1]
		if f[1] != "root/root" {
			t.Errorf("%s is owned by %s, want root/root", f[len(f)-1], f[1])
		}
	}
	for path, mode := range want {
		if got[path] != mode {
			t.Errorf("package entry %s = %q, want %q", path, got[path], mode)
		}
	}
	for path := range got {
		if !strings.HasPrefix(path, "./usr/") && !strings.HasPrefix(path, "./etc/gmtun") && path != "./" && path != "./etc/" {
			t.Errorf("unexpected package entry %s", path)
		}
	}

	// Contents: extract and look inside.
	x := t.TempDir()
	if out, err := exec.Command("dpkg-deb", "-R", deb, x).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -R: %v\n%s", err, out)
	}
	unit, err := os.ReadFile(filepath.Join(x, "usr/lib/systemd/system/gmtun@.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "ExecStart=/usr/bin/gmtun ") || strings.Contains(string(unit), "/usr/local/") ||
		!strings.Contains(string(unit), "Documentation=file:///usr/share/doc/gmtun/OPERATIONS.md") {
		t.Errorf("the packaged unit does not run /usr/bin/gmtun or name the packaged OPERATIONS.md:\n%s", unit)
	}
	for _, s := range []string{"postinst", "prerm", "postrm"} {
		p := filepath.Join(x, "DEBIAN", s)
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("maintainer script %s: %v, mode %v", s, err, fi.Mode())
			continue
		}
		if out, err := exec.Command("sh", "-n", p).CombinedOutput(); err != nil {
			t.Errorf("sh -n %s: %v\n%s", s, err, out)
		}
		if b, _ := os.ReadFile(p); !strings.Contains(string(b), "DPKG_ROOT") {
			t.Errorf("%s ignores DPKG_ROOT: it would act on the host during an install into another root", s)
		}
	}
	md5 := exec.Command("md5sum", "--quiet", "-c", "DEBIAN/md5sums")
	md5.Dir = x
	if out, err := md5.CombinedOutput(); err != nil {
		t.Errorf("md5sums do not match the files: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("man"); err == nil {
		checkManRenders(t, filepath.Join(x, "usr/share/man/man8/gmtun.8.gz"), "8")
		checkManRenders(t, filepath.Join(x, "usr/share/man/man5/gmtun.toml.5.gz"), "5")
	} else {
		testenv.Missing(t, "man (man-db) to render the packaged man pages")
	}
	comp, _ := os.ReadFile(filepath.Join(x, "usr/share/bash-completion/completions/gmtun"))
	if string(comp) != bashCompletion(completionConfDir) {
		t.Error("the packaged bash completion is not what gmtun completion bash prints")
	}

	// Install, remove and purge in a scratch root.
	testenv.RequireRoot(t)
	root := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dpkg := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("dpkg", append([]string{"--root=" + root, "--force-script-chrootless", "--log=/dev/null"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("dpkg %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	files := func() []string {
		var out []string
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			rel, _ := filepath.Rel(root, p)
			if rel == "var" || strings.HasPrefix(rel, "var/") || rel == "." {
				return nil
			}
			out = append(out, rel)
			return nil
		})
		slices.Sort(out)
		return out
	}
	dpkg("-i", deb)
	if s := dpkg("-s", "gmtun"); !strings.Contains(s, "Status: install ok installed") {
		t.Errorf("after dpkg -i: %s", s)
	}
	fi, err := os.Stat(filepath.Join(root, "etc/gmtun"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("installed /etc/gmtun: %v %v, want mode 0700", err, fi.Mode())
	}
	if out, err := exec.Command(filepath.Join(root, "usr/bin/gmtun"), "version").CombinedOutput(); err != nil {
		t.Errorf("installed gmtun version: %v %s", err, out)
	}
	dpkg("-r", "gmtun")
	if got, want := files(), []string{"etc", "etc/gmtun", "etc/gmtun/gm0.toml.example"}; !slices.Equal(got, want) {
		t.Errorf("after dpkg -r the scratch root holds %q, want only the conffile %q", got, want)
	}
	if s := dpkg("-s", "gmtun"); !strings.Contains(s, "Status: deinstall ok config-files") {
		t.Errorf("after dpkg -r: %s", s)
	}
	dpkg("--purge", "gmtun")
	if got := files(); len(got) != 0 {
		t.Errorf("after dpkg --purge the scratch root still holds %q", got)
	}
}
