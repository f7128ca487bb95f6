package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fakeStatus returns a provider with a distinct, fully populated status
// and counts its calls.
func fakeStatus(calls *atomic.Int64) func() (Status, error) {
	hs := time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC)
	reload := hs.Add(time.Hour)
	return func() (Status, error) {
		n := calls.Add(1)
		return Status{
			Interface:  "gm0",
			PublicKey:  "cHVi",
			ListenPort: 51900,
			MTU:        1420,
			FwMark:     7,
			Suites:     []string{"sm4-gcm", "zuc-256"},
			Kernels:    []Kernel{{Primitive: "sm4", Selected: "AVX-512+GFNI", Available: []string{"AVX-512+GFNI", "generic"}}},
			Offload:    Offload{TUNVNetHdr: true, TUNTSO: true, TUNQueues: 2, UDPGSO4: true, UDPGRO6: true},
			ConfigFile: "/etc/gmtun/gm0.toml",
			Started:    hs.Add(-time.Hour),
			LastReload: &reload,
			Peers: []Peer{
				{Name: "site-b", PublicKey: "Yg==", Endpoint: "198.18.0.2:51900", AllowedIPs: []string{"198.19.0.2/32"},
					Suite: "sm4-gcm", LastHandshake: &hs, RxBytes: uint64(n), TxBytes: 2, RxPackets: 3, TxPackets: 4,
					PersistentKeepalive: 25, Roaming: true},
				{Name: "site-c", PublicKey: "Yw==", AllowedIPs: []string{}},
			},
			Drops:            map[string]uint64{"auth_failed": 5, "replay": 0},
			HandshakeInvalid: map[string]uint64{"screen": 1},
		}, nil
	}
}

// privateDir returns a path under t.TempDir for Listen to create (t.TempDir
// itself is group- and world-readable).
func privateDir(t *testing.T) string {
	return filepath.Join(t.TempDir(), "run")
}

