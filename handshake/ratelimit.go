package handshake

import (
	"net/netip"
	"sync"
	"time"
)

// Rate-limiter parameters (wireguard-go ratelimiter): per source, 20
// handshake messages per second with a burst of 5.
const (
	RateLimitPerSecond = 20
	RateLimitBurst     = 5
	// rateIdle: a source idle this long is forgotten by GC.
	rateIdle = time.Second
)

const (
	packetCost = int64(time.Second) / RateLimitPerSecond
	maxTokens  = packetCost * RateLimitBurst
)

type bucket struct {
	last   time.Time
	tokens int64
}

// RateLimiter is a token bucket per source address (IPv4 address or IPv6
// /64) for handshake messages whose mac2 proved, while under load, that
// their source receives our cookies. Spoofed sources never reach it: they
// get stateless cookie replies instead. Its table is bounded, and it has no
// state an attacker can fill to refuse anyone: when the table is full, the
// least recently seen of a few sampled sources is forgotten to make room
// (that source starts again with a full bucket when it returns), so a new
// source is never refused for lack of space and each proven source keeps
// its own bucket. The zero value is not usable; it is safe for concurrent
// use.
type RateLimiter struct {
	mu      sync.Mutex
	table   map[netip.Addr]bucket
	max     int
	lastGC  time.Time
	hasLast bool
}

// rateEvictSample is how many entries eviction inspects (map iteration
// starts at a random entry).
const rateEvictSample = 8

// NewRateLimiter returns a limiter that tracks at most maxSources sources.
func NewRateLimiter(maxSources int) *RateLimiter {
	if maxSources < 1 {
		maxSources = 1
	}
	return &RateLimiter{table: make(map[netip.Addr]bucket, maxSources), max: maxSources}
}

func sourceKey(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// Allow reports whether one more handshake message from src may be
// processed at now, and charges it.
func (r *RateLimiter) Allow(src netip.Addr, now time.Time) bool {
	key := sourceKey(src)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.hasLast || now.Sub(r.lastGC) >= rateIdle || now.Before(r.lastGC) {
		r.gcLocked(now)
	}
	b, ok := r.table[key]
	if !ok {
		if len(r.table) >= r.max {
			r.evictLocked()
		}
		r.table[key] = bucket{last: now, tokens: maxTokens - packetCost}
		return true
	}
	elapsed := now.Sub(b.last)
	if elapsed < 0 {
		elapsed = 0
	}
	b.tokens = min(b.tokens+int64(elapsed), maxTokens)
	b.last = now
	allowed := b.tokens >= packetCost
	if allowed {
		b.tokens -= packetCost
	}
	r.table[key] = b
	return allowed
}

// evictLocked forgets the least recently seen of rateEvictSample sources.
func (r *RateLimiter) evictLocked() {
	var victim netip.Addr
	var oldest time.Time
	n := 0
	for k, b := range r.table {
		if n == 0 || b.last.Before(oldest) {
			victim, oldest = k, b.last
		}
		if n++; n == rateEvictSample {
			break
		}
	}
	if n > 0 {
		delete(r.table, victim)
	}
}

// GC forgets sources idle for a second and returns how many remain. Allow
// calls it at most once a second; a tunnel may also call it from a timer.
func (r *RateLimiter) GC(now time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gcLocked(now)
	return len(r.table)
}

func (r *RateLimiter) gcLocked(now time.Time) {
	for k, b := range r.table {
		if now.Sub(b.last) >= rateIdle {
			delete(r.table, k)
		}
	}
	r.lastGC, r.hasLast = now, true
}

// LoadDetector decides whether the responder is "under load": the
// handshake queue is at least 1/8 full, a state that persists for one
// second after the condition clears (wireguard-go IsUnderLoad). It is safe
// for concurrent use.
type LoadDetector struct {
	mu    sync.Mutex
	until time.Time
}

// UnderLoadDuration is how long the under-load state outlives its cause.
const UnderLoadDuration = time.Second

// UnderLoad updates the detector with the queue's current length and
// capacity and reports whether mac2 must be required.
func (d *LoadDetector) UnderLoad(queued, capacity int, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if capacity > 0 && queued*8 >= capacity {
		d.until = now.Add(UnderLoadDuration)
		return true
	}
	return now.Before(d.until)
}
