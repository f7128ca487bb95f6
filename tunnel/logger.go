package tunnel

import (
	"context"
	"fmt"
	"log/slog"
	"os"
)

// Logger is the device's injected logger, in wireguard-go's style: two
// levels, each a printf-like function; a nil function discards that level.
// Lines about a peer start with the peer's name ("peer(name) - ..."). The
// data plane never logs per packet: drops are counted in Stats instead.
//
// Diagnostics — why handshakes with a peer fail (a pre-shared key or SM2
// ID mismatch, no common suite, no answer) — are logged once per peer and
// cause, then at most once per DiagnosticInterval with the number of
// repeats. With Slog set they are structured records (peer=, cause=,
// hint=, repeats=); otherwise they go to Errorf (warnings) or Verbosef.
type Logger struct {
	// Verbosef receives debugging detail: routine start and stop,
	// handshakes sent and received, expected errors.
	Verbosef func(format string, args ...any)
	// Errorf receives errors an operator should act on.
	Errorf func(format string, args ...any)
	// Slog, if set, receives the diagnostics as structured records at
	// their own level (info for a peer that never answers, warn for a
	// mismatch). SlogLogger sets all three fields from one slog.Logger.
	Slog *slog.Logger
}

// SlogLogger returns a Logger whose every line goes to l: Verbosef at
// debug, Errorf at error, diagnostics at their level with attributes.
func SlogLogger(l *slog.Logger) *Logger {
	logf := func(level slog.Level) func(string, ...any) {
		return func(format string, args ...any) {
			if l.Enabled(context.Background(), level) {
				l.Log(context.Background(), level, fmt.Sprintf(format, args...))
			}
		}
	}
	return &Logger{Verbosef: logf(slog.LevelDebug), Errorf: logf(slog.LevelError), Slog: l}
}

// Log levels for NewLogger.
const (
	LogLevelSilent = iota
	LogLevelError
	LogLevelVerbose
)

// DiscardLogf discards its arguments.
func DiscardLogf(format string, args ...any) {}

// NewLogger returns a Logger writing key=value lines to standard error at
// the given level, each tagged prefix=PREFIX when prefix is not empty.
func NewLogger(level int, prefix string) *Logger {
	if level <= LogLevelSilent {
		return &Logger{Verbosef: DiscardLogf, Errorf: DiscardLogf}
	}
	min := slog.LevelError
	if level >= LogLevelVerbose {
		min = slog.LevelDebug
	}
	l := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: min}))
	if prefix != "" {
		l = l.With("prefix", prefix)
	}
	return SlogLogger(l)
}

// normalize returns a copy of l with nil functions replaced by DiscardLogf.
func (l *Logger) normalize() *Logger {
	out := &Logger{Verbosef: DiscardLogf, Errorf: DiscardLogf}
	if l != nil {
		if l.Verbosef != nil {
			out.Verbosef = l.Verbosef
		}
		if l.Errorf != nil {
			out.Errorf = l.Errorf
		}
		out.Slog = l.Slog
	}
	return out
}
