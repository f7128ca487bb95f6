package sdnotify

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listen opens a datagram socket the way systemd does and returns its
// address and a function reading one datagram.
func listen(t *testing.T, name string) (string, func() string) {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return name, func() string {
		t.Helper()
		buf := make([]byte, 4096)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("reading the notification: %v", err)
		}
		return string(buf[:n])
	}
}

func TestNotifyPath(t *testing.T) {
	sock, read := listen(t, filepath.Join(t.TempDir(), "notify"))
	sent, err := Notify(sock, Ready, Status("up: 2 peers"))
	if err != nil || !sent {
		t.Fatalf("Notify = %v, %v", sent, err)
	}
	if got, want := read(), "READY=1\nSTATUS=up: 2 peers\n"; got != want {
		t.Errorf("datagram %q, want %q", got, want)
	}
	if _, err := Notify(sock, Stopping); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "STOPPING=1\n" {
		t.Errorf("datagram %q, want STOPPING=1", got)
	}
}

func TestNotifyAbstract(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("abstract sockets are Linux-only")
	}
	sock, read := listen(t, fmt.Sprintf("@gmtun-sdnotify-test-%d", rand.Uint64()))
	if sent, err := Notify(sock, Reloading, "MONOTONIC_USEC=1"); err != nil || !sent {
		t.Fatalf("Notify = %v, %v", sent, err)
	}
	if got := read(); got != "RELOADING=1\nMONOTONIC_USEC=1\n" {
		t.Errorf("datagram %q", got)
	}
}

func TestNotifyUnset(t *testing.T) {
	sent, err := Notify("", Ready)
	if sent || err != nil {
		t.Errorf("Notify without a socket = %v, %v; want false, nil", sent, err)
	}
}

func TestNotifyErrors(t *testing.T) {
	dir := t.TempDir()
	sock, _ := listen(t, filepath.Join(dir, "notify"))
	for _, tc := range []struct {
		socket string
		a      []string
		want   string
	}{
		{sock, nil, "sdnotify: nothing to send"},
		{sock, []string{"READY=1\nSTATUS=x"}, `sdnotify: malformed assignment "READY=1\nSTATUS=x"`},
		{sock, []string{"READY"}, `sdnotify: malformed assignment "READY"`},
		{"vsock:2:1234", []string{Ready}, `sdnotify: unsupported NOTIFY_SOCKET address "vsock:2:1234"`},
		{"relative/path", []string{Ready}, `sdnotify: unsupported NOTIFY_SOCKET address "relative/path"`},
	} {
		sent, err := Notify(tc.socket, tc.a...)
		if sent || err == nil || err.Error() != tc.want {
			t.Errorf("Notify(%q, %q) = %v, %v; want error %q", tc.socket, tc.a, sent, err, tc.want)
		}
	}
	// Nobody listening: the send fails and says so.
	sent, err := Notify(filepath.Join(dir, "absent"), Ready)
	if sent || err == nil || !strings.HasPrefix(err.Error(), "sdnotify: ") {
		t.Errorf("Notify to a missing socket = %v, %v", sent, err)
	}
}

func TestStatusStripsNewlines(t *testing.T) {
	if got := Status("a\nb"); got != "STATUS=a b" {
		t.Errorf("Status = %q", got)
	}
}

func TestMonotonicUsec(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	parse := func() uint64 {
		t.Helper()
		a, err := MonotonicUsec()
		if err != nil {
			t.Fatal(err)
		}
		v, ok := strings.CutPrefix(a, "MONOTONIC_USEC=")
		if !ok {
			t.Fatalf("assignment %q", a)
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("assignment %q: %v", a, err)
		}
		return n
	}
	first := parse()
	time.Sleep(20 * time.Millisecond)
	second := parse()
	if second-first < 20000 || second-first > 10e6 {
		t.Errorf("20 ms apart the clock moved %d µs", second-first)
	}
	// CLOCK_MONOTONIC never runs ahead of the boot-time clock that
	// /proc/uptime reports (they differ by time spent suspended).
	if b, err := os.ReadFile("/proc/uptime"); err == nil {
		up, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
		if err == nil && float64(second) > (up+1)*1e6 {
			t.Errorf("MONOTONIC_USEC %d is past the uptime %.2f s", second, up)
		}
	}
}
