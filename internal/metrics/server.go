package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the metrics are served.
const Path = "/metrics"

// Server serves one registry over HTTP on a TCP address or a unix socket.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
	unix string // socket path to remove on Close, "" for TCP
}

// Listen opens network ("tcp" or "unix") address and serves c (and
// nothing else: no Go runtime or process collectors, whose metrics the
// daemon's gmtun_* ones do not need) at Path. A stale unix socket left by
// a crashed run is replaced; the socket gets mode 0660. errorf receives
// the errors of the HTTP server (never one per request).
func Listen(network, address string, c prometheus.Collector, errorf func(string, ...any)) (*Server, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	s := &Server{done: make(chan struct{})}
	var err error
	switch network {
	case "tcp":
		s.ln, err = net.Listen("tcp", address)
	case "unix":
		if fi, statErr := os.Lstat(address); statErr == nil && fi.Mode()&os.ModeSocket != 0 {
			if c, dialErr := net.Dial("unix", address); dialErr == nil {
				c.Close()
				return nil, fmt.Errorf("metrics: %s is in use by another process", address)
			}
			os.Remove(address) // stale: nobody answers
		}
		s.ln, err = net.Listen("unix", address)
		if err == nil {
			s.unix = address
			if err = os.Chmod(address, 0o660); err != nil {
				s.ln.Close()
				os.Remove(address)
			}
		}
	default:
		return nil, fmt.Errorf("metrics: unknown network %q", network)
	}
	if err != nil {
		return nil, fmt.Errorf("metrics: cannot listen on %s: %w", address, err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            printfLogger(errorf),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "gmtun metrics: %s\n", Path)
	})
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      15 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    8 << 10,
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) && errorf != nil {
			errorf("metrics: %v", err)
		}
	}()
	return s, nil
}

// Addr is the address the server listens on (the port chosen for ":0").
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server, waits up to 2 s for scrapes in flight, and
// removes the unix socket.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	if s.unix != "" {
		os.Remove(s.unix)
	}
	return err
}

// printfLogger adapts errorf to promhttp's Logger.
type printfLogger func(string, ...any)

func (f printfLogger) Println(v ...any) {
	if f != nil {
		f("metrics: %s", fmt.Sprint(v...))
	}
}
