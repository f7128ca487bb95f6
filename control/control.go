// Package control is gmtun's control socket: the daemon (`gmtun up`) serves
// its status on a unix stream socket, `gmtun show` queries it, and
// `gmtun reload` and `gmtun down` ask the daemon to reload its
// configuration or to stop.
//
// # Protocol
//
// One request per connection. The client sends one JSON object on one line,
//
//	{"op":"status"}   {"op":"reload"}   {"op":"stop"}
//
// and the server answers with one JSON object on one line and closes the
// connection:
//
//	{"version":1,"status":{…Status…}}
//	{"version":1,"reload":{…ReloadResult…}}
//	{"version":1,"stopping":true}
//	{"version":1,"error":"control: unknown op \"frob\""}
//
// A reload is answered once the daemon has applied (or refused) the new
// configuration; a stop is answered at once, and the socket disappears when
// the daemon has finished shutting down (Stop waits for that).
//
// Requests are at most MaxRequestSize bytes; each connection must complete
// within the server's timeout.
//
// # Access
//
// The socket lives at DIR/IFACE.sock; the daemon's default DIR is
// /run/gmtun/NAME for the configuration /etc/gmtun/NAME.toml (systemd's
// RuntimeDirectory=gmtun/%i), and Sockets finds sockets one level below a
// base directory. The socket's directory must be private (mode 0700, owned
// by the daemon's user): Listen creates it so (its parent with mode 0755,
// as systemd does), and refuses a directory that group or others can
// enter. The socket itself is created under umask 077. On Linux the server
// also checks the peer credentials (SO_PEERCRED) of every connection and
// answers only root and its own user. A socket left behind by a daemon that
// died is detected by dialing it (connection refused) and replaced; a
// socket that answers belongs to a running daemon and Listen fails.
package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultDir is the directory of the control sockets.
const DefaultDir = "/run/gmtun"

// DirEnv names the environment variable that replaces DefaultDir for the
// gmtun command (tests, staging) and for tools that look for its sockets.
const DirEnv = "GMTUN_SOCKET_DIR"

// ProtocolVersion is the "version" of every response.
const ProtocolVersion = 1

// The operations of a Request.
const (
	// OpStatus asks for the interface's Status.
	OpStatus = "status"
	// OpReload asks the daemon to re-read its configuration file and
	// answers with the ReloadResult once it is applied or refused.
	OpReload = "reload"
	// OpStop asks the daemon to shut down; it answers at once.
	OpStop = "stop"
)

// MaxRequestSize bounds a request line.
const MaxRequestSize = 4096

// socketSuffix ends every control socket name.
const socketSuffix = ".sock"

// maxConns bounds the connections served at once; more wait in the
// kernel's accept queue.
const maxConns = 8

// connTimeout bounds one connection on the server side.
const connTimeout = 5 * time.Second

// Request is what the client sends.
type Request struct {
	// Op is the operation: OpStatus, OpReload or OpStop.
	Op string `json:"op"`
}

// Response is what the server answers.
type Response struct {
	// Version is ProtocolVersion.
	Version int `json:"version"`
	// Status is set when a status request succeeded.
	Status *Status `json:"status,omitempty"`
	// Reload is set when a reload request was carried out, whether the
	// reload succeeded or not (see ReloadResult.Error).
	Reload *ReloadResult `json:"reload,omitempty"`
	// Stopping is true when a stop request was accepted.
	Stopping bool `json:"stopping,omitempty"`
	// Error is set when the request failed.
	Error string `json:"error,omitempty"`
}

