//go:build unix

package config

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/internal/testenv"
)

// testKeys are the keys a test environment substitutes into documents.
type testKeys struct {
	own        *handshake.PrivateKey
	pub1, pub2 *handshake.PublicKey
}

func newTestKeys(t *testing.T) testKeys {
	t.Helper()
	var ks testKeys
	var err error
	if ks.own, err = handshake.GeneratePrivateKey(rand.Reader); err != nil {
		t.Fatal(err)
	}
	for _, p := range []**handshake.PublicKey{&ks.pub1, &ks.pub2} {
		k, err := handshake.GeneratePrivateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		*p = k.Public()
	}
	return ks
}

// writeFile writes data to dir/name with the given mode (chmod after
// creation, so the umask does not interfere).
func writeFile(t *testing.T, dir, name, data string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// edit returns baseDoc with each (old, new) pair replaced once; old must
// occur.
func edit(t *testing.T, doc string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(doc, pairs[i]) {
			t.Fatalf("edit: %q not in document", pairs[i])
		}
		doc = strings.Replace(doc, pairs[i], pairs[i+1], 1)
	}
	return doc
}

// fixture is a temp directory with a valid private key file.
type fixture struct {
	dir     string
	keyFile string
	keys    testKeys
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), keys: newTestKeys(t)}
	f.keyFile = writeFile(t, f.dir, "gm0.key", f.keys.own.Encode()+"\n", 0o600)
	return f
}

// expand substitutes the fixture's paths and keys into s.
func (f *fixture) expand(s string) string {
	return strings.NewReplacer(
		"KEYFILE", f.keyFile,
		"DIR", f.dir,
		"OWNPUB", f.keys.own.Public().String(),
		"PUB1", f.keys.pub1.String(),
		"PUB2", f.keys.pub2.String(),
	).Replace(s)
}

// load writes doc (expanded) to dir/name and loads it.
func (f *fixture) load(t *testing.T, name, doc string) (string, *Config, error) {
	t.Helper()
	path := writeFile(t, f.dir, name, f.expand(doc), 0o600)
	cfg, err := Load(path)
	return path, cfg, err
}

func TestLoadValid(t *testing.T) {
	f := newFixture(t)
	psk := make([]byte, PresharedKeySize)
	for i := range psk {
		psk[i] = byte(i)
	}
	writeFile(t, f.dir, "c.psk", "\n  "+b64(psk)+"  \n\n", 0o400)
	doc := `# comment
[interface]
name = "gm7"
private_key_file = "gm0.key"   # relative: resolved against the config dir
listen_port = 1
address = ["198.19.0.1/24", "2001:db8::1/64"]
mtu = 1280
suites = ["zuc-128", "sm4-gcm"]
id = "site-a@example"
log_level = "debug"
log_format = "json"
table = 1234
fwmark = 4294967295

[[peer]]
name = "b.site_1-x"
public_key = "PUB1"
id = "peer-b"
preshared_key_file = "DIR/c.psk"
endpoint = "[::ffff:198.18.0.2]:65535"
allowed_ips = ["198.19.0.0/25", "10.0.0.0/8", "::/0"]
persistent_keepalive = 65535
roaming = false
suites = ["zuc-256"]

[[peer]]
name = "c"
public_key = "PUB2"
allowed_ips = []
`
	path, cfg, err := f.load(t, "any.toml", doc)
	if err != nil {
		t.Fatal(err)
	}
	ifc := cfg.Interface
	if cfg.Path != path || ifc.Name != "gm7" || ifc.PrivateKeyFile != f.keyFile || !ifc.PrivateKey.Equal(f.keys.own) ||
		ifc.ListenPort != 1 || ifc.MTU != 1280 || ifc.ID != "site-a@example" || ifc.LogLevel != slog.LevelDebug ||
		ifc.LogFormat != "json" || ifc.Table != (RouteTable{ID: 1234}) || ifc.FwMark != 1<<32-1 {
		t.Errorf("interface = %+v", ifc)
	}
	wantAddrs := []netip.Prefix{netip.MustParsePrefix("198.19.0.1/24"), netip.MustParsePrefix("2001:db8::1/64")}
	if !slices.Equal(ifc.Addresses, wantAddrs) {
		t.Errorf("addresses = %v", ifc.Addresses)
	}
	if !slices.Equal(ifc.Suites, []ciphers.SuiteID{ciphers.ZUC128, ciphers.SM4GCM}) {
		t.Errorf("suites = %v", ifc.Suites)
	}
	if len(cfg.Peers) != 2 {
		t.Fatalf("%d peers", len(cfg.Peers))
	}
	b := cfg.Peers[0]
	if b.Name != "b.site_1-x" || b.Line != 15 || !b.PublicKey.Equal(f.keys.pub1) || b.ID != "peer-b" ||
		b.PresharedKeyFile != filepath.Join(f.dir, "c.psk") || b.PresharedKey == nil || !bytes.Equal(b.PresharedKey[:], psk) ||
		b.Endpoint != netip.MustParseAddrPort("198.18.0.2:65535") || b.PersistentKeepalive != 65535*time.Second ||
		b.Roaming || !slices.Equal(b.Suites, []ciphers.SuiteID{ciphers.ZUC256}) {
		t.Errorf("peer b = %+v", b)
	}
	wantIPs := []netip.Prefix{netip.MustParsePrefix("198.19.0.0/25"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::/0")}
	if !slices.Equal(b.AllowedIPs, wantIPs) {
		t.Errorf("allowed ips = %v", b.AllowedIPs)
	}
	c := cfg.Peers[1]
	if c.Name != "c" || c.Line != 26 || c.ID != DefaultID || c.PresharedKey != nil || c.Endpoint.IsValid() ||
		len(c.AllowedIPs) != 0 || !c.Roaming || c.PersistentKeepalive != 0 ||
		!slices.Equal(c.Suites, ifc.Suites) {
		t.Errorf("peer c = %+v", c)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %q", cfg.Warnings)
	}
}

func TestLoadDefaults(t *testing.T) {
	f := newFixture(t)
	doc := "[interface]\nprivate_key_file = \"KEYFILE\"\n"
	_, cfg, err := f.load(t, "wan0.toml", doc)
	if err != nil {
		t.Fatal(err)
	}
	ifc := cfg.Interface
	if ifc.Name != "wan0" || ifc.ListenPort != 0 || ifc.MTU != DefaultMTU || ifc.ID != DefaultID ||
		ifc.LogLevel != slog.LevelInfo || ifc.LogFormat != "text" || ifc.Table != (RouteTable{}) || ifc.FwMark != 0 || len(ifc.Addresses) != 0 {
		t.Errorf("interface = %+v", ifc)
	}
	if !slices.Equal(ifc.Suites, []ciphers.SuiteID{ciphers.SM4GCM, ciphers.ZUC256}) {
		t.Errorf("default suites = %v (zuc-128 only when named)", ifc.Suites)
	}
	if len(cfg.Peers) != 0 {
		t.Errorf("peers = %v", cfg.Peers)
	}
	// mtu = 0 means the default too; table "off"; inline interface table.
	_, cfg, err = f.load(t, "x.toml", "interface = { name = \"gm1\", private_key_file = \"KEYFILE\", mtu = 0, table = \"off\" }\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Interface.MTU != DefaultMTU || !cfg.Interface.Table.Off || cfg.Interface.Name != "gm1" {
		t.Errorf("interface = %+v", cfg.Interface)
	}
}

// TestLoadRefusesWritableConfig: a configuration file writable by group
// or others is an error for Load (the daemon) and a warning for
// LoadForCheck (gmtun check).
func TestLoadRefusesWritableConfig(t *testing.T) {
	f := newFixture(t)
	path, cfg, err := f.load(t, "gm0.toml", baseDoc)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 0 {
		t.Fatalf("warnings for mode 0600: %q", cfg.Warnings)
	}
	for _, mode := range []os.FileMode{0o666, 0o620, 0o602} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		problem := fmt.Sprintf("%s is writable by group or others (mode %04o); whoever can write it controls the tunnel (chmod go-w %s)", path, mode, path)
		_, err = Load(path)
		var ce *Error
		if !errors.As(err, &ce) || ce.File != path || !strings.Contains(err.Error(), strings.TrimPrefix(problem, path+" ")) {
			t.Errorf("Load of a mode %04o config: %v, want an *Error saying %q", mode, err, problem)
		}
		cfg, err = LoadForCheck(path)
		if err != nil {
			t.Fatalf("LoadForCheck of a mode %04o config: %v", mode, err)
		}
		if len(cfg.Warnings) != 1 || cfg.Warnings[0] != problem {
			t.Errorf("LoadForCheck warnings = %q, want [%q]", cfg.Warnings, problem)
		}
	}
	// Readable by others is fine: the file holds no secret.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Errorf("Load of a mode 0644 config: %v", err)
	}
}

