package config

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/internal/sm2pem"
)

// build validates the indexed document and returns the typed Config.
func (p *parseState) build() (*Config, error) {
	cfg := &Config{Path: p.file}
	raw, ok := p.doc["interface"]
	if !ok {
		return nil, &Error{File: p.file, Key: "interface", Msg: "is missing: the file needs an [interface] section"}
	}
	im, ok := raw.(map[string]any)
	if !ok {
		return nil, &Error{File: p.file, Line: p.ifaceHeader, Key: "interface",
			Msg: fmt.Sprintf("must be a table ([interface]), not %s", typeName(raw))}
	}
	is := &section{p: p, m: im, prefix: "interface", lines: p.ifaceLines, header: p.ifaceHeader}
	if err := p.buildInterface(is, &cfg.Interface); err != nil {
		return nil, err
	}

	peers, _ := p.doc["peer"].([]map[string]any) // index checked the type
	cfg.Peers = make([]Peer, len(peers))
	// index saw one "peer" key per [[peer]] header; should that ever
	// disagree with the decoded array, lines are dropped, not misplaced.
	if len(p.peerLines) != len(peers) {
		p.peerLines = make([]map[string]int, len(peers))
		p.peerHeaders = make([]int, len(peers))
	}
	for i, pm := range peers {
		ps := &section{p: p, m: pm, prefix: "peer", lines: p.peerLines[i], header: p.peerHeaders[i], peer: p.peerLabels[i]}
		if err := p.buildPeer(ps, cfg, i); err != nil {
			return nil, err
		}
	}
	if err := p.checkOverlaps(cfg.Peers); err != nil {
		return nil, err
	}
	if cfg.Interface.ListenPort == 0 {
		for i := range cfg.Peers {
			if !cfg.Peers[i].Endpoint.IsValid() && cfg.Peers[i].EndpointName == "" {
				return nil, is.errorf("listen_port", "is required because peer %q has no endpoint, so it must be able to reach this side",
					cfg.Peers[i].Name)
			}
		}
	}
	return cfg, nil
}

func (p *parseState) buildInterface(s *section, ifc *Interface) error {
	// name
	name, ok, err := s.str("name")
	if err != nil {
		return err
	}
	if ok {
		if err := checkIfaceName(name); err != nil {
			return s.errorf("name", "%q is not a valid interface name: %v", name, err)
		}
	} else {
		name = strings.TrimSuffix(filepath.Base(p.file), ".toml")
		if err := checkIfaceName(name); err != nil {
			return s.errorf("name", "is absent and the file name gives %q, which is not a valid interface name (%v); set name", name, err)
		}
	}
	ifc.Name = name

	// private_key_file
	kf, ok, err := s.str("private_key_file")
	if err != nil {
		return err
	}
	if !ok {
		return s.errorf("private_key_file", "is required: the path of a file written by `gmtun genkey`")
	}
	path, line, err := p.readKeyLine(s, "private_key_file", kf)
	if err != nil {
		return err
	}
	ifc.PrivateKeyFile = path
	ifc.PrivateKey, err = parsePrivateKeyText(line) // base64 line or PEM (keyfile.go)
	clear(line)
	if err != nil {
		return s.wrapf("private_key_file", err, "%s does not hold a valid private key: %v", path, err)
	}

	// listen_port
	port, ok, err := s.integer("listen_port", math.MinInt64, math.MaxInt64)
	if err != nil {
		return err
	}
	if ok && (port < 1 || port > 65535) {
		return s.errorf("listen_port", "must be in 1..65535, got %d (omit the key for an ephemeral port)", port)
	}
	ifc.ListenPort = uint16(port)

	// address
	addrs, _, err := s.strings("address")
	if err != nil {
		return err
	}
	for i, a := range addrs {
		pfx, err := parseAddress(a)
		if err != nil {
			return s.errorf("address", "element %d: %v", i+1, err)
		}
		for j, q := range ifc.Addresses {
			if q.Addr() == pfx.Addr() {
				return s.errorf("address", "element %d: %s repeats the address of element %d", i+1, pfx.Addr(), j+1)
			}
		}
		ifc.Addresses = append(ifc.Addresses, pfx)
	}

	// mtu (mtu.go) and the hooks (hooks.go)
	if err := parseMTU(s, ifc); err != nil {
		return err
	}
	if err := parseHooks(s, ifc); err != nil {
		return err
	}

	// suites
	if ifc.Suites, err = parseSuites(s); err != nil {
		return err
	}
	if ifc.Suites == nil { // never zuc-128 unless named (ciphers.DefaultSuites)
		ifc.Suites = slices.Clone(ciphers.DefaultSuites[:])
	}

	// id
	if ifc.ID, err = parseID(s); err != nil {
		return err
	}

	// log_level
	ifc.LogLevel = slog.LevelInfo
	lvl, ok, err := s.str("log_level")
	if err != nil {
		return err
	}
	if ok {
		switch lvl {
		case "debug":
			ifc.LogLevel = slog.LevelDebug
		case "info":
		case "warn":
			ifc.LogLevel = slog.LevelWarn
		case "error":
			ifc.LogLevel = slog.LevelError
		default:
			return s.errorf("log_level", "must be \"debug\", \"info\", \"warn\" or \"error\", got %q", lvl)
		}
	}

	// log_format
	ifc.LogFormat = "text"
	if f, ok, err := s.str("log_format"); err != nil {
		return err
	} else if ok {
		if f != "text" && f != "json" {
			return s.errorf("log_format", "must be \"text\" or \"json\", got %q", f)
		}
		ifc.LogFormat = f
	}

	// table
	if raw, ok := s.m["table"]; ok {
		switch v := raw.(type) {
		case string:
			switch v {
			case "auto":
			case "off":
				ifc.Table.Off = true
			default:
				return s.errorf("table", "must be \"auto\", \"off\" or a table number, got %q", v)
			}
		case int64:
			if v < 1 || v > 1<<32-1 || v == 255 {
				return s.errorf("table", "must be a table number in 1..4294967295 other than 255 (local), got %d", v)
			}
			ifc.Table.ID = uint32(v)
		default:
			return s.errorf("table", "must be \"auto\", \"off\" or a table number, not %s", typeName(raw))
		}
	}

	// fwmark
	mark, _, err := s.integer("fwmark", 0, 1<<32-1)
	if err != nil {
		return err
	}
	ifc.FwMark = uint32(mark)

	// fail_closed
	ifc.FailClosed = true
	if v, ok, err := s.boolean("fail_closed"); err != nil {
		return err
	} else if ok {
		ifc.FailClosed = v
	}

	// run_to_completion
	switch raw := s.m["run_to_completion"]; v := raw.(type) {
	case nil: // absent
		ifc.RunToCompletionAuto = true
	case bool:
		ifc.RunToCompletion = v
	case string:
		if v != "auto" {
			return s.errorf("run_to_completion", "must be true, false or \"auto\", got %q", v)
		}
		ifc.RunToCompletionAuto = true
	default:
		return s.errorf("run_to_completion", "must be true, false or \"auto\", not %s", typeName(raw))
	}

	// metrics_listen (metrics.go)
	if ifc.MetricsListen, err = parseMetricsListen(s); err != nil {
		return err
	}
	return nil
}