// ReloadResult is the daemon's answer to OpReload.
type ReloadResult struct {
	// Error is why the reload failed, "" if it succeeded. When set, the
	// running configuration was kept as it was (except for route changes
	// that failed half-way, which Error names).
	Error string `json:"error,omitempty"`
	// ConfigError is true when the file itself was invalid (Error is
	// then one line FILE:LINE: key: …).
	ConfigError bool `json:"config_error,omitempty"`
	// RestartNeeded lists the settings (e.g. "interface.listen_port")
	// that differ between the file and the running daemon and only a
	// restart applies.
	RestartNeeded []string `json:"restart_needed,omitempty"`
	// Added, Removed and Updated name the peers the reload changed.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Updated []string `json:"updated,omitempty"`
	// Warnings are the configuration's warnings (as `gmtun check`'s).
	Warnings []string `json:"warnings,omitempty"`
}

// Handlers are what a Server serves. Status is required; a nil Reload or
// Stop answers that operation with an error.
type Handlers struct {
	// Status returns the interface's state; an error is sent to the
	// client (for example while the daemon is still starting).
	Status func() (Status, error)
	// Reload re-reads and applies the configuration and returns when
	// done. An error means the reload could not be attempted at all (the
	// daemon is stopping); a failed reload is a ReloadResult with Error.
	Reload func() (ReloadResult, error)
	// Stop starts the shutdown and returns at once.
	Stop func() error
}

// SocketPath returns the control socket of the interface iface in dir.
func SocketPath(dir, iface string) string {
	return filepath.Join(dir, iface+socketSuffix)
}

// Sockets returns the control sockets in dir and in its subdirectories
// (one level: dir/NAME/IFACE.sock, the daemon's default layout), sorted by
// interface name and then path. A missing dir is not an error. A
// subdirectory this user may not read (another user's instance) is
// skipped, but if that leaves nothing the error is returned (wrapping
// fs.ErrPermission), so that a non-root caller is told to be root rather
// than that nothing runs.
func Sockets(dir string) ([]string, error) {
	top, err := socketsIn(dir)
	if err != nil {
		return nil, err
	}
	var denied error
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			sub, err := socketsIn(filepath.Join(dir, e.Name()))
			if err == nil {
				top = append(top, sub...)
			} else if errors.Is(err, fs.ErrPermission) && denied == nil {
				denied = err
			}
		}
	}
	if len(top) == 0 && denied != nil {
		return nil, denied
	}
	sort.SliceStable(top, func(i, j int) bool {
		a, b := filepath.Base(top[i]), filepath.Base(top[j])
		if a != b {
			return a < b
		}
		return top[i] < top[j]
	})
	return top, nil
}

// SocketInterface returns the interface name of a control socket path.
func SocketInterface(path string) string {
	return strings.TrimSuffix(filepath.Base(path), socketSuffix)
}

// socketsIn lists the socket paths directly in dir.
func socketsIn(dir string) ([]string, error) {
	names, err := Interfaces(dir)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = SocketPath(dir, n)
	}
	return paths, nil
}