// TestConfigFileOwner: a configuration file owned by another user than
// root or the effective user is a problem (checked on a file owned by
// another uid, which needs root to create; otherwise on a synthetic
// FileInfo).
func TestConfigFileOwner(t *testing.T) {
	f := newFixture(t)
	path, _, err := f.load(t, "gm0.toml", baseDoc)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if p := configFileProblems(path, fi); len(p) != 0 {
		t.Fatalf("problems for our own 0600 file: %q", p)
	}
	other := uint32(os.Geteuid() + 4242)
	if os.Geteuid() != 0 {
		st := *fi.Sys().(*syscall.Stat_t)
		st.Uid = other
		fi = fakeInfo{fi, &st}
	} else {
		if err := os.Chown(path, int(other), -1); err != nil {
			t.Fatal(err)
		}
		if fi, err = os.Stat(path); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("owned by uid %d", other)) {
			t.Errorf("Load of a config owned by uid %d: %v", other, err)
		}
	}
	p := configFileProblems(path, fi)
	if len(p) != 1 || !strings.Contains(p[0], fmt.Sprintf("is owned by uid %d, neither root nor this process's uid", other)) {
		t.Errorf("problems = %q", p)
	}
}

type fakeInfo struct {
	os.FileInfo
	sys any
}

func (f fakeInfo) Sys() any { return f.sys }

