package control

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"
)

// FuzzRequest feeds arbitrary bytes to the control socket's request reader,
// as a local client could send them: it must never panic or hang, must
// refuse requests longer than MaxRequestSize, and must accept exactly the
// newline-terminated lines that are a JSON request object.
func FuzzRequest(f *testing.F) {
	f.Add([]byte(`{"op":"status"}` + "\n"))
	f.Add([]byte(`{"op":"status","extra":[1,2,3]}` + "\n"))
	f.Add([]byte(`{"op":` + "\n"))
	f.Add([]byte("\n"))
	f.Add([]byte(`{"op":"status"}`)) // no newline: the client closes
	f.Add(append(bytes.Repeat([]byte(" "), MaxRequestSize), '\n'))
	f.Add([]byte(`{"op":"\u0000\ud800"}` + "\n"))
	f.Add([]byte(`{"op":"status","pad":"` + strings.Repeat("x", 1000) + `"}` + "\n")) // longer than the reader's buffer
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		defer server.Close()
		go func() {
			client.SetWriteDeadline(time.Now().Add(time.Second))
			client.Write(data)
			client.Close()
		}()
		server.SetDeadline(time.Now().Add(2 * time.Second))
		req, err := readRequest(server)

		line, _, hasNewline := bytes.Cut(data, []byte("\n"))
		var want Request
		valid := hasNewline && len(line)+1 <= MaxRequestSize && json.Unmarshal(line, &want) == nil
		switch {
		case valid && err != nil:
			t.Fatalf("valid request %q refused: %v", line, err)
		case !valid && err == nil:
			t.Fatalf("invalid request %q accepted as %+v", data, req)
		case err == nil && req.Op != want.Op:
			t.Fatalf("op %q, want %q", req.Op, want.Op)
		case err != nil && !strings.HasPrefix(err.Error(), "control: "):
			t.Fatalf("error without the control: prefix: %v", err)
		}
	})
}
