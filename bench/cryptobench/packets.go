package cryptobench

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gmtun/gmtun/ciphers"
)

// Data-packet header fields (docs/PROTOCOL.md, "Data packets"). They are
// restated here rather than imported from the tunnel so that the
// benchmark depends on the public ciphers API only.
const (
	headerSize      = ciphers.HeaderSize // type ‖ version ‖ reserved ‖ index ‖ counter
	messageDataType = 0x14               // byte 0 of a data packet
	protocolVersion = 1                  // byte 1 of every gmtun datagram
	paddingMultiple = 16                 // bodies are zero-padded to a multiple of 16
	receiverIndex   = 0x5a17c0de         // any receiver index; the suites authenticate it
)

// MaxSize is the largest inner packet size a cell may use (the tunnel's
// buffers hold at most 64 KiB of inner packet).
const MaxSize = 65535

// paddedLen returns the body length of an inner packet of n bytes.
func paddedLen(n int) int {
	return (n + paddingMultiple - 1) &^ (paddingMultiple - 1)
}

// batch is the set of packet buffers one step works on. Every buffer is
// its own allocation (as the tunnel's pooled message buffers are), with
// room for the largest tag.
type batch struct {
	pkts    [][]byte
	bodyLen int
	counter uint64 // the next counter to assign
}

// newBatch returns n packet buffers for inner packets of size bytes. The
// bodies start as a deterministic, non-zero pattern.
func newBatch(n, size int) *batch {
	b := &batch{pkts: make([][]byte, n), bodyLen: paddedLen(size)}
	for i := range b.pkts {
		p := make([]byte, headerSize+b.bodyLen, headerSize+b.bodyLen+ciphers.MaxTagSize)
		for j := headerSize; j < headerSize+size; j++ {
			p[j] = byte(i*131 + j*7 + 1)
		}
		b.pkts[i] = p
	}
	b.stamp()
	return b
}

// stamp writes fresh headers with consecutive counters into every buffer
// and re-slices each one to header ‖ body, as the tunnel's sender does
// before it hands a batch to Key.Seal.
func (b *batch) stamp() {
	for i, p := range b.pkts {
		p = p[:headerSize+b.bodyLen]
		p[0], p[1], p[2], p[3] = messageDataType, protocolVersion, 0, 0
		binary.LittleEndian.PutUint32(p[4:8], receiverIndex)
		binary.LittleEndian.PutUint64(p[ciphers.CounterOffset:], b.counter)
		b.counter++
		b.pkts[i] = p
	}
}

// stepper is one timed unit of work: a batch of packets sealed or opened.
type stepper interface {
	step() error
}

// benchKeys returns fixed, distinct key material for suite id. A benchmark
// needs no secret keys; fixed keys make runs comparable.
func benchKeys(id ciphers.SuiteID) ciphers.DirectionKeys {
	p := id.Params()
	fill := func(n int, seed byte) []byte {
		if n == 0 {
			return nil
		}
		k := make([]byte, n)
		for i := range k {
			k[i] = seed + byte(i)*29
		}
		return k
	}
	return ciphers.DirectionKeys{Enc: fill(p.EncKeySize, 0x11), MAC: fill(p.MACKeySize, 0x5b), Salt: fill(p.SaltSize, 0xa3)}
}

// suiteSeal seals whole batches with a gmtun Key.
type suiteSeal struct {
	key ciphers.Key
	b   *batch
}

func (s *suiteSeal) step() error {
	s.b.stamp()
	return s.key.Seal(s.b.pkts)
}

// errNotVerified reports that Open rejected a packet the benchmark sealed.
var errNotVerified = errors.New("cryptobench: a sealed packet failed to open")

// suiteOpen opens whole batches with a gmtun Key; sealed holds the
// batch's sealed packets, restored before every Open.
type suiteOpen struct {
	key    ciphers.Key
	b      *batch
	sealed [][]byte
}

func (s *suiteOpen) step() error {
	for i, c := range s.sealed {
		p := s.b.pkts[i][:len(c)]
		copy(p, c)
		s.b.pkts[i] = p
	}
	if m := s.key.Open(s.b.pkts); m.Count() != len(s.b.pkts) {
		return errNotVerified
	}
	return nil
}

// newSuiteStepper returns the stepper of a gmtun cell: op on batches of
// n packets of size bytes.
func newSuiteStepper(id ciphers.SuiteID, op string, size, n int) (stepper, error) {
	key, err := ciphers.NewKey(id, benchKeys(id))
	if err != nil {
		return nil, err
	}
	b := newBatch(n, size)
	switch op {
	case OpSeal:
		return &suiteSeal{key: key, b: b}, nil
	case OpOpen:
		if err := key.Seal(b.pkts); err != nil {
			return nil, err
		}
		sealed := make([][]byte, n)
		for i, p := range b.pkts {
			sealed[i] = append([]byte(nil), p...)
		}
		return &suiteOpen{key: key, b: b, sealed: sealed}, nil
	}
	return nil, fmt.Errorf("cryptobench: unknown operation %q", op)
}
