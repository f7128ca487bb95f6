package netio

import (
	"errors"
	"testing"
)

// TestInPlaceAdapter: the adapter passes the caller's buffers to the
// copying function, returns each datagram as a slice of its own buffer
// with the capacity ending at the datagram, owner k for datagram k, reads
// no more than the batch size, and passes errors through with what was
// read.
func TestInPlaceAdapter(t *testing.T) {
	calls := 0
	errBoom := errors.New("boom")
	recv := func(packets [][]byte, sizes []int, eps []Endpoint) (int, error) {
		calls++
		if len(packets) > 3 {
			t.Fatalf("asked for %d datagrams with batch 3", len(packets))
		}
		for i := range packets {
			packets[i][0] = byte(10*calls + i)
			sizes[i] = 5 + i
		}
		if calls == 2 {
			return 1, errBoom
		}
		return len(packets), nil
	}
	fn := InPlace(recv, 3)
	bufs := make([][]byte, 8)
	for i := range bufs {
		bufs[i] = make([]byte, 100)
	}
	pkts, owner, eps := make([][]byte, 512), make([]int, 512), make([]Endpoint, 512)
	n, err := fn(bufs, pkts, owner, eps)
	if n != 3 || err != nil {
		t.Fatalf("first call: %d, %v", n, err)
	}
	for k := range n {
		if owner[k] != k || len(pkts[k]) != 5+k || cap(pkts[k]) != 5+k || &pkts[k][0] != &bufs[k][0] || pkts[k][0] != byte(10+k) {
			t.Errorf("datagram %d: owner %d, len %d, cap %d, first byte %d", k, owner[k], len(pkts[k]), cap(pkts[k]), pkts[k][0])
		}
	}
	if n, err = fn(bufs, pkts, owner, eps); n != 1 || !errors.Is(err, errBoom) {
		t.Errorf("second call: %d, %v; want 1 datagram and the error", n, err)
	}
}
