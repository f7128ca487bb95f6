package faultbed

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gmtun/gmtun/internal/testenv"
)

// TestFlooderDelivers: in a namespace of its own, a flood of garbage at
// full speed (one sendmmsg per 64 messages) reaches a UDP socket on the
// namespace's own address, every datagram well-formed IPv4/UDP with a
// spoofed source, and the flooder's count matches what arrived (less
// what the receiving socket's buffer dropped). The achieved rate is
// logged: it is the figure the fault bed's max-rate floods depend on.
func TestFlooderDelivers(t *testing.T) {
	testenv.RequireNetns(t)
	ns := fmt.Sprintf("gmtun-flood-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", "198.18.250.1/32", "dev", "lo"},
	} {
		if out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	type outcome struct {
		res    FloodResult
		got    int
		badSrc int
		err    error
	}
	done := make(chan outcome, 1)
	go func() {
		// This thread stays in the namespace and ends with the goroutine.
		runtime.LockOSThread()
		var o outcome
		defer func() { done <- o }()
		fd, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			o.err = err
			return
		}
		defer unix.Close(fd)
		if o.err = unix.Setns(fd, unix.CLONE_NEWNET); o.err != nil {
			return
		}
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(198, 18, 250, 1)})
		if err != nil {
			o.err = err
			return
		}
		defer c.Close()
		c.SetReadBuffer(32 << 20)
		f, err := OpenFlooder()
		if err != nil {
			o.err = err
			return
		}
		defer f.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		o.res, o.err = f.Run(ctx, FloodConfig{Dst: c.LocalAddr().(*net.UDPAddr).AddrPort(), Kind: Garbage})
		if o.err != nil {
			return
		}
		buf := make([]byte, 2048)
		spoofed := netip.MustParsePrefix("198.18.0.0/15")
		for {
			c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			_, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			o.got++
			if !spoofed.Contains(from.Addr()) || from.Addr() == netip.MustParseAddr("198.18.250.1") {
				o.badSrc++
			}
		}
	}()
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	t.Logf("flooder: %d sent, %d errors in %v (%.0f msg/s on one core); %d received", o.res.Sent, o.res.Errors,
		o.res.Elapsed.Round(time.Millisecond), o.res.Rate(), o.got)
	if o.res.Sent < 1000 {
		t.Fatalf("the flooder sent only %d datagrams in %v", o.res.Sent, o.res.Elapsed)
	}
	if o.got == 0 || uint64(o.got) > o.res.Sent {
		t.Errorf("%d datagrams arrived of %d sent", o.got, o.res.Sent)
	}
	if o.badSrc != 0 {
		t.Errorf("%d datagrams arrived from a source that is not a spoofed one", o.badSrc)
	}
}
