// Package sdnotify sends service status notifications to systemd over the
// sd_notify datagram protocol (sd_notify(3), "Notify Socket Protocol").
//
// The protocol is one AF_UNIX SOCK_DGRAM datagram per notification to the
// socket named by $NOTIFY_SOCKET (a path, or an abstract address starting
// with '@'), carrying newline-separated VARIABLE=VALUE assignments such as
// READY=1 or STATUS=… . When $NOTIFY_SOCKET is unset the service does not
// run under a notify-type unit and every call is a no-op.
//
// The package depends only on the standard library and golang.org/x/sys
// (for CLOCK_MONOTONIC); it keeps no state between calls.
package sdnotify

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// EnvSocket is the environment variable naming the notification socket.
const EnvSocket = "NOTIFY_SOCKET"

// Well-known assignments (sd_notify(3)).
const (
	// Ready tells the service manager that start-up (or a reload) is
	// finished.
	Ready = "READY=1"
	// Reloading tells the service manager that the service is reloading
	// its configuration; it must be followed by Ready when done. systemd
	// ≥ 253 also wants a MONOTONIC_USEC= assignment in the same message
	// (see MonotonicUsec).
	Reloading = "RELOADING=1"
	// Stopping tells the service manager that the service is shutting
	// down.
	Stopping = "STOPPING=1"
)

// Status returns a STATUS= assignment carrying a one-line, free-form
// status text shown by systemctl status. Newlines in s are replaced by
// spaces, since they would end the assignment.
func Status(s string) string {
	return "STATUS=" + strings.ReplaceAll(s, "\n", " ")
}

// Notify sends the given assignments as one datagram to the socket named by
// socket (normally os.Getenv(EnvSocket)). It returns (false, nil) when
// socket is empty: the process is not supervised by a notify-type unit.
// An assignment must not contain a newline.
func Notify(socket string, assignments ...string) (sent bool, err error) {
	if socket == "" {
		return false, nil
	}
	if len(assignments) == 0 {
		return false, errors.New("sdnotify: nothing to send")
	}
	for _, a := range assignments {
		if strings.ContainsRune(a, '\n') || !strings.Contains(a, "=") {
			return false, fmt.Errorf("sdnotify: malformed assignment %q", a)
		}
	}
	addr, err := socketAddr(socket)
	if err != nil {
		return false, err
	}
	conn, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		return false, fmt.Errorf("sdnotify: %w", err)
	}
	defer conn.Close()
	msg := strings.Join(assignments, "\n") + "\n"
	n, err := conn.Write([]byte(msg))
	if err != nil {
		return false, fmt.Errorf("sdnotify: %w", err)
	}
	if n != len(msg) {
		return false, fmt.Errorf("sdnotify: short write (%d of %d bytes)", n, len(msg))
	}
	return true, nil
}

// socketAddr parses $NOTIFY_SOCKET. Paths must be absolute; '@' names an
// abstract socket (Linux), which the net package encodes the same way.
// systemd's "vsock:" addresses (for VMs) are not supported.
func socketAddr(socket string) (*net.UnixAddr, error) {
	switch {
	case strings.HasPrefix(socket, "/"), strings.HasPrefix(socket, "@"):
		return &net.UnixAddr{Name: socket, Net: "unixgram"}, nil
	default:
		return nil, fmt.Errorf("sdnotify: unsupported %s address %q", EnvSocket, socket)
	}
}

// MonotonicUsec returns a MONOTONIC_USEC= assignment with the current
// CLOCK_MONOTONIC time in microseconds, as systemd wants it next to
// Reloading.
func MonotonicUsec() (string, error) {
	us, err := monotonicMicros()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("MONOTONIC_USEC=%d", us), nil
}
