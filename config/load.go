package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// loader holds what Load takes from the process environment, so that tests
// and the fuzz target can substitute it.
type loader struct {
	// getenv reads an environment variable ($CREDENTIALS_DIRECTORY).
	getenv func(string) string
	// readSecret reads a key file after checking that it is a regular
	// file private to the effective user (see readSecretFile).
	readSecret func(path string) ([]byte, error)
	// lenientFile turns the configuration file's own permission
	// problems (configFileProblems) into warnings instead of an error:
	// for `gmtun check`, never for the daemon.
	lenientFile bool
}

func defaultLoader() *loader {
	return &loader{getenv: os.Getenv, readSecret: readSecretFile}
}

// load reads path and hands its bytes to parse.
func (l *loader) load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot open the configuration: " + pathErrText(err), Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot stat the configuration: " + pathErrText(err), Err: err}
	}
	if !fi.Mode().IsRegular() {
		return nil, &Error{File: path, Msg: "is not a regular file"}
	}
	problems := configFileProblems(path, fi)
	if len(problems) > 0 && !l.lenientFile {
		return nil, &Error{File: path, Msg: problems[0] + "; refusing to use it (gmtun check only warns)"}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read the configuration: " + pathErrText(err), Err: err}
	}
	if len(data) > maxFileSize {
		return nil, &Error{File: path, Msg: fmt.Sprintf("is larger than %d bytes", maxFileSize)}
	}
	cfg, err := l.parse(path, data)
	clear(data) // the text may hold comments or values nobody needs in memory
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		cfg.Warnings = append(cfg.Warnings, path+" "+p)
	}
	return cfg, nil
}

// LoadForCheck is Load for `gmtun check`: a configuration file that is
// writable by group or others, or owned by another user than root or the
// effective user, is reported in Config.Warnings instead of failing the
// load (Load, which the daemon uses, refuses it).
func LoadForCheck(path string) (*Config, error) {
	l := defaultLoader()
	l.lenientFile = true
	return l.load(path)
}

// pathErrText returns the cause of a *PathError without repeating the path.
func pathErrText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// parse decodes and validates the document data read from file.
func (l *loader) parse(file string, data []byte) (*Config, error) {
	var doc map[string]any
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{File: file, Line: pe.Position.Line, Key: pe.LastKey, Msg: "invalid TOML: " + pe.Message, Err: err}
		}
		return nil, &Error{File: file, Msg: "invalid TOML: " + strings.TrimPrefix(err.Error(), "toml: "), Err: err}
	}
	p := &parseState{loader: l, file: file, dir: filepath.Dir(file), md: md, doc: doc}
	if err := p.index(keyLines(data, md.Keys())); err != nil {
		return nil, err
	}
	return p.build()
}

// parseState carries one parse: the decoded document and the line of
// every key.
type parseState struct {
	loader *loader
	file   string
	dir    string
	md     toml.MetaData
	doc    map[string]any

	// ifaceHeader is the line of [interface] (0 if it was not written as
	// a header); ifaceLines maps interface keys to lines.
	ifaceHeader int
	ifaceLines  map[string]int
	// peerHeaders and peerLines are the same per [[peer]] section.
	peerHeaders []int
	peerLines   []map[string]int
	// peerLabels name peers in errors: the name if valid, else "#N".
	peerLabels []string
}

// Schema: the keys of each section, exactly as they must be spelled.
var (
	topKeys       = []string{"interface", "peer"}
	interfaceKeys = []string{"name", "private_key_file", "listen_port", "address", "mtu", "suites",
		"id", "log_level", "log_format", "table", "fwmark", "fail_closed", "run_to_completion",
		"metrics_listen"}
	peerKeys = []string{"name", "public_key", "endpoint", "allowed_ips", "persistent_keepalive",
		"preshared_key_file", "id", "roaming", "suites"}
)

// index walks every key of the document in order: it rejects unknown and
// miscased keys and records the line of each known one.
func (p *parseState) index(lines []int) error {
	p.ifaceLines = map[string]int{}
	peers, _ := p.doc["peer"].([]map[string]any)
	for i, pm := range peers {
		label := fmt.Sprintf("#%d", i+1)
		if n, ok := pm["name"].(string); ok && checkPeerName(n) == nil {
			label = n
		}
		p.peerLabels = append(p.peerLabels, label)
	}
	peer := -1
	for i, k := range p.md.Keys() {
		line := 0
		if lines != nil {
			line = lines[i]
		}
		if !contains(topKeys, k[0]) {
			return p.unknownKey(line, k[:1], "", topKeys)
		}
		if k[0] == "peer" {
			if t := p.md.Type("peer"); t != "ArrayHash" {
				return &Error{File: p.file, Line: line, Key: "peer",
					Msg: "must be written as [[peer]] sections (an array of tables), not as " + describeTOMLType(t)}
			}
			if len(k) == 1 {
				peer++
				p.peerHeaders = append(p.peerHeaders, line)
				p.peerLines = append(p.peerLines, map[string]int{})
				continue
			}
			label := ""
			if peer >= 0 && peer < len(p.peerLabels) {
				label = p.peerLabels[peer]
			}
			if len(k) > 2 || !contains(peerKeys, k[1]) {
				return p.unknownKey(line, k, label, peerKeys)
			}
			if peer >= 0 {
				p.peerLines[peer][k[1]] = line
			}
			continue
		}
		// k[0] == "interface"
		switch {
		case len(k) == 1:
			p.ifaceHeader = line
		case len(k) > 2 || !contains(interfaceKeys, k[1]):
			return p.unknownKey(line, k, "", interfaceKeys)
		default:
			p.ifaceLines[k[1]] = line
		}
	}
	return nil
}

// unknownKey reports key k (its last part unknown), with a hint when a
// known key differs only in case or by a small typo.
func (p *parseState) unknownKey(line int, k toml.Key, peer string, known []string) error {
	last := k[len(k)-1]
	msg := "unknown key"
	if len(k) <= 2 {
		for _, want := range known {
			if strings.EqualFold(want, last) {
				msg += fmt.Sprintf(" (keys are case-sensitive: write %q)", want)
				break
			}
			if editDistance(want, last) <= 2 {
				msg += fmt.Sprintf(" (did you mean %q?)", want)
				break
			}
		}
	}
	return &Error{File: p.file, Line: line, Key: strings.Join(k, "."), Peer: peer, Msg: msg}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// editDistance is the Levenshtein distance between two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// describeTOMLType turns a MetaData.Type string into words.
func describeTOMLType(t string) string {
	switch t {
	case "Hash":
		return "a single table"
	case "Array":
		return "an inline array"
	case "":
		return "dotted keys"
	}
	return "a " + strings.ToLower(t)
}
