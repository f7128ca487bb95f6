package faultbed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Echo answers every UDP datagram on c with the same bytes until c is
// closed.
func Echo(c *net.UDPConn) {
	buf := make([]byte, 65536)
	for {
		n, src, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		c.WriteToUDPAddrPort(buf[:n], src)
	}
}

// Payload returns the distinct payload of probe seq: the sequence number,
// then bytes derived from it, 16 to 1200 bytes long.
func Payload(seq uint64) []byte {
	rng := rand.New(rand.NewPCG(seq, 0x9e3779b97f4a7c15))
	n := 16 + rng.IntN(1200-16+1)
	b := make([]byte, n)
	binary.BigEndian.PutUint64(b, seq)
	for i := 8; i < n; i++ {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// ProbeResult says what came back from an echo probe run.
type ProbeResult struct {
	Sent, Received uint64
	// Corrupt counts echoes that differ from the payload of their
	// sequence number (must be 0 through a tunnel); Duplicates echoes of a
	// sequence number already received; Unknown echoes too short to carry
	// a sequence number or with one never sent.
	Corrupt, Duplicates, Unknown uint64
	// MaxGap is the longest time without any echo arriving, from the first
	// probe sent to the end; Gaps lists every silence longer than
	// GapThreshold with its start.
	MaxGap time.Duration
	Gaps   []Gap
}

// Gap is one silence of the echo stream.
type Gap struct {
	Start time.Time
	Len   time.Duration
}

// GapThreshold is the shortest silence ProbeResult.Gaps records.
const GapThreshold = 200 * time.Millisecond

func (r ProbeResult) String() string {
	return fmt.Sprintf("sent %d, received %d, corrupt %d, duplicates %d, unknown %d, max gap %v",
		r.Sent, r.Received, r.Corrupt, r.Duplicates, r.Unknown, r.MaxGap.Round(time.Millisecond))
}

// Probe sends distinct payloads (Payload) on c, a UDP socket connected to
// an Echo, every interval until ctx ends, and checks every echo byte for
// byte. It waits up to a second after ctx ends for late echoes.
func Probe(ctx context.Context, c *net.UDPConn, interval time.Duration) ProbeResult {
	var (
		mu   sync.Mutex
		res  ProbeResult
		seen = map[uint64]bool{}
		sent uint64
	)
	start := time.Now()
	last := start
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65536)
		for {
			n, err := c.Read(buf)
			now := time.Now()
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					return
				}
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			mu.Lock()
			if g := now.Sub(last); g > res.MaxGap {
				res.MaxGap = g
			}
			if g := now.Sub(last); g > GapThreshold {
				res.Gaps = append(res.Gaps, Gap{Start: last, Len: g})
			}
			last = now
			if n < 8 {
				res.Unknown++
				mu.Unlock()
				continue
			}
			seq := binary.BigEndian.Uint64(buf)
			switch {
			case seq >= sent:
				res.Unknown++
			case !bytes.Equal(buf[:n], Payload(seq)):
				res.Corrupt++
			case seen[seq]:
				res.Duplicates++
			default:
				seen[seq] = true
				res.Received++
			}
			mu.Unlock()
		}
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
loop:
	for {
		mu.Lock()
		seq := sent
		sent++
		mu.Unlock()
		c.Write(Payload(seq))
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
		}
	}
	end := time.Now()
	c.SetReadDeadline(end.Add(time.Second))
	<-done
	mu.Lock()
	defer mu.Unlock()
	if g := end.Sub(last); g > res.MaxGap {
		res.MaxGap = g
	}
	if g := end.Sub(last); g > GapThreshold {
		res.Gaps = append(res.Gaps, Gap{Start: last, Len: g})
	}
	res.Sent = sent
	return res
}

// Stream returns the deterministic byte stream a transfer sends.
func Stream(seed uint64) io.Reader {
	return &streamReader{r: rand.NewChaCha8(seedBytes(seed))}
}

func seedBytes(seed uint64) (s [32]byte) {
	binary.LittleEndian.PutUint64(s[:], seed)
	return s
}

type streamReader struct{ r *rand.ChaCha8 }

func (s *streamReader) Read(p []byte) (int, error) { return s.r.Read(p) }

// Transfer is the outcome of one end of a TCP transfer.
type Transfer struct {
	Bytes   int64
	SHA256  [32]byte
	Elapsed time.Duration
}

// Mbps returns the transfer's rate in Mbit/s.
func (t Transfer) Mbps() float64 {
	if t.Elapsed <= 0 {
		return 0
	}
	return float64(t.Bytes) * 8 / t.Elapsed.Seconds() / 1e6
}

// Send writes n bytes of Stream(seed) to c, closes its write side and
// returns the hash of what it wrote.
func Send(c *net.TCPConn, n int64, seed uint64) (Transfer, error) {
	h := sha256.New()
	start := time.Now()
	w, err := io.CopyN(io.MultiWriter(c, h), Stream(seed), n)
	if err == nil {
		err = c.CloseWrite()
	}
	var t Transfer
	t.Bytes, t.Elapsed = w, time.Since(start)
	copy(t.SHA256[:], h.Sum(nil))
	return t, err
}

// Receive reads c to its end and returns the hash of what it read.
func Receive(c *net.TCPConn) (Transfer, error) {
	h := sha256.New()
	start := time.Now()
	n, err := io.Copy(h, c)
	var t Transfer
	t.Bytes, t.Elapsed = n, time.Since(start)
	copy(t.SHA256[:], h.Sum(nil))
	return t, err
}