func (p *parseState) buildPeer(s *section, cfg *Config, idx int) error {
	peer := &cfg.Peers[idx]
	peer.Line = s.header

	name, ok, err := s.str("name")
	if err != nil {
		return err
	}
	if !ok {
		return s.errorf("name", "is required: every peer needs a unique name for logs and `gmtun show`")
	}
	if err := checkPeerName(name); err != nil {
		return s.errorf("name", "%q is not a valid peer name: %v", name, err)
	}
	for j := range idx {
		if cfg.Peers[j].Name == name {
			return s.errorf("name", "%q is already the name of the peer at line %d", name, cfg.Peers[j].Line)
		}
	}
	peer.Name = name

	pk, ok, err := s.str("public_key")
	if err != nil {
		return err
	}
	if !ok {
		return s.errorf("public_key", "is required: the peer's `gmtun pubkey` output")
	}
	if strings.HasPrefix(pk, "<") && strings.HasSuffix(pk, ">") {
		return s.errorf("public_key", "is still the example placeholder %s; replace it with the peer's `gmtun pubkey` output", pk)
	}
	if peer.PublicKey, err = parsePublicKey(pk); err != nil { // base64 or PEM (keyfile.go)
		return s.wrapf("public_key", err, "is not a valid public key: %v", err)
	}
	if peer.PublicKey.Equal(cfg.Interface.PrivateKey.Public()) {
		return s.errorf("public_key", "is this interface's own public key; a peer must have its own key")
	}
	for j := range idx {
		if cfg.Peers[j].PublicKey.Equal(peer.PublicKey) {
			return s.errorf("public_key", "is also the key of peer %q (line %d); each peer needs its own key",
				cfg.Peers[j].Name, cfg.Peers[j].Line)
		}
	}

	if peer.ID, err = parseID(s); err != nil {
		return err
	}

	if kf, ok, err := s.str("preshared_key_file"); err != nil {
		return err
	} else if ok {
		path, line, err := p.readKeyLine(s, "preshared_key_file", kf)
		if err != nil {
			return err
		}
		psk, err := parsePSK(line)
		clear(line)
		if err != nil {
			return s.errorf("preshared_key_file", "%s does not hold a valid preshared key: %v", path, err)
		}
		peer.PresharedKeyFile, peer.PresharedKey = path, psk
	}

	if ep, ok, err := s.str("endpoint"); err != nil {
		return err
	} else if ok {
		if peer.Endpoint, peer.EndpointName, peer.EndpointPort, err = parseEndpointOrName(ep); err != nil { // endpoint_name.go
			return s.errorf("endpoint", "%v", err)
		}
		peer.EndpointLine = s.line("endpoint")
	}

	ips, _, err := s.strings("allowed_ips")
	if err != nil {
		return err
	}
	for i, a := range ips {
		pfx, err := parseAllowedIP(a)
		if err != nil {
			return s.errorf("allowed_ips", "element %d: %v", i+1, err)
		}
		peer.AllowedIPs = append(peer.AllowedIPs, pfx)
	}

	ka, _, err := s.integer("persistent_keepalive", 0, MaxPersistentKeepalive)
	if err != nil {
		return err
	}
	peer.PersistentKeepalive = time.Duration(ka) * time.Second

	peer.Roaming = true
	if r, ok, err := s.boolean("roaming"); err != nil {
		return err
	} else if ok {
		peer.Roaming = r
	}

	if peer.Suites, err = parseSuites(s); err != nil {
		return err
	}
	if peer.Suites == nil {
		peer.Suites = slices.Clone(cfg.Interface.Suites)
	}
	return nil
}

