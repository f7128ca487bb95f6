package faultbed

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gmtun/gmtun/handshake"
)

// FloodKind selects what a flood sends.
type FloodKind int

const (
	// Garbage sends every (type byte, length) pair in turn: types 0–255,
	// UDP payload lengths 0–MaxGarbageLen, random bytes after the type.
	Garbage FloodKind = iota
	// Initiations sends well-formed handshake initiations with a valid
	// mac1 for the target's public key (built by the handshake package's
	// exported CreateInitiation for a throw-away key the target does not
	// know): the responder must do the work mac1 lets through.
	Initiations
	// MadeUpMAC2 sends the same initiations with a made-up nonzero mac2:
	// a responder under load that checked every mac2 would pay two more
	// HMAC-SM3 per message.
	MadeUpMAC2
)

func (k FloodKind) String() string {
	switch k {
	case Initiations:
		return "valid-mac1 initiations"
	case MadeUpMAC2:
		return "made-up-mac2 initiations"
	}
	return "garbage"
}

// MaxGarbageLen is the longest garbage payload: a 1500-byte IPv4 packet.
const MaxGarbageLen = 1500 - 20 - 8

// Spoofed sources: 198.18.16.0–198.18.255.255 and 198.19.16.0–198.19.255.255
// (the low /20 of each half holds the beds' links and tunnel addresses).
const (
	spoofPerHalf = 65536 - 4096
	// SpoofedSources is the number of distinct source addresses a flood
	// cycles through.
	SpoofedSources = 2 * spoofPerHalf
)

// SpoofedSource returns the i-th spoofed source address.
func SpoofedSource(i int) netip.Addr {
	i %= SpoofedSources
	half := byte(18)
	if i >= spoofPerHalf {
		half, i = 19, i-spoofPerHalf
	}
	i += 4096
	return netip.AddrFrom4([4]byte{198, half, byte(i >> 8), byte(i)})
}

// Flooder sends crafted IPv4/UDP packets with spoofed sources through a
// raw socket (IPPROTO_RAW: the header is ours). Open it inside the
// namespace the flood comes from.
type Flooder struct {
	fd int
	mu sync.Mutex
}

// OpenFlooder opens the raw socket in the calling thread's network
// namespace (needs CAP_NET_RAW).
func OpenFlooder() (*Flooder, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW)
	if err != nil {
		return nil, fmt.Errorf("faultbed: raw socket: %w", err)
	}
	// A large send buffer so the flood is limited by the CPU, not by
	// ENOBUFS.
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4<<20)
	return &Flooder{fd: fd}, nil
}

// Close closes the socket.
func (f *Flooder) Close() error { return unix.Close(f.fd) }

// FloodConfig describes one flood.
type FloodConfig struct {
	Dst  netip.AddrPort // the target daemon (IPv4)
	Kind FloodKind
	// Rate is messages per second; 0 sends as fast as one goroutine (one
	// core) can.
	Rate int
	// Templates are the initiations an Initiations flood sends in turn
	// (see MakeInitiations).
	Templates [][]byte
}

// FloodResult says what a flood sent.
type FloodResult struct {
	Sent, Errors uint64
	Elapsed      time.Duration
	Sources      int // distinct spoofed sources used
}

// Rate returns the achieved messages per second.
func (r FloodResult) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Sent) / r.Elapsed.Seconds()
}