func listen(t *testing.T, dir string, status func() (Status, error)) *Server {
	t.Helper()
	s, err := Listen(SocketPath(dir, "gm0"), status, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func query(t *testing.T, path string) (*Status, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return Query(ctx, path)
}

func TestRoundtrip(t *testing.T) {
	var calls atomic.Int64
	dir := filepath.Join(t.TempDir(), "run")
	s := listen(t, dir, fakeStatus(&calls))
	got, err := query(t, s.Path())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := fakeStatus(new(atomic.Int64))()
	// Times come back in the local zone with the same instant.
	if !got.Peers[0].LastHandshake.Equal(*want.Peers[0].LastHandshake) || !got.Started.Equal(want.Started) {
		t.Errorf("times changed: %v %v", got.Peers[0].LastHandshake, got.Started)
	}
	got.Peers[0].LastHandshake, want.Peers[0].LastHandshake = nil, nil
	got.LastReload, want.LastReload = nil, nil
	got.Started, want.Started = time.Time{}, time.Time{}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("status changed on the way:\ngot  %+v\nwant %+v", *got, want)
	}
	if calls.Load() != 1 {
		t.Errorf("provider called %d times, want 1", calls.Load())
	}
	// The provider is asked again on every request.
	got, err = query(t, s.Path())
	if err != nil || got.Peers[0].RxBytes != 2 {
		t.Errorf("second query: %v, %+v", err, got)
	}
}

// TestWireFormat pins the JSON field names that scripts rely on.
func TestWireFormat(t *testing.T) {
	b, err := json.Marshal(Response{Version: 1, Status: &Status{Peers: []Peer{{}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, field := range []string{`"version":1`, `"status":{`, `"interface":`, `"public_key":`, `"listen_port":`,
		`"mtu":`, `"fwmark":`, `"suites":`, `"kernels":`, `"offload":{"tun_vnet_hdr":false,"tun_tso":false,"tun_uso":false,"tun_queues":0,"udp_gso4":false,"udp_gso6":false,"udp_gro4":false,"udp_gro6":false}`,
		`"config_file":`, `"started":`, `"last_reload":null`, `"peers":[{"name":"","public_key":"","endpoint":"","allowed_ips":null,"suite":"","last_handshake":null,"handshakes":0,"initiation_retransmits":0,"response_retransmits":0,"rx_bytes":0,"tx_bytes":0,"rx_packets":0,"tx_packets":0,"persistent_keepalive":0,"roaming":false,"inbound_queue":0,"outbound_queue":0,"staged":0}]`,
		`"drops":`, `"handshake_invalid":`,
		`"buffers":{"max":0,"allocated":0,"free":0,"in_use":0,"waiting":0,"exhausted_ms":0,"waits":0,"staged":0,"encrypt_queue":0,"decrypt_queue":0,"handshake_queue":0}`,
		`"receive_errors":0`, `"goroutines":0`} {
		if !strings.Contains(s, field) {
			t.Errorf("encoding lacks %s:\n%s", field, s)
		}
	}
	if strings.Contains(s, `"error"`) || strings.Contains(s, "last_reload_error") {
		t.Errorf("empty optional fields are encoded: %s", s)
	}
}

// rawExchange sends req verbatim and returns the decoded response.
func rawExchange(t *testing.T, path, req string) Response {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	var resp Response
	if err := json.NewDecoder(c).Decode(&resp); err != nil {
		t.Fatalf("request %.40q: %v", req, err)
	}
	return resp
}

func TestProviderError(t *testing.T) {
	s := listen(t, privateDir(t), func() (Status, error) { return Status{}, errors.New("control: gm0 is starting") })
	_, err := query(t, s.Path())
	if want := "control: " + s.Path() + ": control: gm0 is starting"; err == nil || err.Error() != want {
		t.Errorf("Query = %v, want %q", err, want)
	}
}

func TestBadRequests(t *testing.T) {
	var calls atomic.Int64
	s := listen(t, privateDir(t), fakeStatus(&calls))
	for _, tc := range []struct{ req, want string }{
		{`{"op":"frob"}` + "\n", `control: unknown op "frob"`},
		{"not json\n", "control: malformed request: "},
		{strings.Repeat(" ", MaxRequestSize+10) + "\n", fmt.Sprintf("control: request longer than %d bytes", MaxRequestSize)},
	} {
		resp := rawExchange(t, s.Path(), tc.req)
		if resp.Version != ProtocolVersion || resp.Status != nil || !strings.HasPrefix(resp.Error, tc.want) {
			t.Errorf("request %.40q: response %+v, want error %q", tc.req, resp, tc.want)
		}
	}
	// A client that sends nothing and closes its write side gets an error too.
	c, err := net.Dial("unix", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	c.(*net.UnixConn).CloseWrite()
	var resp Response
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := json.NewDecoder(c).Decode(&resp); err != nil || !strings.HasPrefix(resp.Error, "control: reading the request") {
		t.Errorf("empty request: %v, %+v", err, resp)
	}
	c.Close()
	if calls.Load() != 0 {
		t.Errorf("the provider ran %d times for bad requests", calls.Load())
	}
}

func TestPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	s := listen(t, dir, fakeStatus(new(atomic.Int64)))
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %04o, want 0700", fi.Mode().Perm())
	}
	fi, err = os.Lstat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		t.Errorf("%s is %v, not a socket", s.Path(), fi.Mode())
	}
	if runtime.GOOS == "linux" && fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("socket mode %04o: accessible by group or others", fi.Mode().Perm())
	}
	// The umask is restored.
	old := syscall.Umask(0o022)
	syscall.Umask(old)
	if old == 0o077 {
		t.Errorf("process umask left at 077")
	}
}

func TestDirectoryChecks(t *testing.T) {
	base := t.TempDir()
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o755)
	_, err := Listen(SocketPath(open, "gm0"), fakeStatus(new(atomic.Int64)), nil)
	if want := fmt.Sprintf("control: directory %s is accessible by group or others (mode 0755); it must be 0700", open); err == nil || err.Error() != want {
		t.Errorf("open directory: %v, want %q", err, want)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	_, err = Listen(filepath.Join(file, "gm0.sock"), fakeStatus(new(atomic.Int64)), nil)
	if err == nil {
		t.Error("a regular file was accepted as the socket directory")
	}
	long := filepath.Join(base, strings.Repeat("x", maxSocketPath))
	if _, err := Listen(long, fakeStatus(new(atomic.Int64)), nil); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("overlong path: %v", err)
	}
}

func TestStaleAndBusySockets(t *testing.T) {
	dir := privateDir(t)
	os.Mkdir(dir, 0o700)
	path := SocketPath(dir, "gm0")

	// A socket nobody listens on any more (a crashed daemon) is replaced.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("stale socket not left behind: %v", err)
	}
	s, err := Listen(path, fakeStatus(new(atomic.Int64)), nil)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	if _, err := query(t, path); err != nil {
		t.Fatal(err)
	}

	// A socket that answers belongs to a running daemon.
	_, err = Listen(path, fakeStatus(new(atomic.Int64)), nil)
	if want := "control: " + path + " is in use: another gmtun is running for this interface"; err == nil || err.Error() != want {
		t.Errorf("busy socket: %v, want %q", err, want)
	}
	if _, err := query(t, path); err != nil {
		t.Errorf("the running server broke: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Close left the socket: %v", err)
	}

	// Something that is not a socket is never removed.
	os.WriteFile(path, []byte("keep"), 0o600)
	_, err = Listen(path, fakeStatus(new(atomic.Int64)), nil)
	if want := "control: " + path + " exists and is not a socket"; err == nil || err.Error() != want {
		t.Errorf("regular file: %v, want %q", err, want)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep" {
		t.Error("the regular file was changed")
	}
}