// readKeyLine resolves a key file path written under key, reads the file
// with the permission checks of readSecret, and returns the resolved path
// and the file's single non-blank line, in a buffer of its own that the
// caller wipes after parsing (the file's text is wiped here).
func (p *parseState) readKeyLine(s *section, key, path string) (string, []byte, error) {
	if path == "" {
		return "", nil, s.errorf(key, "must not be empty")
	}
	if name, ok := strings.CutPrefix(path, "credential:"); ok {
		if name == "" || strings.ContainsRune(name, '/') || name == "." || name == ".." {
			return "", nil, s.errorf(key, "%q does not name a systemd credential (credential:NAME, NAME without '/')", path)
		}
		dir := p.loader.getenv("CREDENTIALS_DIRECTORY")
		if dir == "" {
			return "", nil, s.errorf(key, "names systemd credential %q but $CREDENTIALS_DIRECTORY is not set (use LoadCredential= in the unit)", name)
		}
		path = filepath.Join(dir, name)
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(p.dir, path)
	}
	data, err := p.loader.readSecret(path)
	if err != nil {
		return "", nil, s.wrapf(key, err, "%v", err)
	}
	defer clear(data)
	if key == "private_key_file" && sm2pem.IsPEM(data) { // a PEM key spans lines (keyfile.go)
		return path, bytes.Clone(data), nil
	}
	var lines [][]byte
	for l := range bytes.Lines(data) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, bytes.TrimSpace(l))
		}
	}
	if len(lines) != 1 {
		return "", nil, s.errorf(key, "%s must contain exactly one key line, found %d", path, len(lines))
	}
	return path, bytes.Clone(lines[0]), nil
}

// parsePSK decodes a preshared key line: padded base64 of 32 bytes, what
// `gmtun genpsk` prints. Strict decoding rejects non-zero padding bits, so
// each key has exactly one accepted text form.
func parsePSK(line []byte) (*[PresharedKeySize]byte, error) {
	b := make([]byte, base64.StdEncoding.DecodedLen(len(line)))
	defer clear(b)
	n, err := base64.StdEncoding.Strict().Decode(b, line)
	if err != nil {
		return nil, fmt.Errorf("not base64: %v", err)
	}
	if n != PresharedKeySize {
		return nil, fmt.Errorf("decodes to %d bytes, want %d", n, PresharedKeySize)
	}
	var k [PresharedKeySize]byte
	copy(k[:], b[:n])
	return &k, nil
}

// parseSuites reads the suites key of s: nil if absent, else a non-empty
// list of known suites without repeats.
func parseSuites(s *section) ([]ciphers.SuiteID, error) {
	names, ok, err := s.strings("suites")
	if err != nil || !ok {
		return nil, err
	}
	if len(names) == 0 {
		return nil, s.errorf("suites", "must list at least one suite (known: %s)", knownSuites())
	}
	ids := make([]ciphers.SuiteID, 0, len(names))
	for _, n := range names {
		id, err := ciphers.ParseSuite(n)
		if err != nil {
			return nil, s.wrapf("suites", err, "unknown suite %q (known: %s)", n, knownSuites())
		}
		if slices.Contains(ids, id) {
			return nil, s.errorf("suites", "lists %q twice", n)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func knownSuites() string {
	names := make([]string, len(ciphers.Suites))
	for i, id := range ciphers.Suites {
		names[i] = id.String()
	}
	return strings.Join(names, ", ")
}

// parseID reads the id key of s (default DefaultID).
func parseID(s *section) (string, error) {
	id, ok, err := s.str("id")
	if err != nil {
		return "", err
	}
	if !ok {
		return DefaultID, nil
	}
	if id == "" {
		return "", s.errorf("id", "must not be empty (omit it for the default %q)", DefaultID)
	}
	if len(id) > MaxIDLen {
		return "", s.errorf("id", "is %d bytes; an SM2 user ID is at most %d bytes", len(id), MaxIDLen)
	}
	return id, nil
}
