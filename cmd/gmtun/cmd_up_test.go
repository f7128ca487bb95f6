package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gmtun/gmtun/config"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/internal/testenv"
	"github.com/gmtun/gmtun/tunnel/iface"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// upFixture writes a valid configuration (and its key files) into a fresh
// directory and returns the configuration path. extra is appended to the
// [interface] section.
func upFixture(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	key, err := handshake.GeneratePrivateKey(&seedReader{next: 3})
	if err != nil {
		t.Fatal(err)
	}
	peer, err := handshake.GeneratePrivateKey(&seedReader{next: 90})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gm9.key"), []byte(key.Encode()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`[interface]
private_key_file = "gm9.key"
listen_port = 51999
address = ["198.19.9.1/24"]
%s
[[peer]]
name = "site-b"
public_key = %q
endpoint = "198.18.9.2:51999"
allowed_ips = ["198.19.9.2/32"]
`, extra, peer.Public())
	path := filepath.Join(dir, "gm9.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakePlatform records the TUN requests and fails each with the next error.
type fakePlatform struct {
	errs []error
	reqs []netio.TUNConfig
}

func (f *fakePlatform) platform() platform {
	return platform{
		openTUN: func(c netio.TUNConfig) (*netio.TUNDevice, error) {
			f.reqs = append(f.reqs, c)
			err := f.errs[0]
			if len(f.errs) > 1 {
				f.errs = f.errs[1:]
			}
			return nil, fmt.Errorf("netio: open TUN %q queue 0: %w", c.Name, err)
		},
		signals: func(chan<- os.Signal) func() { return func() {} },
	}
}

func runUpWith(t *testing.T, path string, plat platform) result {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := runUp(e, upOptions{configPath: path, socketDir: filepath.Join(t.TempDir(), "run")}, plat)
	return result{code, out.String(), errb.String()}
}

func TestUpUsage(t *testing.T) {
	wantFailure(t, gmtun("up"), exitUsage, "up: give NAME (for /etc/gmtun/NAME.toml) or --config FILE")
	wantFailure(t, gmtun("up", "--config", "x.toml", "gm0"), exitUsage, "up: give NAME or --config FILE, not both")
	wantFailure(t, gmtun("up", "gm0", "gm1"), exitUsage, `up: unexpected argument "gm1"; give one NAME or --config FILE`)
	wantFailure(t, gmtun("up", "gm0.toml"), exitUsage,
		`up: "gm0.toml" ends in .toml; give NAME for /etc/gmtun/NAME.toml, or the file with --config FILE`)
	wantFailure(t, gmtun("up", "./gm0"), exitUsage,
		`up: "./gm0" is a path; give a file with --config FILE, or NAME for /etc/gmtun/NAME.toml`)
	r := gmtun("up", "--help")
	for _, want := range []string{"-config FILE", "-socket-dir DIR", "SIGHUP", "SIGTERM", "READY=1", "Exit codes:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("up --help lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestUpBadConfig(t *testing.T) {
	path := upFixture(t, "")
	b, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(b, []byte("listen_port = 51999"), []byte("listen_port = 70000"), 1), 0o600)
	fp := &fakePlatform{errs: []error{errors.New("must not be called")}}
	r := runUpWith(t, path, fp.platform())
	// The config package's sentence, passed on as is.
	_, cerr := config.Load(path)
	if cerr == nil || !strings.HasPrefix(cerr.Error(), path+`:3: key "interface.listen_port": must be in 1..65535, got 70000`) {
		t.Fatalf("config.Load: %v", cerr)
	}
	wantFailure(t, r, exitConfig, cerr.Error())
	if len(fp.reqs) != 0 {
		t.Errorf("a TUN was opened for an invalid configuration: %+v", fp.reqs)
	}

	missing := filepath.Join(t.TempDir(), "absent.toml")
	wantFailure(t, gmtun("up", "--config", missing), exitConfig,
		missing+": cannot open the configuration: no such file or directory")
}

func TestUpTUNErrors(t *testing.T) {
	path := upFixture(t, "")
	for _, tc := range []struct {
		errs    []error
		want    string
		retried bool
	}{
		{[]error{&fs.PathError{Op: "open", Path: "/dev/net/tun", Err: syscall.ENOENT}},
			"up: cannot create TUN interface gm9: /dev/net/tun does not exist (load the tun kernel module)", false},
		{[]error{syscall.EPERM},
			"up: cannot create TUN interface gm9: permission denied (run as root or with CAP_NET_ADMIN)", false},
		{[]error{syscall.EACCES},
			"up: cannot create TUN interface gm9: permission denied (run as root or with CAP_NET_ADMIN)", false},
		{[]error{syscall.EINVAL, syscall.EBUSY},
			"up: cannot create TUN interface gm9: the name is taken by another device", true},
		{[]error{syscall.EINVAL, syscall.EIO},
			`up: cannot create TUN interface gm9: netio: open TUN "gm9" queue 0: input/output error`, true},
	} {
		fp := &fakePlatform{errs: tc.errs}
		wantFailure(t, runUpWith(t, path, fp.platform()), exitFailure, tc.want)
		if len(fp.reqs) == 0 {
			t.Fatal("no TUN requested")
		}
		first := fp.reqs[0]
		if first.Name != "gm9" || first.MTU != config.DefaultMTU || first.Queues != runtime.NumCPU() {
			t.Errorf("TUN request %+v, want gm9, MTU %d, %d queues", first, config.DefaultMTU, runtime.NumCPU())
		}
		// A multi-queue failure other than "no device"/"no permission"
		// is retried once with a single queue.
		wantReqs := 1
		if tc.retried && runtime.NumCPU() > 1 {
			wantReqs = 2
		}
		if len(fp.reqs) != wantReqs || (wantReqs == 2 && fp.reqs[1].Queues != 1) {
			t.Errorf("%v: TUN requests %+v", tc.errs, fp.reqs)
		}
	}
}

// TestUpWithoutPrivileges runs the real binary without CAP_NET_ADMIN: as
// an ordinary user directly, or, as root, under setpriv as nobody.
func TestUpWithoutPrivileges(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	testenv.RequireTUN(t)
	path := upFixture(t, "")
	var cmd *exec.Cmd
	bin := filepath.Join(t.TempDir(), "gmtun")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			testenv.Missing(t, "root without setpriv (util-linux) cannot drop privileges")
		}
		// nobody must own the key file and reach the files.
		dir := filepath.Dir(path)
		for _, p := range []string{dir, filepath.Join(dir, "gm9.key"), path} {
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
		// t.TempDir's parent is private to root; open it (it is ours).
		if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for d := filepath.Dir(dir); d != "/"; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
				t.Skipf("nobody cannot reach %s", d)
			}
		}
		os.Chmod(bin, 0o755)
		cmd = exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
			bin, "up", "--config", path, "--socket-dir", filepath.Join(dir, "run"))
	} else {
		cmd = exec.Command(bin, "up", "--config", path, "--socket-dir", filepath.Join(t.TempDir(), "run"))
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("gmtun up without privileges did not exit")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitFailure {
		t.Errorf("exit code %d, want %d", code, exitFailure)
	}
	want := "gmtun: up: cannot create TUN interface gm9: permission denied (run as root or with CAP_NET_ADMIN)\n"
	if stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("stdout %q, stderr %q\nwant stderr %q", stdout.String(), stderr.String(), want)
	}
}

func TestBindError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("tunnel: opening the bind: %w", syscall.EADDRINUSE), "up: cannot listen on UDP port 51900: the port is in use"},
		{fmt.Errorf("tunnel: opening the bind: %w", syscall.EACCES), "up: cannot listen on UDP port 51900: permission denied (ports below 1024 need CAP_NET_BIND_SERVICE)"},
		{errors.New("boom"), "up: cannot listen on UDP port 51900: boom"},
	} {
		if got := bindError(51900, tc.err).Error(); got != tc.want {
			t.Errorf("bindError(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func pfx(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, x := range s {
		out[i] = netip.MustParsePrefix(x)
	}
	return out
}

func TestDiffRoutes(t *testing.T) {
	have := map[netip.Prefix]*iface.Applied{}
	for _, p := range pfx("198.19.0.2/32", "198.19.0.3/32", "fd00:19::/64") {
		have[p] = nil
	}
	add, del := diffRoutes(have, pfx("fd00:19::/64", "198.19.0.4/32", "10.0.0.0/8", "198.19.0.2/32"))
	if !slices.Equal(add, pfx("10.0.0.0/8", "198.19.0.4/32")) {
		t.Errorf("add = %v", add)
	}
	if !slices.Equal(del, pfx("198.19.0.3/32")) {
		t.Errorf("del = %v", del)
	}
	add, del = diffRoutes(have, nil)
	if len(add) != 0 || !slices.Equal(del, pfx("198.19.0.2/32", "198.19.0.3/32", "fd00:19::/64")) {
		t.Errorf("removing everything: add %v, del %v", add, del)
	}
}

func TestWantRoutes(t *testing.T) {
	cfg := &config.Config{Peers: []config.Peer{
		{AllowedIPs: pfx("198.19.0.2/32")}, {AllowedIPs: pfx("fd00:19::/64", "10.1.0.0/16")},
	}}
	if got := wantRoutes(cfg); !slices.Equal(got, pfx("198.19.0.2/32", "fd00:19::/64", "10.1.0.0/16")) {
		t.Errorf("wantRoutes = %v", got)
	}
	cfg.Interface.Table.Off = true
	if got := wantRoutes(cfg); len(got) != 0 {
		t.Errorf("table off: wantRoutes = %v", got)
	}
	if routeTable(config.RouteTable{ID: 100}) != 100 || routeTable(config.RouteTable{}) != 0 {
		t.Error("routeTable")
	}
}

func TestRestartKeys(t *testing.T) {
	k1, _ := handshake.GeneratePrivateKey(&seedReader{next: 1})
	k2, _ := handshake.GeneratePrivateKey(&seedReader{next: 2})
	base := func() *config.Config {
		return &config.Config{Interface: config.Interface{Name: "gm0", PrivateKey: k1, ID: "id", ListenPort: 1,
			MTU: 1420, Addresses: pfx("198.19.0.1/24"), LogLevel: slog.LevelInfo}}
	}
	for _, tc := range []struct {
		change   func(*config.Interface)
		keys     string
		identity bool
	}{
		{func(*config.Interface) {}, "", false},
		{func(i *config.Interface) { i.LogLevel = slog.LevelDebug }, "", false},
		{func(i *config.Interface) { i.Name = "gm1" }, "interface.name", true},
		{func(i *config.Interface) { i.PrivateKey = k2 }, "interface.private_key_file", true},
		{func(i *config.Interface) { i.ID = "other" }, "interface.id", true},
		{func(i *config.Interface) { i.ListenPort = 2; i.MTU = 1400 }, "interface.listen_port interface.mtu", false},
		{func(i *config.Interface) { i.Addresses = pfx("198.19.0.9/24") }, "interface.address", false},
		{func(i *config.Interface) { i.Table.ID = 7; i.FwMark = 1 }, "interface.table interface.fwmark", false},
	} {
		next := base()
		tc.change(&next.Interface)
		keys, identity := restartKeys(base(), next)
		if strings.Join(keys, " ") != tc.keys || identity != tc.identity {
			t.Errorf("restartKeys = %q, %v; want %q, %v", keys, identity, tc.keys, tc.identity)
		}
	}
}

func TestPeerChanges(t *testing.T) {
	keys := make([]*handshake.PublicKey, 4)
	for i := range keys {
		k, _ := handshake.GeneratePrivateKey(&seedReader{next: byte(10 * (i + 1))})
		keys[i] = k.Public()
	}
	old := []config.Peer{
		{Name: "a", PublicKey: keys[0], AllowedIPs: pfx("198.19.0.2/32")},
		{Name: "b", PublicKey: keys[1]},
		{Name: "c", PublicKey: keys[2], Roaming: true},
	}
	next := []config.Peer{
		{Name: "c", PublicKey: keys[2], Roaming: true},     // unchanged (moved)
		{Name: "a", PublicKey: keys[0], AllowedIPs: pfx()}, // changed
		{Name: "d", PublicKey: keys[3]},                    // added
	}
	added, removed, changed := peerChanges(old, next)
	if !slices.Equal(added, []string{"d"}) || !slices.Equal(removed, []string{"b"}) || !slices.Equal(changed, []string{"a"}) {
		t.Errorf("peerChanges = %v, %v, %v", added, removed, changed)
	}
	psk := [32]byte{1}
	p, q := old[1], old[1]
	q.PresharedKey = &psk
	if samePeer(&p, &q) {
		t.Error("a new preshared key went unnoticed")
	}
}
