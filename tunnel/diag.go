package tunnel

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
)

// DiagnosticInterval is how often a diagnostic that keeps recurring for
// the same peer and cause is logged again; the line then says how many
// times it recurred meanwhile. The first occurrence is logged at once.
const DiagnosticInterval = 5 * time.Minute

// NoAnswerCause is the cause of the diagnostic for a peer that did not
// answer any initiation of a handshake attempt (RekeyAttemptTime). The
// other causes are handshake.Error codes ("confirm_mismatch",
// "select_decrypt", "confirm_tag", "no_common_suite").
const NoAnswerCause = "no_answer"

// peerDiag rate-limits a peer's diagnostics, per cause. It is touched only
// on handshake failures, never per packet.
type peerDiag struct {
	mu   sync.Mutex
	seen map[string]*diagState
}

type diagState struct {
	last    time.Time // when the latest line was logged
	repeats uint64    // occurrences not logged since
}

// diagnose logs one line about p for cause, unless one was logged less
// than DiagnosticInterval ago (then it only counts). hint says what to
// check; it may be empty.
func (p *Peer) diagnose(level slog.Level, cause, msg, hint string) {
	now := p.device.clock.Now()
	p.diag.mu.Lock()
	if p.diag.seen == nil {
		p.diag.seen = make(map[string]*diagState)
	}
	s := p.diag.seen[cause]
	if s != nil && now.Sub(s.last) < DiagnosticInterval {
		s.repeats++
		p.diag.mu.Unlock()
		return
	}
	if s == nil {
		s = new(diagState)
		p.diag.seen[cause] = s
	}
	repeats := s.repeats
	s.last, s.repeats = now, 0
	p.diag.mu.Unlock()

	p.mu.Lock()
	name := p.name
	p.mu.Unlock()
	log := p.device.log
	if log.Slog != nil {
		attrs := []slog.Attr{slog.String("peer", name), slog.String("cause", cause)}
		if hint != "" {
			attrs = append(attrs, slog.String("hint", hint))
		}
		if repeats > 0 {
			attrs = append(attrs, slog.Uint64("repeats", repeats))
		}
		log.Slog.LogAttrs(context.Background(), level, msg, attrs...)
		return
	}
	line := fmt.Sprintf("peer(%s) - %s", name, msg)
	if hint != "" {
		line += ": " + hint
	}
	line += " (" + cause
	if repeats > 0 {
		line += fmt.Sprintf(", %d more since the last report", repeats)
	}
	line += ")"
	if level >= slog.LevelWarn {
		log.Errorf("%s", line)
	} else {
		log.Verbosef("%s", line)
	}
}

// lookupPeer returns the peer that an index was allocated for (a pending
// handshake or a keypair), or nil.
func (t *indexTable) lookupPeer(idx uint32) *Peer {
	t.mu.RLock()
	e := t.table[idx]
	t.mu.RUnlock()
	return e.peer
}

// diagnoseNoAnswer reports a handshake attempt that got no answer at all
// (RekeyAttemptTime of initiations and retries), at info: the peer may
// simply be down, but a wrong endpoint, a firewall or a public key the
// peer does not know for us (its mac1 check drops our initiations
// silently) look the same from here.
func (p *Peer) diagnoseNoAnswer() {
	ep := "none"
	if e := p.getEndpoint(); e != nil {
		ep = endpointAddrPort(e).String()
	}
	p.diagnose(slog.LevelInfo, NoAnswerCause,
		fmt.Sprintf("no answer to handshake initiations for %v; will retry when there is traffic", handshake.RekeyAttemptTime),
		"check that the peer runs and that UDP reaches it at endpoint "+ep+", and that its [[peer]] public_key for this side is our public key (otherwise it drops our initiations unanswered)")
}

// diagnoseFailure explains a failed response or confirm whose cause is a
// configuration mismatch (handshake.Hint). p is the peer whose pending
// handshake the message's receiver index named (nil: none, nothing is
// logged). Other failures are only counted (handshake_invalid).
func (p *Peer) diagnoseFailure(err error) {
	hint := handshake.Hint(err)
	if p == nil || hint == "" {
		return
	}
	reason := handshake.Reason(err)
	what := "handshake failed"
	switch reason {
	case handshake.ErrNoCommonSuite.Code:
		what = "the peer refused the handshake"
	case handshake.ErrConfirmMismatch.Code:
		what = "handshake failed: key confirmation mismatch"
	case handshake.ErrSelectDecrypt.Code, handshake.ErrConfirmTag.Code:
		what = "handshake failed: pre-shared key mismatch"
	}
	p.diagnose(slog.LevelWarn, reason, what+": "+strings.TrimPrefix(err.Error(), "handshake: "), hint)
}

// countReceived adds an authenticated handshake message to the peer's
// receive counters (rx_bytes and rx_packets include handshakes).
func (p *Peer) countReceived(n int) {
	p.rxBytes.Add(uint64(n))
	p.rxPackets.Add(1)
}

// suiteNames formats a suite list for a log line.
func suiteNames(ids []ciphers.SuiteID) string {
	if len(ids) == 0 {
		return "none"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return strings.Join(s, ", ")
}