// Interfaces returns the interface names that have a socket in dir, sorted.
// A missing dir means no interface is running and is not an error.
func Interfaces(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("control: %w", err)
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), socketSuffix)
		if ok && name != "" && e.Type() == fs.ModeSocket {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Server serves Status (and reload and stop requests) on a control
// socket. Create it with Listen or Serve.
type Server struct {
	l        *net.UnixListener
	path     string
	info     fs.FileInfo // the socket file as created, to remove only ours
	h        Handlers
	logf     func(format string, args ...any)
	sem      chan struct{}
	wg       sync.WaitGroup
	closeMu  sync.Mutex
	closed   bool
	closeErr error
}

// Listen creates the control socket at path and serves status (called once
// per request, from any goroutine) until Close. An error from status is
// sent to the client as the response's error (for example while the daemon
// is still starting). The directory of path is
// created with mode 0700 if missing; an existing one must be a directory
// owned by this user with no group or other permissions. logf receives
// errors of individual connections; nil discards them.
func Listen(path string, status func() (Status, error), logf func(format string, args ...any)) (*Server, error) {
	return Serve(path, Handlers{Status: status}, logf)
}

// Serve is Listen with every operation's handler: h.Status answers
// OpStatus, h.Reload OpReload and h.Stop OpStop. The handlers are called
// from any goroutine, one call per request.
func Serve(path string, h Handlers, logf func(format string, args ...any)) (*Server, error) {
	if h.Status == nil {
		return nil, errors.New("control: Serve without a status handler")
	}
	if len(path) >= maxSocketPath {
		return nil, fmt.Errorf("control: socket path %s is too long (%d bytes, at most %d)", path, len(path), maxSocketPath-1)
	}
	if err := prepareDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := removeStale(path); err != nil {
		return nil, err
	}
	var l *net.UnixListener
	err := withPrivateUmask(func() error {
		var err error
		l, err = net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("control: listen on %s: %w", path, err)
	}
	l.SetUnlinkOnClose(false) // Close removes the file only if it is still ours
	info, err := os.Lstat(path)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("control: %w", err)
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s := &Server{l: l, path: path, info: info, h: h, logf: logf, sem: make(chan struct{}, maxConns)}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Path returns the socket path.
func (s *Server) Path() string { return s.path }

// Close stops accepting, waits for the connections being served and
// removes the socket file (unless another process replaced it). It is
// idempotent.
func (s *Server) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return s.closeErr
	}
	s.closed = true
	err := s.l.Close()
	s.wg.Wait()
	if fi, serr := os.Lstat(s.path); serr == nil && os.SameFile(fi, s.info) {
		if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	if err != nil {
		s.closeErr = fmt.Errorf("control: close %s: %w", s.path, err)
	}
	return s.closeErr
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		conn, err := s.l.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// EMFILE and friends: back off instead of spinning.
			s.logf("control: accept: %v", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		s.sem <- struct{}{}
		s.wg.Add(1)
		go func() {
			defer func() { <-s.sem; s.wg.Done() }()
			s.handle(conn)
		}()
	}
}

func (s *Server) handle(conn *net.UnixConn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(connTimeout))
	resp := Response{Version: ProtocolVersion}
	if err := checkPeer(conn); err != nil {
		resp.Error = err.Error()
		s.logf("%v", err)
	} else if req, err := readRequest(conn); err != nil {
		resp.Error = err.Error()
	} else {
		switch {
		case req.Op == OpStatus:
			if st, err := s.h.Status(); err != nil {
				resp.Error = err.Error()
			} else {
				resp.Status = &st
			}
		case req.Op == OpReload && s.h.Reload != nil:
			if r, err := s.h.Reload(); err != nil {
				resp.Error = err.Error()
			} else {
				resp.Reload = &r
			}
			// A reload may take longer than a status: the answer gets
			// a fresh deadline.
			conn.SetDeadline(time.Now().Add(connTimeout))
		case req.Op == OpStop && s.h.Stop != nil:
			if err := s.h.Stop(); err != nil {
				resp.Error = err.Error()
			} else {
				resp.Stopping = true
			}
		case req.Op == OpReload || req.Op == OpStop:
			resp.Error = fmt.Sprintf("control: op %q is not supported by this daemon", req.Op)
		default:
			resp.Error = fmt.Sprintf("control: unknown op %q", req.Op)
		}
	}
	b, err := json.Marshal(&resp)
	if err != nil { // unreachable: Status has only marshalable fields
		s.logf("control: encoding the response: %v", err)
		return
	}
	if _, err := conn.Write(append(b, '\n')); err != nil {
		s.logf("control: writing the response: %v", err)
	}
}

func readRequest(conn net.Conn) (*Request, error) {
	// The buffer holds a whole request: ReadSlice fails when it fills, and
	// a request of up to MaxRequestSize bytes (newline included) is valid.
	r := bufio.NewReaderSize(&limitedReader{r: conn, n: MaxRequestSize + 1}, MaxRequestSize)
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) || len(line) > MaxRequestSize {
			return nil, fmt.Errorf("control: request longer than %d bytes", MaxRequestSize)
		}
		return nil, fmt.Errorf("control: reading the request: %w", err)
	}
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, fmt.Errorf("control: malformed request: %w", err)
	}
	return &req, nil
}

