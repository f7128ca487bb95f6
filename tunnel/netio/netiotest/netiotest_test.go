package netiotest

import (
	"bytes"
	"errors"
	"net"
	"os"
	"testing"

	"github.com/gmtun/gmtun/tunnel/netio"
)

func makeBufs(n, size int) ([][]byte, []int) {
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, size)
	}
	return bufs, make([]int, n)
}

func TestChannelTUNBatch(t *testing.T) {
	tun := NewChannelTUN("fake0", 4, 1420)
	for i := 0; i < 6; i++ {
		tun.Outbound <- bytes.Repeat([]byte{byte(i)}, 10+i)
	}
	bufs, sizes := makeBufs(8, 100)
	const off = 16
	n, err := tun.Read(bufs, sizes, off)
	if err != nil || n != 4 {
		t.Fatalf("Read = %d, %v; want a batch of 4", n, err)
	}
	for i := 0; i < n; i++ {
		if want := bytes.Repeat([]byte{byte(i)}, 10+i); !bytes.Equal(bufs[i][off:off+sizes[i]], want) {
			t.Fatalf("packet %d = %x", i, bufs[i][off:off+sizes[i]])
		}
	}
	if n, err = tun.Read(bufs, sizes, off); n != 2 || err != nil {
		t.Fatalf("second Read = %d, %v; want the remaining 2", n, err)
	}
	out := [][]byte{append(make([]byte, off), 'a', 'b'), append(make([]byte, off), 'c')}
	if n, err := tun.Write(out, off); n != 2 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got := <-tun.Inbound; string(got) != "ab" {
		t.Fatalf("Inbound got %q", got)
	}
	if got := <-tun.Inbound; string(got) != "c" {
		t.Fatalf("Inbound got %q", got)
	}
	tun.Outbound <- make([]byte, 200)
	if _, err := tun.Read(bufs, sizes, off); err == nil {
		t.Fatal("oversized packet was not reported")
	}
	tun.Close()
	if _, err := tun.Read(bufs, sizes, off); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	if _, err := tun.Write(out, off); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}

func TestChannelBinds(t *testing.T) {
	a, b := NewChannelBinds(3)
	fa, _, err := a.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	fb, port, err := b.Open(0)
	if err != nil || port != 51820 || len(fb) != 1 || len(fa) != 1 {
		t.Fatalf("Open: %v port %d", err, port)
	}
	if _, _, err := b.Open(0); err == nil {
		t.Fatal("double Open accepted")
	}
	ep, err := a.ParseEndpoint("198.18.0.2:51820")
	if err != nil {
		t.Fatal(err)
	}
	msgs := [][]byte{[]byte("one"), []byte("two"), []byte("three"), []byte("four")}
	if err := a.Send(msgs, ep); err != nil {
		t.Fatal(err)
	}
	if err := a.Send(msgs, a.LocalEndpoint()); !errors.Is(err, ErrWrongEndpoint) {
		t.Fatalf("send to self: %v", err)
	}
	bufs, sizes := makeBufs(netio.IdealBatchSize, 64)
	eps := make([]netio.Endpoint, len(bufs))
	n, err := fb[0](bufs, sizes, eps)
	if err != nil || n != 3 {
		t.Fatalf("receive = %d, %v; want 3 (the batch size)", n, err)
	}
	for i := 0; i < n; i++ {
		if string(bufs[i][:sizes[i]]) != string(msgs[i]) || eps[i].DstToString() != "198.18.0.1:51820" {
			t.Fatalf("datagram %d = %q from %v", i, bufs[i][:sizes[i]], eps[i].DstToString())
		}
	}
	if n, _ = fb[0](bufs, sizes, eps); n != 1 || string(bufs[0][:sizes[0]]) != "four" {
		t.Fatalf("second receive = %d %q", n, bufs[0][:sizes[0]])
	}
	done := make(chan error)
	go func() {
		_, err := fb[0](bufs, sizes, eps)
		done <- err
	}()
	b.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("receive after Close: %v", err)
	}
	if err := b.Send(msgs, a.LocalEndpoint()); !errors.Is(err, ErrNotOpen) {
		t.Fatalf("send on closed bind: %v", err)
	}
	if _, _, err := b.Open(0); err != nil {
		t.Fatalf("reopen: %v", err)
	}
}