// Run floods until ctx ends.
func (f *Flooder) Run(ctx context.Context, cfg FloodConfig) (FloodResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !cfg.Dst.Addr().Is4() {
		return FloodResult{}, errors.New("faultbed: flood target must be IPv4")
	}
	if (cfg.Kind == Initiations || cfg.Kind == MadeUpMAC2) && len(cfg.Templates) == 0 {
		return FloodResult{}, errors.New("faultbed: an initiation flood needs templates")
	}
	rng := mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var junk [MaxGarbageLen]byte
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	dst4 := cfg.Dst.Addr().As4()
	const batch = 64
	out := newSendBatch(batch, 28+MaxGarbageLen, dst4)
	var lens [batch]int
	var res FloodResult
	start := time.Now()
	for i := 0; ; {
		if ctx.Err() != nil {
			break
		}
		if cfg.Rate > 0 {
			due := int(time.Since(start).Seconds() * float64(cfg.Rate))
			if i >= due {
				time.Sleep(200 * time.Microsecond)
				continue
			}
		}
		for j := range batch {
			pkt := out.pkts[j]
			var payload []byte
			k := i + j
			switch cfg.Kind {
			case Garbage:
				typ := byte(k)
				n := (k / 256) % (MaxGarbageLen + 1)
				payload = pkt[28 : 28+n]
				if n > 0 {
					off := (k * 131) % (MaxGarbageLen - n + 1)
					copy(payload, junk[off:off+n])
					payload[0] = typ
				}
			case Initiations, MadeUpMAC2:
				t := cfg.Templates[k%len(cfg.Templates)]
				payload = pkt[28 : 28+len(t)]
				copy(payload, t)
				if cfg.Kind == MadeUpMAC2 {
					mac2 := payload[handshake.MessageInitiationOffsetMAC2:]
					binary.LittleEndian.PutUint64(mac2, rng.Uint64()|1)
					binary.LittleEndian.PutUint64(mac2[8:], rng.Uint64())
				}
			}
			src := SpoofedSource(k)
			buildHeaders(pkt, src.As4(), dst4, uint16(1024+k%60000), cfg.Dst.Port(), len(payload))
			lens[j] = 28 + len(payload)
		}
		// A full socket buffer (ENOBUFS) or a partial send counts the
		// rest of the batch as errors; the flood goes on.
		n, _ := out.send(f.fd, lens[:])
		res.Sent += uint64(n)
		res.Errors += uint64(batch - n)
		i += batch
		if i > res.Sources {
			res.Sources = min(i, SpoofedSources)
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// buildHeaders writes an IPv4 and a UDP header (no UDP checksum, allowed
// over IPv4; the kernel fills the IP checksum) in front of n payload bytes.
func buildHeaders(p []byte, src, dst [4]byte, sport, dport uint16, n int) {
	total := 28 + n
	p[0] = 0x45
	p[1] = 0
	binary.BigEndian.PutUint16(p[2:], uint16(total))
	binary.BigEndian.PutUint16(p[4:], 0) // ID: filled by the kernel
	binary.BigEndian.PutUint16(p[6:], 0)
	p[8] = 64
	p[9] = unix.IPPROTO_UDP
	binary.BigEndian.PutUint16(p[10:], 0)
	copy(p[12:16], src[:])
	copy(p[16:20], dst[:])
	binary.BigEndian.PutUint16(p[20:], sport)
	binary.BigEndian.PutUint16(p[22:], dport)
	binary.BigEndian.PutUint16(p[24:], uint16(8+n))
	binary.BigEndian.PutUint16(p[26:], 0)
}

// counterIndices is a handshake.IndexAllocator for throw-away initiators.
type counterIndices struct {
	mu   sync.Mutex
	next uint32
}

func (c *counterIndices) NewIndex(*handshake.Peer) (uint32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	return c.next, nil
}

func (c *counterIndices) FreeIndex(uint32) {}

// MakeInitiations returns n distinct initiations to target from a fresh
// static key the target does not know: each has a valid mac1 (and no
// mac2), so the target must screen it, and — under load — answer it with
// a cookie reply or — not under load — run the responder's elliptic-curve
// work before finding the initiator unknown.
func MakeInitiations(target string, n int) ([][]byte, error) {
	pub, err := handshake.ParsePublicKey(target)
	if err != nil {
		return nil, err
	}
	priv, err := handshake.GeneratePrivateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	l, err := handshake.NewLocal(handshake.Config{PrivateKey: priv, Indices: &counterIndices{}})
	if err != nil {
		return nil, err
	}
	p, err := l.AddPeer(handshake.PeerConfig{PublicKey: pub})
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, n)
	now := time.Now()
	for range n {
		m, err := l.CreateInitiation(p, now)
		if err != nil {
			return nil, err
		}
		out = append(out, m[:])
	}
	return out, nil
}