func TestLoadCredential(t *testing.T) {
	f := newFixture(t)
	credDir := t.TempDir()
	writeFile(t, credDir, "gm0.key", f.keys.own.Encode(), 0o400)
	doc := edit(t, baseDoc, `"KEYFILE"`, `"credential:gm0.key"`)
	path := writeFile(t, f.dir, "gm0.toml", f.expand(doc), 0o600)
	l := defaultLoader()
	l.getenv = func(k string) string {
		if k == "CREDENTIALS_DIRECTORY" {
			return credDir
		}
		return ""
	}
	cfg, err := l.load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Interface.PrivateKeyFile != filepath.Join(credDir, "gm0.key") || !cfg.Interface.PrivateKey.Equal(f.keys.own) {
		t.Errorf("interface = %+v", cfg.Interface)
	}
	l.getenv = func(string) string { return "" }
	_, err = l.load(path)
	want := path + `:3: key "interface.private_key_file": names systemd credential "gm0.key" but $CREDENTIALS_DIRECTORY is not set (use LoadCredential= in the unit)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func b64(b []byte) string {
	const enc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var s strings.Builder
	for i := 0; i < len(b); i += 3 {
		var v uint32
		n := min(3, len(b)-i)
		for j := range 3 {
			v <<= 8
			if j < n {
				v |= uint32(b[i+j])
			}
		}
		for j := range 4 {
			if j <= n {
				s.WriteByte(enc[v>>(18-6*j)&63])
			} else {
				s.WriteByte('=')
			}
		}
	}
	return s.String()
}

func TestB64Helper(t *testing.T) {
	// RFC 4648 §10 test vectors, so the helper used for PSK files is right.
	for in, want := range map[string]string{"": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"} {
		if got := b64([]byte(in)); got != want {
			t.Errorf("b64(%q) = %q, want %q", in, got, want)
		}
	}
}

// errorCase is one invalid configuration and its exact error text. In
// doc, KEYFILE, DIR, OWNPUB, PUB1 and PUB2 are substituted; in want, FILE
// is the config path and KEYFILE, DIR as in doc.
type errorCase struct {
	name  string
	file  string // config file name; default gm0.toml
	doc   string
	setup func(t *testing.T, f *fixture)
	want  string
}

func TestLoadErrors(t *testing.T) {
	tests := func(t *testing.T) []errorCase {
		e := func(pairs ...string) string { return edit(t, baseDoc, pairs...) }
		two := baseDoc + secondPeer
		e2 := func(pairs ...string) string { return edit(t, two, pairs...) }
		return []errorCase{
			// Syntax and schema.
			{name: "syntax", doc: e(`listen_port = 51900`, `listen_port = `),
				want: `FILE:4: key "interface.listen_port": invalid TOML: expected value but found '\n' instead`},
			{name: "duplicate key", doc: e(`listen_port = 51900`, "listen_port = 51900\nlisten_port = 1"),
				want: `FILE:5: key "interface.listen_port": invalid TOML: Key 'interface.listen_port' has already been defined.`},
			{name: "top-level case", doc: e(`[interface]`, `[Interface]`),
				want: `FILE:1: key "Interface": unknown key (keys are case-sensitive: write "interface")`},
			{name: "top-level typo", doc: e(`[[peer]]`, `[[peers]]`),
				want: `FILE:7: key "peers": unknown key (did you mean "peer"?)`},
			{name: "top-level unknown", doc: "title = \"x\"\n" + baseDoc,
				want: `FILE:1: key "title": unknown key`},
			{name: "interface typo", doc: e(`listen_port`, `lisen_port`),
				want: `FILE:4: key "interface.lisen_port": unknown key (did you mean "listen_port"?)`},
			{name: "interface case", doc: e(`listen_port`, `Listen_Port`),
				want: `FILE:4: key "interface.Listen_Port": unknown key (keys are case-sensitive: write "listen_port")`},
			{name: "interface unknown", doc: e(`name = "gm0"`, "name = \"gm0\"\nprivate_key = \"x\""),
				want: `FILE:3: key "interface.private_key": unknown key`},
			{name: "interface subtable", doc: baseDoc + "[interface.extra]\n",
				want: `FILE:12: key "interface.extra": unknown key`},
			{name: "interface dotted too deep", doc: e(`address =`, "mtu.x = 1\naddress ="),
				want: `FILE:5: key "interface.mtu.x": unknown key`},
			{name: "peer typo", doc: e(`allowed_ips`, `allowd_ips`),
				want: `FILE:11: key "peer.allowd_ips" (peer "site-b"): unknown key (did you mean "allowed_ips"?)`},
			{name: "peer case", doc: e2(`name = "site-c"`, `Name = "site-c"`),
				want: `FILE:13: key "peer.Name" (peer #2): unknown key (keys are case-sensitive: write "name")`},
			{name: "peer single table", doc: e(`[[peer]]`, `[peer]`),
				want: `FILE:7: key "peer": must be written as [[peer]] sections (an array of tables), not as a single table`},
			{name: "peer inline array", doc: "peer = [{ name = \"x\" }]\n" + baseDoc[:strings.Index(baseDoc, "[[peer]]")],
				want: `FILE:1: key "peer": must be written as [[peer]] sections (an array of tables), not as an inline array`},
			{name: "peer subtable", doc: baseDoc + "[peer.options]\nx = 1\n",
				want: `FILE:12: key "peer.options" (peer "site-b"): unknown key`},
			{name: "peer dotted too deep", doc: baseDoc + "roaming.x = 1\n",
				want: `FILE:12: key "peer.roaming.x" (peer "site-b"): unknown key`},
			{name: "interface array", doc: e(`[interface]`, `[[interface]]`),
				want: `FILE:1: key "interface": must be a table ([interface]), not an array of tables`},
			{name: "interface missing", doc: "[[peer]]\nname = \"a\"\n",
				want: `FILE: key "interface": is missing: the file needs an [interface] section`},
			{name: "interface not table", doc: "interface = 5\n",
				want: `FILE:1: key "interface": must be a table ([interface]), not an integer`},

			// interface.name
			{name: "name type", doc: e(`name = "gm0"`, `name = 0`),
				want: `FILE:2: key "interface.name": must be a string, not an integer`},
			{name: "name empty", doc: e(`name = "gm0"`, `name = ""`),
				want: `FILE:2: key "interface.name": "" is not a valid interface name: it is empty`},
			{name: "name long", doc: e(`name = "gm0"`, `name = "gm0123456789abcd"`),
				want: `FILE:2: key "interface.name": "gm0123456789abcd" is not a valid interface name: it is 16 bytes long; the limit is 15`},
			{name: "name slash", doc: e(`name = "gm0"`, `name = "gm/0"`),
				want: `FILE:2: key "interface.name": "gm/0" is not a valid interface name: it contains '/'; interface names cannot contain '/', ':' or spaces`},
			{name: "name colon", doc: e(`name = "gm0"`, `name = "gm:0"`),
				want: `FILE:2: key "interface.name": "gm:0" is not a valid interface name: it contains ':'; interface names cannot contain '/', ':' or spaces`},
			{name: "name space", doc: e(`name = "gm0"`, `name = "gm 0"`),
				want: `FILE:2: key "interface.name": "gm 0" is not a valid interface name: it contains ' '; interface names cannot contain '/', ':' or spaces`},
			{name: "name dotdot", doc: e(`name = "gm0"`, `name = ".."`),
				want: `FILE:2: key "interface.name": ".." is not a valid interface name: ".." is reserved`},
			{name: "name tab", doc: e(`name = "gm0"`, `name = "gm\t0"`),
				want: `FILE:2: key "interface.name": "gm\t0" is not a valid interface name: it contains byte 0x09; only printable ASCII is allowed`},
			{name: "name from file", file: "a:b.toml", doc: e(`name = "gm0"`, ``),
				want: `FILE:1: key "interface.name": is absent and the file name gives "a:b", which is not a valid interface name (it contains ':'; interface names cannot contain '/', ':' or spaces); set name`},

			// interface.private_key_file and key files
			{name: "key file missing key", doc: e(`private_key_file = "KEYFILE"`, ``),
				want: "FILE:1: key \"interface.private_key_file\": is required: the path of a file written by `gmtun genkey`"},
			{name: "key file type", doc: e(`"KEYFILE"`, `["KEYFILE"]`),
				want: `FILE:3: key "interface.private_key_file": must be a string, not an array`},
			{name: "key file empty path", doc: e(`"KEYFILE"`, `""`),
				want: `FILE:3: key "interface.private_key_file": must not be empty`},
			{name: "key file absent", doc: e(`"KEYFILE"`, `"nonexistent.key"`),
				want: `FILE:3: key "interface.private_key_file": cannot open key file DIR/nonexistent.key: no such file or directory`},
			{name: "key file group readable", setup: func(t *testing.T, f *fixture) { chmod(t, f.keyFile, 0o640) },
				doc: baseDoc, want: `FILE:3: key "interface.private_key_file": key file KEYFILE has mode 0640; it must be 0600 or stricter (chmod 600 KEYFILE)`},
			{name: "key file other readable", setup: func(t *testing.T, f *fixture) { chmod(t, f.keyFile, 0o604) },
				doc: baseDoc, want: `FILE:3: key "interface.private_key_file": key file KEYFILE has mode 0604; it must be 0600 or stricter (chmod 600 KEYFILE)`},
			{name: "key file directory", doc: e(`"KEYFILE"`, `"DIR"`),
				want: `FILE:3: key "interface.private_key_file": key file DIR is not a regular file`},
			{name: "key file empty", setup: func(t *testing.T, f *fixture) { writeFile(t, f.dir, "gm0.key", "\n \n", 0o600) },
				doc: baseDoc, want: `FILE:3: key "interface.private_key_file": KEYFILE must contain exactly one key line, found 0`},
			{name: "key file two lines", setup: func(t *testing.T, f *fixture) {
				writeFile(t, f.dir, "gm0.key", f.keys.own.Encode()+"\n"+f.keys.own.Encode()+"\n", 0o600)
			}, doc: baseDoc, want: `FILE:3: key "interface.private_key_file": KEYFILE must contain exactly one key line, found 2`},
			{name: "key file too large", setup: func(t *testing.T, f *fixture) {
				writeFile(t, f.dir, "gm0.key", strings.Repeat("A", maxSecretFileSize+1), 0o600)
			}, doc: baseDoc, want: `FILE:3: key "interface.private_key_file": key file KEYFILE is larger than 4096 bytes`},
			{name: "key file bad key", setup: func(t *testing.T, f *fixture) { writeFile(t, f.dir, "gm0.key", "not-a-key\n", 0o600) },
				doc: baseDoc, want: `FILE:3: key "interface.private_key_file": KEYFILE does not hold a valid private key: ` + handshakeErr(handshake.ParsePrivateKey("not-a-key"))},
			{name: "key file public key", setup: func(t *testing.T, f *fixture) {
				writeFile(t, f.dir, "gm0.key", f.keys.pub1.String()+"\n", 0o600)
			}, doc: baseDoc, want: ""}, // message filled in by the loop: depends on the key
			{name: "credential bad name", doc: e(`"KEYFILE"`, `"credential:a/b"`),
				want: `FILE:3: key "interface.private_key_file": "credential:a/b" does not name a systemd credential (credential:NAME, NAME without '/')`},

			// listen_port
			{name: "port zero", doc: e(`listen_port = 51900`, `listen_port = 0`),
				want: `FILE:4: key "interface.listen_port": must be in 1..65535, got 0 (omit the key for an ephemeral port)`},
			{name: "port large", doc: e(`listen_port = 51900`, `listen_port = 65536`),
				want: `FILE:4: key "interface.listen_port": must be in 1..65535, got 65536 (omit the key for an ephemeral port)`},
			{name: "port negative", doc: e(`listen_port = 51900`, `listen_port = -1`),
				want: `FILE:4: key "interface.listen_port": must be in 1..65535, got -1 (omit the key for an ephemeral port)`},
			{name: "port string", doc: e(`listen_port = 51900`, `listen_port = "51900"`),
				want: `FILE:4: key "interface.listen_port": must be an integer, not a string`},
			{name: "port float", doc: e(`listen_port = 51900`, `listen_port = 51900.0`),
				want: `FILE:4: key "interface.listen_port": must be an integer, not a float`},
			{name: "port needed", doc: e(`listen_port = 51900`, ``, `endpoint = "198.18.0.2:51900"`, ``),
				want: `FILE:1: key "interface.listen_port": is required because peer "site-b" has no endpoint, so it must be able to reach this side`},

			// address
			{name: "address string", doc: e(`["198.19.0.1/24"]`, `"198.19.0.1/24"`),
				want: `FILE:5: key "interface.address": must be an array of strings, not a string`},
			{name: "address element type", doc: e(`["198.19.0.1/24"]`, `["198.19.0.1/24", 5]`),
				want: `FILE:5: key "interface.address": must be an array of strings, but element 2 is an integer`},
			{name: "address no length", doc: e(`["198.19.0.1/24"]`, `["198.19.0.1"]`),
				want: `FILE:5: key "interface.address": element 1: "198.19.0.1" is not a CIDR prefix (address/length)`},
			{name: "address bad length", doc: e(`["198.19.0.1/24"]`, `["198.19.0.1/33"]`),
				want: `FILE:5: key "interface.address": element 1: "198.19.0.1/33" is not a CIDR prefix: prefix length out of range`},
			{name: "address not canonical", doc: e(`["198.19.0.1/24"]`, `["2001:DB8::1/64"]`),
				want: `FILE:5: key "interface.address": element 1: "2001:DB8::1/64" is not in canonical form; write "2001:db8::1/64"`},
			{name: "address mapped", doc: e(`["198.19.0.1/24"]`, `["::ffff:198.19.0.1/120"]`),
				want: `FILE:5: key "interface.address": element 1: "::ffff:198.19.0.1/120" is an IPv4-mapped IPv6 prefix; write the IPv4 prefix`},
			{name: "address multicast", doc: e(`["198.19.0.1/24"]`, `["198.19.0.1/24", "224.0.0.1/4"]`),
				want: `FILE:5: key "interface.address": element 2: 224.0.0.1 is not a unicast address`},
			{name: "address unspecified", doc: e(`["198.19.0.1/24"]`, `["::/0"]`),
				want: `FILE:5: key "interface.address": element 1: :: is not a unicast address`},
			{name: "address repeated", doc: e(`["198.19.0.1/24"]`, `["198.19.0.1/24", "198.19.0.1/32"]`),
				want: `FILE:5: key "interface.address": element 2: 198.19.0.1 repeats the address of element 1`},

			// mtu
			{name: "mtu small", doc: e(`listen_port`, "mtu = 1279\nlisten_port"),
				want: `FILE:4: key "interface.mtu": must be in 1280..65535 (1280 is the IPv6 minimum) or 0 for the default 1420, got 1279`},
			{name: "mtu large", doc: e(`listen_port`, "mtu = 65536\nlisten_port"),
				want: `FILE:4: key "interface.mtu": must be in 1280..65535 (1280 is the IPv6 minimum) or 0 for the default 1420, got 65536`},
			{name: "mtu negative", doc: e(`listen_port`, "mtu = -1420\nlisten_port"),
				want: `FILE:4: key "interface.mtu": must be in 1280..65535 (1280 is the IPv6 minimum) or 0 for the default 1420, got -1420`},
			{name: "mtu string", doc: e(`listen_port`, "mtu = \"1420\"\nlisten_port"),
				want: `FILE:4: key "interface.mtu": must be an integer or "auto", got "1420"`},

			// suites
			{name: "suites empty", doc: e(`listen_port`, "suites = []\nlisten_port"),
				want: `FILE:4: key "interface.suites": must list at least one suite (known: sm4-gcm, zuc-256, zuc-128, ublock-gcm)`},
			{name: "suites unknown", doc: e(`listen_port`, "suites = [\"sm4-gcm\", \"aes-gcm\"]\nlisten_port"),
				want: `FILE:4: key "interface.suites": unknown suite "aes-gcm" (known: sm4-gcm, zuc-256, zuc-128, ublock-gcm)`},
			{name: "suites case", doc: e(`listen_port`, "suites = [\"SM4-GCM\"]\nlisten_port"),
				want: `FILE:4: key "interface.suites": unknown suite "SM4-GCM" (known: sm4-gcm, zuc-256, zuc-128, ublock-gcm)`},
			{name: "suites duplicate", doc: e(`listen_port`, "suites = [\"zuc-256\", \"sm4-gcm\", \"zuc-256\"]\nlisten_port"),
				want: `FILE:4: key "interface.suites": lists "zuc-256" twice`},
			{name: "suites string", doc: e(`listen_port`, "suites = \"sm4-gcm\"\nlisten_port"),
				want: `FILE:4: key "interface.suites": must be an array of strings, not a string`},

			// id, log_level, table, fwmark
			{name: "id empty", doc: e(`listen_port`, "id = \"\"\nlisten_port"),
				want: `FILE:4: key "interface.id": must not be empty (omit it for the default "1234567812345678")`},
			{name: "id long", doc: e(`listen_port`, "id = \""+strings.Repeat("i", MaxIDLen+1)+"\"\nlisten_port"),
				want: `FILE:4: key "interface.id": is 8192 bytes; an SM2 user ID is at most 8191 bytes`},
			{name: "id type", doc: e(`listen_port`, "id = 1234567812345678\nlisten_port"),
				want: `FILE:4: key "interface.id": must be a string, not an integer`},
			{name: "log level", doc: e(`listen_port`, "log_level = \"verbose\"\nlisten_port"),
				want: `FILE:4: key "interface.log_level": must be "debug", "info", "warn" or "error", got "verbose"`},
			{name: "log level type", doc: e(`listen_port`, "log_level = 1\nlisten_port"),
				want: `FILE:4: key "interface.log_level": must be a string, not an integer`},
			{name: "log format", doc: e(`listen_port`, "log_format = \"logfmt\"\nlisten_port"),
				want: `FILE:4: key "interface.log_format": must be "text" or "json", got "logfmt"`},
			{name: "log format case", doc: e(`listen_port`, "log_format = \"JSON\"\nlisten_port"),
				want: `FILE:4: key "interface.log_format": must be "text" or "json", got "JSON"`},
			{name: "table word", doc: e(`listen_port`, "table = \"main\"\nlisten_port"),
				want: `FILE:4: key "interface.table": must be "auto", "off" or a table number, got "main"`},
			{name: "table zero", doc: e(`listen_port`, "table = 0\nlisten_port"),
				want: `FILE:4: key "interface.table": must be a table number in 1..4294967295 other than 255 (local), got 0`},
			{name: "table local", doc: e(`listen_port`, "table = 255\nlisten_port"),
				want: `FILE:4: key "interface.table": must be a table number in 1..4294967295 other than 255 (local), got 255`},
			{name: "table large", doc: e(`listen_port`, "table = 4294967296\nlisten_port"),
				want: `FILE:4: key "interface.table": must be a table number in 1..4294967295 other than 255 (local), got 4294967296`},
			{name: "table bool", doc: e(`listen_port`, "table = true\nlisten_port"),
				want: `FILE:4: key "interface.table": must be "auto", "off" or a table number, not a boolean`},
			{name: "fwmark negative", doc: e(`listen_port`, "fwmark = -1\nlisten_port"),
				want: `FILE:4: key "interface.fwmark": must be in 0..4294967295, got -1`},
			{name: "fwmark large", doc: e(`listen_port`, "fwmark = 4294967296\nlisten_port"),
				want: `FILE:4: key "interface.fwmark": must be in 0..4294967295, got 4294967296`},

			// peer.name
			{name: "peer name missing", doc: e(`name = "site-b"`, ``),
				want: "FILE:7: key \"peer.name\" (peer #1): is required: every peer needs a unique name for logs and `gmtun show`"},
			{name: "peer name invalid", doc: e(`name = "site-b"`, `name = "site b"`),
				want: `FILE:8: key "peer.name" (peer #1): "site b" is not a valid peer name: it contains ' '; use only letters, digits, '.', '_' and '-'`},
			{name: "peer name long", doc: e(`name = "site-b"`, `name = "`+strings.Repeat("b", 33)+`"`),
				want: `FILE:8: key "peer.name" (peer #1): "` + strings.Repeat("b", 33) + `" is not a valid peer name: it is 33 bytes long; the limit is 32`},
			{name: "peer name empty", doc: e(`name = "site-b"`, `name = ""`),
				want: `FILE:8: key "peer.name" (peer #1): "" is not a valid peer name: it is empty`},
			{name: "peer name type", doc: e(`name = "site-b"`, `name = true`),
				want: `FILE:8: key "peer.name" (peer #1): must be a string, not a boolean`},
			{name: "peer name duplicate", doc: e2(`name = "site-c"`, `name = "site-b"`),
				want: `FILE:13: key "peer.name" (peer "site-b"): "site-b" is already the name of the peer at line 7`},

			// peer.public_key
			{name: "public key missing", doc: e(`public_key = "PUB1"`, ``),
				want: "FILE:7: key \"peer.public_key\" (peer \"site-b\"): is required: the peer's `gmtun pubkey` output"},
			{name: "public key placeholder", doc: e(`"PUB1"`, `"<site-b public key>"`),
				want: "FILE:9: key \"peer.public_key\" (peer \"site-b\"): is still the example placeholder <site-b public key>; replace it with the peer's `gmtun pubkey` output"},
			{name: "public key invalid", doc: e(`"PUB1"`, `"AAAA"`),
				want: `FILE:9: key "peer.public_key" (peer "site-b"): is not a valid public key: ` + handshakeErr(handshake.ParsePublicKey("AAAA"))},
			{name: "public key ours", doc: e(`"PUB1"`, `"OWNPUB"`),
				want: `FILE:9: key "peer.public_key" (peer "site-b"): is this interface's own public key; a peer must have its own key`},
			{name: "public key duplicate", doc: e2(`"PUB2"`, `"PUB1"`),
				want: `FILE:14: key "peer.public_key" (peer "site-c"): is also the key of peer "site-b" (line 7); each peer needs its own key`},

			// peer.id
			{name: "peer id empty", doc: baseDoc + "id = \"\"\n",
				want: `FILE:12: key "peer.id" (peer "site-b"): must not be empty (omit it for the default "1234567812345678")`},

			// peer.preshared_key_file
			{name: "psk absent", doc: baseDoc + "preshared_key_file = \"none.psk\"\n",
				want: `FILE:12: key "peer.preshared_key_file" (peer "site-b"): cannot open key file DIR/none.psk: no such file or directory`},
			{name: "psk mode", setup: func(t *testing.T, f *fixture) { writeFile(t, f.dir, "b.psk", b64(make([]byte, 32)), 0o644) },
				doc:  baseDoc + "preshared_key_file = \"b.psk\"\n",
				want: `FILE:12: key "peer.preshared_key_file" (peer "site-b"): key file DIR/b.psk has mode 0644; it must be 0600 or stricter (chmod 600 DIR/b.psk)`},
			{name: "psk short", setup: func(t *testing.T, f *fixture) { writeFile(t, f.dir, "b.psk", b64(make([]byte, 31)), 0o600) },
				doc:  baseDoc + "preshared_key_file = \"b.psk\"\n",
				want: `FILE:12: key "peer.preshared_key_file" (peer "site-b"): DIR/b.psk does not hold a valid preshared key: decodes to 31 bytes, want 32`},
			{name: "psk not base64", setup: func(t *testing.T, f *fixture) { writeFile(t, f.dir, "b.psk", "@@@@", 0o600) },
				doc:  baseDoc + "preshared_key_file = \"b.psk\"\n",
				want: `FILE:12: key "peer.preshared_key_file" (peer "site-b"): DIR/b.psk does not hold a valid preshared key: not base64: illegal base64 data at input byte 0`},
			{name: "psk padding bits", setup: func(t *testing.T, f *fixture) {
				// The last character of 32 bytes carries 4 unused bits; set one.
				s := []byte(b64(make([]byte, 32)))
				s[len(s)-2] = 'B'
				writeFile(t, f.dir, "b.psk", string(s), 0o600)
			}, doc: baseDoc + "preshared_key_file = \"b.psk\"\n",
				want: `FILE:12: key "peer.preshared_key_file" (peer "site-b"): DIR/b.psk does not hold a valid preshared key: not base64: illegal base64 data at input byte 43`},

			// peer.endpoint
			{name: "endpoint bad host name", doc: e(`"198.18.0.2:51900"`, `"gw_b.example.net:51900"`),
				want: `FILE:10: key "peer.endpoint" (peer "site-b"): "gw_b.example.net:51900": "gw_b.example.net" is not a valid host name: it contains '_'; use letters, digits, '-' and '.'`},
			{name: "endpoint no port", doc: e(`"198.18.0.2:51900"`, `"198.18.0.2"`),
				want: `FILE:10: key "peer.endpoint" (peer "site-b"): "198.18.0.2" is not IP:port or NAME:port (IPv6 as [addr]:port)`},
			{name: "endpoint port zero", doc: e(`"198.18.0.2:51900"`, `"198.18.0.2:0"`),
				want: `FILE:10: key "peer.endpoint" (peer "site-b"): "198.18.0.2:0" has port 0`},
			{name: "endpoint multicast", doc: e(`"198.18.0.2:51900"`, `"[ff02::1]:51900"`),
				want: `FILE:10: key "peer.endpoint" (peer "site-b"): ff02::1 is not a unicast address`},
			{name: "endpoint unspecified", doc: e(`"198.18.0.2:51900"`, `"0.0.0.0:51900"`),
				want: `FILE:10: key "peer.endpoint" (peer "site-b"): 0.0.0.0 is not a unicast address`},
			{name: "endpoint broadcast", doc: e(`"198.18.0.2:51900"`, `"255.255.255.255:51900"`),
				want: `FILE:10: key "peer.endpoint" (peer "site-b"): 255.255.255.255 is not a unicast address`},
			{name: "endpoint type", doc: e(`"198.18.0.2:51900"`, `51900`),
				want: `FILE:10: key "peer.endpoint" (peer "site-b"): must be a string, not an integer`},

			// peer.allowed_ips
			{name: "allowed host bits", doc: e(`["198.19.0.2/32"]`, `["198.19.0.2/24"]`),
				want: `FILE:11: key "peer.allowed_ips" (peer "site-b"): element 1: "198.19.0.2/24" has host bits set; write "198.19.0.0/24"`},
			{name: "allowed not canonical", doc: e(`["198.19.0.2/32"]`, `["198.19.0.2/32", "FD00::/8"]`),
				want: `FILE:11: key "peer.allowed_ips" (peer "site-b"): element 2: "FD00::/8" is not in canonical form; write "fd00::/8"`},
			{name: "allowed type", doc: e(`["198.19.0.2/32"]`, `[["198.19.0.2/32"]]`),
				want: `FILE:11: key "peer.allowed_ips" (peer "site-b"): must be an array of strings, but element 1 is an array`},
			{name: "allowed overlap within", doc: e(`["198.19.0.2/32"]`, `["198.19.0.2/32", "10.0.0.0/8", "198.19.0.0/24"]`),
				want: `FILE:11: key "peer.allowed_ips" (peer "site-b"): element 3: 198.19.0.0/24 overlaps element 1, 198.19.0.2/32`},
			{name: "allowed repeat within", doc: e(`["198.19.0.2/32"]`, `["::/0", "198.19.0.2/32", "::/0"]`),
				want: `FILE:11: key "peer.allowed_ips" (peer "site-b"): element 3: ::/0 repeats element 1, ::/0`},
			{name: "allowed overlap within and across", doc: e2(`["198.19.0.3/32"]`, `["fd00::/8", "198.19.0.0/31", "198.19.0.0/16"]`),
				want: `FILE:16: key "peer.allowed_ips" (peer "site-c"): element 3: 198.19.0.0/16 overlaps element 2, 198.19.0.0/31`},
			{name: "allowed overlap other peer", doc: e2(`["198.19.0.3/32"]`, `["198.19.0.0/16"]`),
				want: `FILE:16: key "peer.allowed_ips" (peer "site-c"): element 1: 198.19.0.0/16 overlaps 198.19.0.2/32 of peer "site-b" (line 7)`},
			{name: "allowed repeat across", doc: e2(`["198.19.0.3/32"]`, `["198.19.0.2/32"]`),
				want: `FILE:16: key "peer.allowed_ips" (peer "site-c"): element 1: 198.19.0.2/32 repeats 198.19.0.2/32 of peer "site-b" (line 7)`},
			{name: "allowed default routes", doc: e2(`["198.19.0.2/32"]`, `["0.0.0.0/0"]`),
				want: `FILE:16: key "peer.allowed_ips" (peer "site-c"): element 1: 198.19.0.3/32 overlaps 0.0.0.0/0 of peer "site-b" (line 7)`},

			// peer.persistent_keepalive, roaming, suites
			{name: "keepalive negative", doc: baseDoc + "persistent_keepalive = -1\n",
				want: `FILE:12: key "peer.persistent_keepalive" (peer "site-b"): must be in 0..65535, got -1`},
			{name: "keepalive large", doc: baseDoc + "persistent_keepalive = 65536\n",
				want: `FILE:12: key "peer.persistent_keepalive" (peer "site-b"): must be in 0..65535, got 65536`},
			{name: "keepalive string", doc: baseDoc + "persistent_keepalive = \"25s\"\n",
				want: `FILE:12: key "peer.persistent_keepalive" (peer "site-b"): must be an integer, not a string`},
			{name: "roaming string", doc: baseDoc + "roaming = \"yes\"\n",
				want: `FILE:12: key "peer.roaming" (peer "site-b"): must be true or false, not a string`},
			{name: "peer suites empty", doc: baseDoc + "suites = []\n",
				want: `FILE:12: key "peer.suites" (peer "site-b"): must list at least one suite (known: sm4-gcm, zuc-256, zuc-128, ublock-gcm)`},
			{name: "peer suites unknown", doc: baseDoc + "suites = [\"zuc-512\"]\n",
				want: `FILE:12: key "peer.suites" (peer "site-b"): unknown suite "zuc-512" (known: sm4-gcm, zuc-256, zuc-128, ublock-gcm)`},
		}
	}

	for _, tc := range tests(t) {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			doc, want := tc.doc, tc.want
			switch tc.name {
			case "key file public key":
				_, perr := handshake.ParsePrivateKey(f.keys.pub1.String())
				want = `FILE:3: key "interface.private_key_file": KEYFILE does not hold a valid private key: ` + perr.Error()
			}
			if tc.setup != nil {
				tc.setup(t, f)
			}
			name := tc.file
			if name == "" {
				name = "gm0.toml"
			}
			path, cfg, err := f.load(t, name, doc)
			if err == nil {
				t.Fatalf("no error; config %+v", cfg)
			}
			want = strings.ReplaceAll(f.expand(want), "FILE", path)
			if err.Error() != want {
				t.Errorf("got  %s\nwant %s", err, want)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.File != path {
				t.Errorf("error %T does not carry File %q", err, path)
			}
		})
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// handshakeErr returns the text of a parse error from the handshake
// package (which owns those messages).
func handshakeErr[T any](_ T, err error) string {
	if err == nil {
		panic("expected an error")
	}
	return err.Error()
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.toml")
	_, err := Load(missing)
	if want := missing + ": cannot open the configuration: no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("missing file: got %v, want %s", err, want)
	}
	_, err = Load(dir)
	if want := dir + ": is not a regular file"; err == nil || err.Error() != want {
		t.Errorf("directory: got %v, want %s", err, want)
	}
	big := writeFile(t, dir, "big.toml", "# "+strings.Repeat("x", maxFileSize)+"\n", 0o600)
	_, err = Load(big)
	if want := big + ": is larger than 1048576 bytes"; err == nil || err.Error() != want {
		t.Errorf("big file: got %v, want %s", err, want)
	}
}

func TestKeyFileOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "needs root to chown a file to another user")
	}
	f := newFixture(t)
	if err := os.Chown(f.keyFile, 4242, -1); err != nil {
		t.Fatal(err)
	}
	path, _, err := f.load(t, "gm0.toml", baseDoc)
	want := fmt.Sprintf(`%s:3: key "interface.private_key_file": key file %s is owned by uid 4242, not by this process's uid 0`, path, f.keyFile)
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestKeyFileFIFO(t *testing.T) {
	// A FIFO must be rejected, not block the loader.
	f := newFixture(t)
	fifo := filepath.Join(f.dir, "fifo.key")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("cannot create a FIFO: %v", err)
	}
	path, _, err := f.load(t, "gm0.toml", edit(t, baseDoc, `"KEYFILE"`, `"fifo.key"`))
	want := fmt.Sprintf(`%s:3: key "interface.private_key_file": key file %s is not a regular file`, path, fifo)
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestErrorFormat(t *testing.T) {
	cause := errors.New("cause")
	for _, tc := range []struct {
		e    *Error
		want string
	}{
		{&Error{File: "a.toml", Msg: "m"}, "a.toml: m"},
		{&Error{File: "a.toml", Line: 3, Msg: "m"}, "a.toml:3: m"},
		{&Error{File: "a.toml", Line: 3, Key: "interface.mtu", Msg: "m"}, `a.toml:3: key "interface.mtu": m`},
		{&Error{File: "a.toml", Key: "interface", Msg: "m"}, `a.toml: key "interface": m`},
		{&Error{File: "a.toml", Line: 9, Key: "peer.endpoint", Peer: "site-b", Msg: "m"}, `a.toml:9: key "peer.endpoint" (peer "site-b"): m`},
		{&Error{File: "a.toml", Line: 9, Key: "peer.endpoint", Peer: "#2", Msg: "m", Err: cause}, `a.toml:9: key "peer.endpoint" (peer #2): m`},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	e := &Error{Err: cause}
	if !errors.Is(e, cause) {
		t.Error("Unwrap does not expose the cause")
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"listen_port", "lisen_port", 1},
		{"kitten", "sitting", 3}, {"peer", "peers", 1}, {"mtu", "mut", 2},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

// TestKeyFileTextWiped checks that the bytes read from the private and
// preshared key files are zeroed once the keys are parsed.
func TestKeyFileTextWiped(t *testing.T) {
	f := newFixture(t)
	writeFile(t, f.dir, "c.psk", b64(make([]byte, PresharedKeySize))+"\n", 0o600)
	path := writeFile(t, f.dir, "gm0.toml", f.expand(baseDoc+"preshared_key_file = \"c.psk\"\n"), 0o600)
	var read [][]byte
	l := defaultLoader()
	l.readSecret = func(p string) ([]byte, error) {
		b, err := readSecretFile(p)
		read = append(read, b)
		return b, err
	}
	cfg, err := l.load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != 2 || cfg.Peers[0].PresharedKey == nil {
		t.Fatalf("read %d key files, psk %v", len(read), cfg.Peers[0].PresharedKey != nil)
	}
	for i, b := range read {
		if len(b) == 0 || bytes.Count(b, []byte{0}) != len(b) {
			t.Errorf("key file %d text not wiped after parsing: %q", i, b)
		}
	}
}
