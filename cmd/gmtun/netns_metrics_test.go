package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapeUnix fetches /metrics over the unix socket path.
func scrapeUnix(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	resp, err := client.Get("http://gmtun/metrics")
	if err != nil {
		t.Fatalf("scrape %s: %v", path, err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// metricValue is the value of the sample of name with label peer (or the
// only sample when peer is "").
func metricValue(t *testing.T, mfs map[string]*dto.MetricFamily, name, peer string) float64 {
	t.Helper()
	mf := mfs[name]
	if mf == nil {
		t.Fatalf("no %s in the scrape", name)
	}
	for _, m := range mf.Metric {
		match := peer == ""
		for _, l := range m.Label {
			if l.GetName() == "peer" && l.GetValue() == peer {
				match = true
			}
		}
		if !match {
			continue
		}
		if m.Counter != nil {
			return m.Counter.GetValue()
		}
		return m.Gauge.GetValue()
	}
	t.Fatalf("no %s{peer=%q}", name, peer)
	return 0
}

// TestNetnsMetrics runs a real daemon with metrics_listen on a unix socket
// (reachable from outside the namespace), scrapes it while traffic flows,
// and checks the counters against `gmtun show` and that they move; the
// socket is gone after SIGTERM.
func TestNetnsMetrics(t *testing.T) {
	requireNetns(t)
	l := newLab(t, testBinary(t))
	a, b := l.addSite("a"), l.addSite("b")
	l.link(a, b, 1, false)
	a.peers, b.peers = []*site{b}, []*site{a}
	sock := filepath.Join(a.dir, "metrics.sock")
	a.extra = fmt.Sprintf("metrics_listen = %q\n", "unix:"+sock)
	a.start()
	b.start()
	a.ping(b.inner4, 3)

	mfs := scrapeUnix(t, sock)
	if v := metricValue(t, mfs, "gmtun_up", ""); v != 1 {
		t.Fatalf("gmtun_up = %v", v)
	}
	rx1 := metricValue(t, mfs, "gmtun_peer_receive_bytes_total", "b")
	tx1 := metricValue(t, mfs, "gmtun_peer_transmit_packets_total", "b")
	age := metricValue(t, mfs, "gmtun_peer_handshake_age_seconds", "b")
	if rx1 <= 0 || tx1 < 3 || age < 0 || age > 60 {
		t.Fatalf("after 3 pings: rx bytes %v, tx packets %v, handshake age %v s", rx1, tx1, age)
	}
	if _, ok := mfs["gmtun_kernel_info"]; !ok {
		t.Error("no gmtun_kernel_info")
	}
	st := a.show()
	if got := float64(st.Peers[0].RxBytes); got < rx1 {
		t.Errorf("gmtun show rx_bytes %v < the earlier scrape's %v", got, rx1)
	}

	a.ping(b.inner4, 5)
	mfs = scrapeUnix(t, sock)
	if rx2 := metricValue(t, mfs, "gmtun_peer_receive_bytes_total", "b"); rx2 <= rx1 {
		t.Errorf("rx bytes did not move: %v then %v", rx1, rx2)
	}
	if tx2 := metricValue(t, mfs, "gmtun_peer_transmit_packets_total", "b"); tx2 < tx1+5 {
		t.Errorf("tx packets %v then %v after 5 more pings", tx1, tx2)
	}

	if err := a.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("metrics socket left after stop: %v", err)
	}
}
