// Package control is gmtun's control socket: the daemon (`gmtun up`) serves
// its status on a unix stream socket, and `gmtun show` queries it.
//
// # Protocol
//
// One request per connection. The client sends one JSON object on one line,
//
//	{"op":"status"}
//
// and the server answers with one JSON object on one line and closes the
// connection:
//
//	{"version":1,"status":{…Status…}}
//	{"version":1,"error":"control: unknown op \"frob\""}
//
// Requests are at most MaxRequestSize bytes; each connection must complete
// within the server's timeout.
//
// # Access
//
// The socket lives at DIR/IFACE.sock, by default /run/gmtun/IFACE.sock.
// The directory must be private (mode 0700, owned by the daemon's user):
// Listen creates it so, and refuses a directory that group or others can
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

// ProtocolVersion is the "version" of every response.
const ProtocolVersion = 1

// OpStatus asks for the interface's Status.
const OpStatus = "status"

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
	// Op is the operation; only OpStatus exists.
	Op string `json:"op"`
}

// Response is what the server answers.
type Response struct {
	// Version is ProtocolVersion.
	Version int `json:"version"`
	// Status is set when the request succeeded.
	Status *Status `json:"status,omitempty"`
	// Error is set when it failed.
	Error string `json:"error,omitempty"`
}

// SocketPath returns the control socket of the interface iface in dir.
func SocketPath(dir, iface string) string {
	return filepath.Join(dir, iface+socketSuffix)
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

// Server serves Status on a control socket. Create it with Listen.
type Server struct {
	l        *net.UnixListener
	path     string
	info     fs.FileInfo // the socket file as created, to remove only ours
	status   func() (Status, error)
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
	s := &Server{l: l, path: path, info: info, status: status, logf: logf, sem: make(chan struct{}, maxConns)}
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
		switch req.Op {
		case OpStatus:
			if st, err := s.status(); err != nil {
				resp.Error = err.Error()
			} else {
				resp.Status = &st
			}
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
	b, _ := json.Marshal(Request{Op: OpStatus})
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
	if resp.Status == nil {
		return nil, fmt.Errorf("control: %s answered without a status", path)
	}
	return resp.Status, nil
}

// prepareDir creates dir with mode 0700, or checks that an existing dir
// is private to this user.
func prepareDir(dir string) error {
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
