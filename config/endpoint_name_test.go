//go:build unix

package config

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestEndpointName: a DNS name with a port is kept for the daemon to
// resolve (no lookup at load time); IP literals stay literals; bad names
// are FILE:LINE: peer.endpoint errors.
func TestEndpointName(t *testing.T) {
	f := newFixture(t)
	for in, want := range map[string]struct {
		name string
		port uint16
		ap   string
	}{
		"gw-b.example.net:51900":  {"gw-b.example.net", 51900, ""},
		"GW.Example.NET.:1":       {"GW.Example.NET", 1, ""},
		"localhost:51820":         {"localhost", 51820, ""},
		"198.18.0.2:51900":        {"", 0, "198.18.0.2:51900"},
		"[fd00::2]:51900":         {"", 0, "[fd00::2]:51900"},
		"[::ffff:198.18.0.2]:123": {"", 0, "198.18.0.2:123"},
	} {
		_, cfg, err := f.load(t, "gm0.toml", edit(t, baseDoc, `"198.18.0.2:51900"`, `"`+in+`"`))
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		p := cfg.Peers[0]
		var ap netip.AddrPort
		if want.ap != "" {
			ap = netip.MustParseAddrPort(want.ap)
		}
		if p.EndpointName != want.name || p.EndpointPort != want.port || p.Endpoint != ap || p.EndpointLine != 10 {
			t.Errorf("%q: name %q port %d endpoint %v line %d, want %+v line 10", in, p.EndpointName, p.EndpointPort, p.Endpoint, p.EndpointLine, want)
		}
	}
	// A name is an endpoint: no listen_port needed.
	doc := edit(t, baseDoc, "listen_port = 51900\n", "", `"198.18.0.2:51900"`, `"gw-b.example.net:51900"`)
	if _, _, err := f.load(t, "gm0.toml", doc); err != nil {
		t.Errorf("name endpoint without listen_port: %v", err)
	}
	for in, msg := range map[string]string{
		"gw-b.example.net":                          "is not IP:port or NAME:port",
		"gw-b.example.net:0":                        "has port 0",
		"gw-b.example.net:65536":                    "is not a number in 1..65535",
		"gw-b.example.net:+5":                       "is not a number in 1..65535",
		"-gw.example:1":                             "starts or ends with '-'",
		"gw..example:1":                             "1..63 bytes",
		"198.18.0:1":                                "all digits",
		"[gw.example]:1":                            "is not a valid host name", // brackets hold IPv6 only
		"fd00::2:51900":                             "is not IP:port or NAME:port",
		strings.Repeat("a", 64) + ".example:1":      "1..63 bytes",
		strings.Repeat("abcdefgh.", 29) + "ab:5000": "1..253 bytes",
	} {
		path, _, err := f.load(t, "gm0.toml", edit(t, baseDoc, `"198.18.0.2:51900"`, `"`+in+`"`))
		var ce *Error
		if !errors.As(err, &ce) || ce.File != path || ce.Line != 10 || ce.Key != "peer.endpoint" || !strings.Contains(err.Error(), msg) {
			t.Errorf("endpoint %q: %v; want %s:10 peer.endpoint ... %s", in, err, path, msg)
		}
	}
}
