package tunnel

import (
	"log"
	"os"
)

// Logger is the device's injected logger, in wireguard-go's style: two
// levels, each a printf-like function; a nil function discards that level.
// Lines about a peer start with the peer's name ("peer(name) - ..."). The
// data plane never logs per packet: drops are counted in Stats instead.
type Logger struct {
	// Verbosef receives debugging detail: routine start and stop,
	// handshakes sent and received, expected errors.
	Verbosef func(format string, args ...any)
	// Errorf receives errors an operator should act on.
	Errorf func(format string, args ...any)
}

// Log levels for NewLogger.
const (
	LogLevelSilent = iota
	LogLevelError
	LogLevelVerbose
)

// DiscardLogf discards its arguments.
func DiscardLogf(format string, args ...any) {}

// NewLogger returns a Logger writing to standard error with the given
// level and prefix (typically "(ifname) ").
func NewLogger(level int, prefix string) *Logger {
	l := &Logger{Verbosef: DiscardLogf, Errorf: DiscardLogf}
	logf := func(tag string) func(string, ...any) {
		return log.New(os.Stderr, tag+": "+prefix, log.Ldate|log.Ltime).Printf
	}
	if level >= LogLevelVerbose {
		l.Verbosef = logf("DEBUG")
	}
	if level >= LogLevelError {
		l.Errorf = logf("ERROR")
	}
	return l
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
	}
	return out
}