// limitedReader is io.LimitedReader returning an error (not EOF) at the
// limit, so that an overlong request is reported as such.
type limitedReader struct {
	r net.Conn
	n int
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("control: request longer than %d bytes", MaxRequestSize)
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= n
	return n, err
}

// Query asks the daemon serving the socket at path for its status. The
// context bounds the whole exchange. A missing socket gives an error
// wrapping fs.ErrNotExist; a socket nobody serves, one wrapping
// syscall.ECONNREFUSED; missing permissions, fs.ErrPermission.
func Query(ctx context.Context, path string) (*Status, error) {
	resp, err := roundTrip(ctx, path, OpStatus)
	if err != nil {
		return nil, err
	}
	if resp.Status == nil {
		return nil, fmt.Errorf("control: %s answered without a status", path)
	}
	return resp.Status, nil
}

// Reload asks the daemon serving path to reload its configuration and
// waits for the outcome, bounded by ctx. The error is for the exchange
// (errors as for Query) or a daemon that could not attempt the reload; a
// reload that failed is a result with Error set.
func Reload(ctx context.Context, path string) (*ReloadResult, error) {
	resp, err := roundTrip(ctx, path, OpReload)
	if err != nil {
		return nil, err
	}
	if resp.Reload == nil {
		return nil, fmt.Errorf("control: %s answered without a reload result", path)
	}
	return resp.Reload, nil
}

// Stop asks the daemon serving path to shut down and waits, bounded by
// ctx, until its socket is gone: the daemon removes it as the last step of
// its shutdown, once the interface, its routes and its addresses are gone.
func Stop(ctx context.Context, path string) error {
	resp, err := roundTrip(ctx, path, OpStop)
	if err != nil {
		return err
	}
	if !resp.Stopping {
		return fmt.Errorf("control: %s did not accept the stop request", path)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil // already gone
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		now, err := os.Lstat(path)
		if err != nil || !os.SameFile(fi, now) {
			return nil // removed (or replaced by a new daemon)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("control: %s: still shutting down: %w", path, ctx.Err())
		case <-tick.C:
		}
	}
}

// roundTrip sends one request for op and returns the decoded response,
// turning a response error into an error.
func roundTrip(ctx context.Context, path, op string) (*Response, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("control: %w", err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	b, _ := json.Marshal(Request{Op: op})
	if _, err := c.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("control: sending the request to %s: %w", path, err)
	}
	var resp Response
	dec := json.NewDecoder(bufio.NewReader(c))
	if err := dec.Decode(&resp); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("control: %s: %w", path, ctx.Err())
		}
		return nil, fmt.Errorf("control: reading the response from %s: %w", path, err)
	}
	if resp.Version != ProtocolVersion {
		return nil, fmt.Errorf("control: %s speaks protocol version %d, want %d", path, resp.Version, ProtocolVersion)
	}
	if resp.Error != "" {
		return nil, fmt.Errorf("control: %s: %s", path, resp.Error)
	}
	return &resp, nil
}

// prepareDir creates dir with mode 0700, or checks that an existing dir
// is private to this user.
func prepareDir(dir string) error {
	// The parent is shared by every instance (/run/gmtun): created like
	// systemd creates a RuntimeDirectory='s parents, 0755.
	if parent := filepath.Dir(dir); parent != dir {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return fmt.Errorf("control: create %s: %w", parent, err)
		}
	}
	err := os.Mkdir(dir, 0o700)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("control: create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("control: %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("control: directory %s is accessible by group or others (mode %04o); it must be 0700", dir, fi.Mode().Perm())
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Geteuid() {
		return fmt.Errorf("control: directory %s is owned by uid %d, not by this user (uid %d)", dir, uid, os.Geteuid())
	}
	return nil
}

// removeStale removes a socket at path that nobody serves.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("control: %s exists and is not a socket", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("control: %s is in use: another gmtun is running for this interface", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("control: probing %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("control: removing stale socket: %w", err)
	}
	return nil
}
