package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/gmtun/gmtun/tunnel"
)

// logger is the daemon's one logger, a log/slog Logger with the
// printf-style helpers the daemon's code uses. log_format = "text" writes
// key=value lines (slog's TextHandler),
//
//	time=2026-05-01T12:00:00.000+08:00 level=INFO msg=added iface=gm0 peer=site-b
//
// and log_format = "json" one JSON object per line (JSONHandler) with the
// same keys. Lines about a peer carry peer=NAME, diagnostics also cause=
// and hint= (tunnel.Logger). Under systemd (JOURNAL_STREAM set) the time,
// which the journal adds itself, is left out and each line starts with an
// sd-daemon(3) priority prefix ("<6>"), so that journalctl -p filters by
// level. Nothing is logged per packet.
type logger struct {
	sl    *slog.Logger
	level *slog.LevelVar
}

// newLogger returns the daemon's logger writing to w at level, in format
// ("text" or "json"), every line tagged iface=ifname.
func newLogger(w io.Writer, level slog.Level, format, ifname string, journal bool) *logger {
	lv := new(slog.LevelVar)
	lv.Set(level)
	opts := &slog.HandlerOptions{Level: lv}
	pw := &priorityWriter{w: w, journal: journal}
	if journal {
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{} // the journal has its own timestamp
			}
			return a
		}
	}
	var h slog.Handler
	if format == "json" {
		h = slog.NewJSONHandler(pw, opts)
	} else {
		h = slog.NewTextHandler(pw, opts)
	}
	if journal {
		h = &priorityHandler{Handler: h, pw: pw}
	}
	return &logger{sl: slog.New(h).With("iface", ifname), level: lv}
}

// SetLevel changes the minimum level logged.
func (l *logger) SetLevel(level slog.Level) { l.level.Set(level) }

// Slog returns the underlying structured logger.
func (l *logger) Slog() *slog.Logger { return l.sl }

// tunnelLogger is the device's view of l: the same handler, so that the
// device's lines and the daemon's share one format and one level.
func (l *logger) tunnelLogger() *tunnel.Logger { return tunnel.SlogLogger(l.sl) }

func (l *logger) logf(level slog.Level, format string, args ...any) {
	if !l.sl.Enabled(context.Background(), level) {
		return
	}
	l.sl.Log(context.Background(), level, fmt.Sprintf(format, args...))
}

// Debugf logs at debug level.
func (l *logger) Debugf(format string, args ...any) { l.logf(slog.LevelDebug, format, args...) }

// Infof logs at info level.
func (l *logger) Infof(format string, args ...any) { l.logf(slog.LevelInfo, format, args...) }

// Warnf logs at warning level.
func (l *logger) Warnf(format string, args ...any) { l.logf(slog.LevelWarn, format, args...) }

// Errorf logs at error level.
func (l *logger) Errorf(format string, args ...any) { l.logf(slog.LevelError, format, args...) }

// priorityHandler sets the sd-daemon priority of each record on its
// writer before the wrapped handler writes the record (in one Write, as
// slog's handlers do).
type priorityHandler struct {
	slog.Handler
	pw *priorityWriter
}

// Handle writes r with its priority prefix.
func (h *priorityHandler) Handle(ctx context.Context, r slog.Record) error {
	h.pw.mu.Lock()
	defer h.pw.mu.Unlock()
	h.pw.prio = priority(r.Level)
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the prefix on the derived handler.
func (h *priorityHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &priorityHandler{Handler: h.Handler.WithAttrs(attrs), pw: h.pw}
}

// WithGroup keeps the prefix on the derived handler.
func (h *priorityHandler) WithGroup(name string) slog.Handler {
	return &priorityHandler{Handler: h.Handler.WithGroup(name), pw: h.pw}
}

// priority maps a level to sd-daemon(3): 3 error, 4 warning, 6 info, 7 debug.
func priority(l slog.Level) byte {
	switch {
	case l >= slog.LevelError:
		return '3'
	case l >= slog.LevelWarn:
		return '4'
	case l >= slog.LevelInfo:
		return '6'
	}
	return '7'
}

// priorityWriter writes each line in one Write, with the "<N>" prefix
// when journal is set (mu held by priorityHandler.Handle then).
type priorityWriter struct {
	mu      sync.Mutex
	w       io.Writer
	journal bool
	prio    byte
	buf     []byte
}

func (p *priorityWriter) Write(b []byte) (int, error) {
	if !p.journal {
		return p.w.Write(b)
	}
	p.buf = append(p.buf[:0], '<', p.prio, '>')
	p.buf = append(p.buf, b...)
	if _, err := p.w.Write(p.buf); err != nil {
		return 0, err
	}
	return len(b), nil
}