// Close must not remove a socket that a newer daemon put in place.
func TestCloseKeepsReplacedSocket(t *testing.T) {
	path := SocketPath(privateDir(t), "gm0")
	s, err := Listen(path, fakeStatus(new(atomic.Int64)), nil)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	s2, err := Listen(path, fakeStatus(new(atomic.Int64)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	s.Close()
	if _, err := query(t, path); err != nil {
		t.Errorf("closing the old server removed the new socket: %v", err)
	}
}

func TestInterfaces(t *testing.T) {
	dir := privateDir(t)
	listen(t, dir, fakeStatus(new(atomic.Int64)))
	s, err := Listen(SocketPath(dir, "gm1"), fakeStatus(new(atomic.Int64)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	os.WriteFile(filepath.Join(dir, "notes.sock"), nil, 0o600) // not a socket
	os.WriteFile(filepath.Join(dir, "gm2"), nil, 0o600)
	got, err := Interfaces(dir)
	if err != nil || !reflect.DeepEqual(got, []string{"gm0", "gm1"}) {
		t.Errorf("Interfaces = %q, %v; want [gm0 gm1]", got, err)
	}
	got, err = Interfaces(filepath.Join(dir, "absent"))
	if err != nil || len(got) != 0 {
		t.Errorf("missing directory: %q, %v", got, err)
	}
}

func TestQueryErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := query(t, SocketPath(dir, "gm9"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing socket: %v, want fs.ErrNotExist", err)
	}

	// A server that accepts but never answers: the context ends the wait.
	path := SocketPath(dir, "hang")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Query(ctx, path)
	if err == nil || time.Since(start) > 3*time.Second {
		t.Errorf("hanging server: %v after %v", err, time.Since(start))
	}
}

func TestConcurrentQueries(t *testing.T) {
	var calls atomic.Int64
	s := listen(t, privateDir(t), fakeStatus(&calls))
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st, err := Query(ctx, s.Path())
			if err == nil && st.Interface != "gm0" {
				err = fmt.Errorf("interface %q", st.Interface)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if calls.Load() != n {
		t.Errorf("provider called %d times, want %d", calls.Load(), n)
	}
	// Close waits for nothing in flight and then refuses new clients.
	s.Close()
	if _, err := query(t, s.Path()); err == nil {
		t.Error("query after Close succeeded")
	}
}

func TestReloadAndStop(t *testing.T) {
	dir := privateDir(t)
	var reloads, stops atomic.Int64
	fail := atomic.Bool{}
	s, err := Serve(SocketPath(dir, "gm0"), Handlers{
		Status: fakeStatus(new(atomic.Int64)),
		Reload: func() (ReloadResult, error) {
			reloads.Add(1)
			time.Sleep(50 * time.Millisecond) // the client waits for the answer
			if fail.Load() {
				return ReloadResult{Error: "gm0.toml:3: interface.mtu: must be at least 1280", ConfigError: true}, nil
			}
			return ReloadResult{RestartNeeded: []string{"interface.listen_port"}, Added: []string{"site-c"}}, nil
		},
		Stop: func() error { stops.Add(1); return nil },
	}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	r, err := Reload(ctx, s.Path())
	if err != nil || r.Error != "" || !reflect.DeepEqual(r.RestartNeeded, []string{"interface.listen_port"}) ||
		!reflect.DeepEqual(r.Added, []string{"site-c"}) {
		t.Fatalf("Reload = %+v, %v", r, err)
	}
	fail.Store(true)
	r, err = Reload(ctx, s.Path())
	if err != nil || !r.ConfigError || !strings.Contains(r.Error, "gm0.toml:3: interface.mtu") {
		t.Fatalf("failed Reload = %+v, %v; want the daemon's config error", r, err)
	}
	if reloads.Load() != 2 {
		t.Errorf("reload handler called %d times, want 2", reloads.Load())
	}

	// Stop waits until the socket is gone: here the handler only counts,
	// and the server is closed 100 ms later.
	go func() { time.Sleep(100 * time.Millisecond); s.Close() }()
	start := time.Now()
	if err := Stop(ctx, s.Path()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 90*time.Millisecond {
		t.Errorf("Stop returned after %v, before the socket was removed", el)
	}
	if _, err := os.Lstat(s.Path()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket still there after Stop: %v", err)
	}
	if stops.Load() != 1 {
		t.Errorf("stop handler called %d times, want 1", stops.Load())
	}
}

func TestStopTimesOut(t *testing.T) {
	dir := privateDir(t)
	s, err := Serve(SocketPath(dir, "gm0"), Handlers{Status: fakeStatus(new(atomic.Int64)), Stop: func() error { return nil }}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := Stop(ctx, s.Path()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop on a daemon that never goes away = %v, want a deadline error", err)
	}
}

func TestUnsupportedOps(t *testing.T) {
	dir := privateDir(t)
	s := listen(t, dir, fakeStatus(new(atomic.Int64))) // no Reload, no Stop
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := Reload(ctx, s.Path()); err == nil || !strings.Contains(err.Error(), `op "reload" is not supported`) {
		t.Errorf("Reload without a handler = %v", err)
	}
	if err := Stop(ctx, s.Path()); err == nil || !strings.Contains(err.Error(), `op "stop" is not supported`) {
		t.Errorf("Stop without a handler = %v", err)
	}
	if _, err := Serve(SocketPath(dir, "gm1"), Handlers{}, nil); err == nil {
		t.Error("Serve without a status handler succeeded")
	}
}

func TestSockets(t *testing.T) {
	base := privateDir(t)
	var servers []*Server
	for _, p := range []string{
		SocketPath(base, "gm2"),                          // dir/IFACE.sock (--socket-dir)
		SocketPath(filepath.Join(base, "site"), "gm1"),   // dir/NAME/IFACE.sock (systemd layout)
		SocketPath(filepath.Join(base, "office"), "gm0"), // another instance
	} {
		s, err := Listen(p, fakeStatus(new(atomic.Int64)), nil)
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	// The instance directories are private; a missing parent is created
	// 0755 like systemd's (checked below).
	if fi, err := os.Stat(filepath.Join(base, "site")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("instance directory: %v, %v", fi.Mode(), err)
	}
	fresh := filepath.Join(t.TempDir(), "run", "gm5")
	s, err := Listen(SocketPath(fresh, "gm5"), fakeStatus(new(atomic.Int64)), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if fi, err := os.Stat(filepath.Dir(fresh)); err != nil || fi.Mode().Perm()&0o700 != 0o700 || fi.Mode().Perm()&0o022 != 0 {
		t.Errorf("created parent: %v, %v; want 0755 less the umask", fi.Mode(), err)
	}
	got, err := Sockets(base)
	want := []string{
		SocketPath(filepath.Join(base, "office"), "gm0"),
		SocketPath(filepath.Join(base, "site"), "gm1"),
		SocketPath(base, "gm2"),
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Sockets = %q, %v\nwant %q", got, err, want)
	}
	if n := SocketInterface(got[1]); n != "gm1" {
		t.Errorf("SocketInterface(%s) = %q", got[1], n)
	}
	if got, err := Sockets(filepath.Join(base, "absent")); err != nil || len(got) != 0 {
		t.Errorf("missing dir: %q, %v", got, err)
	}
}

// TestSocketsPermission: subdirectories another user's daemon keeps
// private are reported as permission denied when nothing else is found.
func TestSocketsPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory; the check needs an unprivileged user")
	}
	base := privateDir(t)
	if err := os.MkdirAll(filepath.Join(base, "gm0"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(base, "gm0"), 0o000)
	defer os.Chmod(filepath.Join(base, "gm0"), 0o700)
	if _, err := Sockets(base); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Sockets over an unreadable instance directory = %v, want permission denied", err)
	}
}
