package metrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gmtun/gmtun/control"
)

// fakeSource is a Source whose status the test changes between scrapes.
type fakeSource struct {
	mu  sync.Mutex
	st  control.Status
	err error
	n   int // snapshots taken
}

func (f *fakeSource) get() (control.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return f.st, f.err
}

func (f *fakeSource) update(fn func(*control.Status)) {
	f.mu.Lock()
	fn(&f.st)
	f.mu.Unlock()
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sampleStatus() control.Status {
	hs := t0.Add(-30 * time.Second)
	return control.Status{
		Interface: "gm0", Started: t0.Add(-time.Hour), Goroutines: 42, ReceiveErrors: 1,
		Suites:  []string{"sm4-gcm", "zuc-256"},
		Kernels: []control.Kernel{{Primitive: "sm4", Selected: "AVX2+AES-NI"}, {Primitive: "zuc", Selected: "generic"}},
		Peers: []control.Peer{
			{Name: "site-b", RxBytes: 1000, TxBytes: 2000, RxPackets: 10, TxPackets: 20, Suite: "sm4-gcm",
				LastHandshake: &hs, Handshakes: 3, InitiationRetransmits: 4, ResponseRetransmits: 6, InboundQueue: 1, OutboundQueue: 2, Staged: 5},
			{Name: "site-c", Staged: -1}, // never handshaken
		},
		Drops:            map[string]uint64{"no_route": 7, "replay": 0},
		HandshakeInvalid: map[string]uint64{"mac1": 4},
		Seal: control.Batches{Calls: 10, Packets: 160, PacketsPerCall: 16, LanesPerKernelCall: 16, Nanos: 2_500_000_000, NanosPerPacket: 15625000,
			SampledPackets: 16, SampledCPUNanos: 1_500_000_000, CPUNanosPerPacket: 93750000},
		Open:           control.Batches{Calls: 4, Packets: 8, PacketsPerCall: 2, LanesPerKernelCall: 2},
		Buffers:        control.Buffers{Max: 4096, Allocated: 300, Free: 200, InUse: 100, EncryptQueue: 3},
		PendingRestart: []string{"interface.listen_port"},
	}
}

// scrape fetches url through client and parses the text format.
func scrape(t *testing.T, client *http.Client, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// value returns the value of the sample of family name whose labels
// include want; ok is false if there is none.
func value(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

func mustValue(t *testing.T, mfs map[string]*dto.MetricFamily, name string, want float64, labels map[string]string) {
	t.Helper()
	got, ok := value(mfs, name, labels)
	if !ok {
		t.Errorf("%s%v: missing", name, labels)
		return
	}
	if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// TestScrapeTCP scrapes a real listener on 127.0.0.1:0 twice and checks
// that every metric has the snapshot's value and that the values move
// with it.
func TestScrapeTCP(t *testing.T) {
	src := &fakeSource{st: sampleStatus()}
	c := NewCollector("gm0", "v1.2.3", src.get)
	c.now = func() time.Time { return t0 }
	srv, err := Listen("tcp", "127.0.0.1:0", c, t.Errorf)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url := "http://" + srv.Addr().String() + Path
	mfs := scrape(t, http.DefaultClient, url)

	peer := func(n string, kv ...string) map[string]string {
		m := map[string]string{"interface": "gm0", "peer": n}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	iface := map[string]string{"interface": "gm0"}
	mustValue(t, mfs, "gmtun_up", 1, iface)
	mustValue(t, mfs, "gmtun_build_info", 1, map[string]string{"version": "v1.2.3"})
	mustValue(t, mfs, "gmtun_start_time_seconds", float64(t0.Add(-time.Hour).Unix()), iface)
	mustValue(t, mfs, "gmtun_peer_receive_bytes_total", 1000, peer("site-b"))
	mustValue(t, mfs, "gmtun_peer_transmit_bytes_total", 2000, peer("site-b"))
	mustValue(t, mfs, "gmtun_peer_receive_packets_total", 10, peer("site-b"))
	mustValue(t, mfs, "gmtun_peer_transmit_packets_total", 20, peer("site-b"))
	mustValue(t, mfs, "gmtun_peer_handshake_age_seconds", 30, peer("site-b"))
	mustValue(t, mfs, "gmtun_peer_handshakes_total", 3, peer("site-b"))
	mustValue(t, mfs, "gmtun_peer_initiation_retransmits_total", 4, peer("site-b"))
	mustValue(t, mfs, "gmtun_peer_response_retransmits_total", 6, peer("site-b"))
	mustValue(t, mfs, "gmtun_peer_session_info", 1, peer("site-b", "suite", "sm4-gcm"))
	mustValue(t, mfs, "gmtun_peer_queue_batches", 2, peer("site-b", "queue", "outbound"))
	mustValue(t, mfs, "gmtun_peer_staged_packets", 5, peer("site-b"))
	mustValue(t, mfs, "gmtun_peer_last_handshake_seconds", 0, peer("site-c"))
	if _, ok := value(mfs, "gmtun_peer_handshake_age_seconds", peer("site-c")); ok {
		t.Error("a peer without a handshake has a handshake age")
	}
	if _, ok := value(mfs, "gmtun_peer_staged_packets", peer("site-c")); ok {
		t.Error("an unknown staged count (-1) is exported")
	}
	mustValue(t, mfs, "gmtun_drops_total", 7, map[string]string{"reason": "no_route"})
	mustValue(t, mfs, "gmtun_drops_total", 0, map[string]string{"reason": "replay"})
	mustValue(t, mfs, "gmtun_handshake_invalid_total", 4, map[string]string{"reason": "mac1"})
	mustValue(t, mfs, "gmtun_batch_packets_total", 160, map[string]string{"direction": "seal"})
	mustValue(t, mfs, "gmtun_kernel_lanes_per_call", 2, map[string]string{"direction": "open"})
	mustValue(t, mfs, "gmtun_batch_seconds_total", 2.5, map[string]string{"direction": "seal"})
	mustValue(t, mfs, "gmtun_batch_seconds_total", 0, map[string]string{"direction": "open"})
	mustValue(t, mfs, "gmtun_batch_sampled_packets_total", 16, map[string]string{"direction": "seal"})
	mustValue(t, mfs, "gmtun_batch_sampled_cpu_seconds_total", 1.5, map[string]string{"direction": "seal"})
	mustValue(t, mfs, "gmtun_kernel_info", 1, map[string]string{"primitive": "sm4", "tier": "AVX2+AES-NI"})
	if _, ok := value(mfs, "gmtun_suite_tier_info", map[string]string{"suite": "zuc-256"}); !ok {
		t.Error("gmtun_suite_tier_info lacks zuc-256")
	}
	mustValue(t, mfs, "gmtun_buffers", 100, map[string]string{"state": "in_use"})
	mustValue(t, mfs, "gmtun_queue_length", 3, map[string]string{"queue": "encrypt"})
	mustValue(t, mfs, "gmtun_pending_restart_info", 1, map[string]string{"setting": "interface.listen_port"})
	mustValue(t, mfs, "gmtun_config_last_reload_success", 1, iface)

	// The values move with the snapshot.
	src.update(func(s *control.Status) {
		s.Peers[0].RxBytes += 500
		s.Peers[0].TxPackets++
		s.Drops["no_route"] = 9
		now := t0
		s.Peers[1].LastHandshake = &now
		s.LastReloadError = "bad"
	})
	mfs = scrape(t, http.DefaultClient, url)
	mustValue(t, mfs, "gmtun_peer_receive_bytes_total", 1500, peer("site-b"))
	mustValue(t, mfs, "gmtun_peer_transmit_packets_total", 21, peer("site-b"))
	mustValue(t, mfs, "gmtun_drops_total", 9, map[string]string{"reason": "no_route"})
	mustValue(t, mfs, "gmtun_peer_handshake_age_seconds", 0, peer("site-c"))
	mustValue(t, mfs, "gmtun_config_last_reload_success", 0, iface)
	if src.n != 2 {
		t.Errorf("%d snapshots for 2 scrapes; want one per scrape", src.n)
	}

	// While the daemon starts or stops: gmtun_up 0 and no stale values.
	src.update(func(*control.Status) { src.err = errors.New("gm0 is starting or stopping") })
	mfs = scrape(t, http.DefaultClient, url)
	mustValue(t, mfs, "gmtun_up", 0, iface)
	if _, ok := mfs["gmtun_peer_receive_bytes_total"]; ok {
		t.Error("peer metrics exported while the daemon is not ready")
	}

	// Anything but /metrics and / is 404.
	resp, err := http.Get("http://" + srv.Addr().String() + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /debug/pprof/: %s, want 404", resp.Status)
	}
}

// TestScrapeUnix serves on a unix socket (mode 0660), replaces a stale
// socket, refuses one in use, and removes it on Close.
func TestScrapeUnix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gm0.metrics")
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close() // the file stays, nobody answers: a crashed run's socket

	src := &fakeSource{st: sampleStatus()}
	srv, err := Listen("unix", path, NewCollector("gm0", "v0", src.get), t.Errorf)
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o660 {
		t.Errorf("socket mode %v (%v), want 0660", fi.Mode().Perm(), err)
	}
	if _, err := Listen("unix", path, NewCollector("gm0", "v0", src.get), t.Errorf); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second server on a live socket: %v, want 'in use'", err)
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	mfs := scrape(t, client, "http://gmtun"+Path)
	mustValue(t, mfs, "gmtun_peer_receive_bytes_total", 1000, map[string]string{"peer": "site-b"})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("socket left after Close: %v", err)
	}
}

// TestLint runs Prometheus' own metric linter over a collection: names,
// units, counter suffixes and help texts follow its conventions.
func TestLint(t *testing.T) {
	src := &fakeSource{st: sampleStatus()}
	problems, err := testutil.CollectAndLint(NewCollector("gm0", "v0", src.get))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	if n := testutil.CollectAndCount(NewCollector("gm0", "v0", src.get)); n < 30 {
		t.Errorf("only %d samples from the sample status", n)
	}
}

func TestListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	src := &fakeSource{st: sampleStatus()}
	_, err = Listen("tcp", ln.Addr().String(), NewCollector("gm0", "v0", src.get), nil)
	if err == nil || !strings.Contains(err.Error(), "cannot listen on "+ln.Addr().String()) {
		t.Fatalf("listen on a port in use: %v", err)
	}
}
