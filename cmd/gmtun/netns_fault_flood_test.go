//go:build linux

package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gmtun/gmtun/bench/faultbed"
	"github.com/gmtun/gmtun/control"
)

// startFlood floods b's daemon from the middle namespace until the
// returned stop is called; stop returns what was sent.
func startFlood(t *testing.T, f *faultbed.Flooder, cfg faultbed.FloodConfig) (stop func() faultbed.FloodResult) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan faultbed.FloodResult, 1)
	go func() {
		r, err := f.Run(ctx, cfg)
		if err != nil {
			t.Errorf("flood: %v", err)
		}
		out <- r
	}()
	var once bool
	var res faultbed.FloodResult
	t.Cleanup(func() { cancel() })
	return func() faultbed.FloodResult {
		if !once {
			once = true
			cancel()
			res = <-out
		}
		return res
	}
}

// floodDrops sums b's counters of discarded unauthenticated input.
func floodDrops(t *testing.T, s *site) uint64 {
	st := s.status(t)
	var n uint64
	for _, k := range []string{"short_packet", "bad_type", "unknown_index", "handshake_queue_full", "handshake_rate_limited",
		"handshake_cookie", "handshake_cookie_limited", "handshake_invalid", "handshake_mac1", "no_buffer", "udp_empty", "udp_truncated"} {
		n += st.Drops[k]
	}
	return n
}

// testFlood: garbage, then valid-mac1 initiations from spoofed sources (with
// a zero and with a made-up mac2)
// while iperf3 runs (≥ 50 % of the pre-flood throughput at 100k msg/s);
// then each at the highest rate one core sends: the daemon stays up, data
// never stops for more than 2 s, a fresh handshake completes within 5 s,
// RSS stays bounded.
func testFlood(t *testing.T, bin string) {
	fb := newFaultBed(t, bin, nil, faultbed.Impairment{})
	a, b := fb.a, fb.b
	echoServer(t, b)
	if _, ok := waitEcho(t, a, b, trafficWait); !ok {
		t.Fatal("no echo before the flood")
	}
	var fl *faultbed.Flooder
	if err := inNS(fb.m.ns, func() (err error) { fl, err = faultbed.OpenFlooder(); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fl.Close() })
	templates, err := faultbed.MakeInitiations(b.pub, 512)
	if err != nil {
		t.Fatal(err)
	}
	dst := netip.MustParseAddrPort(siteBUnder + ":51820")
	secs := int(envInt(t, "GMTUN_FAULT_FLOOD", 3))
	pre := iperfBps(t, a, b, secs)
	figure(t, "flood", "iperf3 a→b before any flood", "%.0f Mbit/s", pre/1e6)
	rss0, _ := procStatus(t, b)

	for _, kind := range []faultbed.FloodKind{faultbed.Garbage, faultbed.Initiations, faultbed.MadeUpMAC2} {
		t.Run(fmt.Sprintf("100k/%v", strings.ReplaceAll(kind.String(), " ", "-")), func(t *testing.T) {
			before := floodDrops(t, b)
			stop := startFlood(t, fl, faultbed.FloodConfig{Dst: dst, Kind: kind, Rate: 100000, Templates: templates})
			time.Sleep(300 * time.Millisecond)
			bps := iperfBps(t, a, b, secs)
			res := stop()
			time.Sleep(200 * time.Millisecond)
			counted := floodDrops(t, b) - before
			st := b.status(t)
			t.Logf("b after the flood: drops %v, handshake_invalid %v", nonzero(st.Drops), st.HandshakeInvalid)
			figure(t, "flood 100k msg/s "+kind.String(), "iperf3 a→b (pre-flood)", "%.0f Mbit/s (%.0f), %.0f msg/s, %d sources, %d counted",
				bps/1e6, pre/1e6, res.Rate(), res.Sources, counted)
			if res.Sent == 0 || counted < res.Sent/2 {
				t.Errorf("the flood did not reach b: sent %d (%d errors), b counted %d", res.Sent, res.Errors, counted)
			}
			// The rate is the bed's: one flooder goroutine reaches 100k msg/s
			// on the Xeon bed but only 40–80k on a 2-vCPU AMD EPYC while
			// iperf3 and both daemons take the same two CPUs (each raw send
			// also runs b's UDP receive in its softirq). make test checks
			// what b does with the flood and prints the rate the figure
			// stands for; bench-faults (GMTUN_FAULT_STRICT=1) requires 90k.
			if os.Getenv("GMTUN_FAULT_STRICT") == "1" && res.Rate() < 90000 {
				t.Errorf("the flooder reached only %.0f msg/s of 100k (90k needed under GMTUN_FAULT_STRICT)", res.Rate())
			} else if res.Rate() < 90000 {
				t.Logf("the flooder reached %.0f msg/s of 100k on this machine", res.Rate())
			}
			// The ≥ 50 % target is a speed figure of this shared 2-core bed
			// (the flooder, iperf3, the relay and both daemons share it):
			// measured and reported here, asserted only by bench-faults
			// (GMTUN_FAULT_STRICT=1), so a busy CI machine cannot turn it
			// into a false failure.
			if bps < pre/2 {
				msg := fmt.Sprintf("TARGET NOT MET: under %.0f %v/s the tunnel kept %.0f of %.0f Mbit/s (%.0f %%), less than half",
					res.Rate(), kind, bps/1e6, pre/1e6, 100*bps/pre)
				if os.Getenv("GMTUN_FAULT_STRICT") == "1" {
					t.Error(msg)
				} else {
					t.Log(msg)
				}
			}
		})
	}

	for _, kind := range []faultbed.FloodKind{faultbed.Garbage, faultbed.Initiations} {
		// These need the protocol side of the attacks issue (cookie,
		// rate limit, handshake queue); see docs/RELIABILITY.md.
		t.Run(fmt.Sprintf("max-rate/%v", strings.ReplaceAll(kind.String(), " ", "-")), func(t *testing.T) {
			stop := startFlood(t, fl, faultbed.FloodConfig{Dst: dst, Kind: kind, Templates: templates})
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs+1)*time.Second)
			pr := <-probe(t, ctx, a, b, 10*time.Millisecond)
			cancel()
			rssPeak, _ := procStatus(t, b)
			// A fresh handshake: restart a; its first packet to b
			// starts one, which b must complete while flooded.
			a.proc.Process.Kill()
			<-a.done
			a.start()
			hs, ok := waitEcho(t, a, b, 20*time.Second)
			rss, _ := procStatus(t, b)
			rssPeak = max(rssPeak, rss)
			res := stop()
			state := b.state()
			figure(t, "flood max rate "+kind.String(), "rate; longest data silence; fresh handshake; b RSS before→peak",
				"%.0f msg/s; %v; %v; %d→%d MiB", res.Rate(), pr.MaxGap.Round(time.Millisecond), hs.Round(time.Millisecond), rss0>>20, rssPeak>>20)
			t.Logf("probe a→b under the flood: %v", pr)
			if state != "running" {
				t.Fatalf("b under a max-rate %v flood: %s", kind, state)
			}
			if pr.MaxGap > 2*time.Second {
				t.Errorf("[needs the attacks fix] data stopped for %v under %.0f %v/s (limit 2 s)", pr.MaxGap, res.Rate(), kind)
			}
			if !ok || hs > 5*time.Second {
				t.Errorf("[needs the attacks fix] a fresh handshake under %.0f %v/s took %v (completed: %v; limit 5 s)", res.Rate(), kind, hs, ok)
			}
			if rssPeak > rss0+128<<20 {
				t.Errorf("b's RSS grew from %d to %d MiB under the flood", rss0>>20, rssPeak>>20)
			}
		})
	}
}

// testSoak: iperf3 for GMTUN_FAULT_SOAK (3 min in make test; ≥ 1 h in
// bench-faults) through daemons built with the test-only short key
// lifetimes (gmtun_shorttimers: a rekey every 10 s, keypairs expire
// after 20 s), with RSS, threads and goroutines of both daemons sampled:
// flat after warm-up, no stall watchdog report, a rekey about every
// RekeyAfterTime, counters consistent.
func testSoak(t *testing.T) {
	dur := envDuration(t, "GMTUN_FAULT_SOAK", 3*time.Minute)
	bin := buildDaemon(t, "GMTUN_TEST_BIN_SHORTTIMERS", "gmtun_shorttimers")
	const rekeyAfter = 10 * time.Second // handshake/timers_short.go
	rate := "300M"
	fb := newFaultBed(t, bin, nil, faultbed.Impairment{})
	a, b := fb.a, fb.b
	if !strings.Contains(a.log.String(), "gmtun_shorttimers") {
		t.Fatalf("the soak's daemon is not a short-timer build:\n%s", a.log.String())
	}
	echoServer(t, b)
	if _, ok := waitEcho(t, a, b, trafficWait); !ok {
		t.Fatal("no echo before the soak")
	}
	st0A, st0B := a.status(t), b.status(t)
	hs0 := findPeer(st0A, "b").Handshakes + findPeer(st0B, "a").Handshakes
	load := iperfAsync(t, a, b, int(dur/time.Second), "-b", rate)
	type sample struct {
		at                 time.Duration
		rssA, rssB         int64
		threadsA, threadsB int
		gorA, gorB         int
	}
	var samples []sample
	every := max(dur/30, 2*time.Second)
	start := time.Now()
	for time.Since(start) < dur {
		time.Sleep(every)
		rA, thA := procStatus(t, a)
		rB, thB := procStatus(t, b)
		samples = append(samples, sample{time.Since(start), rA, rB, thA, thB, a.status(t).Goroutines, b.status(t).Goroutines})
	}
	bps := <-load
	time.Sleep(time.Second)
	// The relay's counts bracket b's: what it had forwarded before b's
	// status has reached b (given up to 2 s on a slow machine); what it
	// forwards after was not yet seen.
	rel0 := fb.relay.Toward(1)
	var stB *control.Status
	for deadline := time.Now().Add(2 * time.Second); ; {
		time.Sleep(100 * time.Millisecond)
		stB = b.status(t)
		if pb := findPeer(stB, "a"); pb.RxPackets+stB.Drops[lateDrop] >= rel0.Forwarded || time.Now().After(deadline) {
			break
		}
	}
	rel := fb.relay.Toward(1)
	stA := a.status(t)
	var rssLine []string
	for _, s := range samples {
		rssLine = append(rssLine, fmt.Sprintf("%.0fs:%d/%d", s.at.Seconds(), s.rssA>>20, s.rssB>>20))
	}
	t.Logf("RSS MiB a/b over the soak: %s", strings.Join(rssLine, " "))
	scen := fmt.Sprintf("soak %v", dur)
	figure(t, scen, "iperf3 a→b -b "+rate, "%.0f Mbit/s", bps/1e6)
	if len(samples) < 3 {
		t.Fatalf("only %d samples", len(samples))
	}
	warm := samples[len(samples)/5]
	last := samples[len(samples)-1]
	peak := warm
	for _, s := range samples[len(samples)/5:] {
		peak.rssA, peak.rssB = max(peak.rssA, s.rssA), max(peak.rssB, s.rssB)
		peak.threadsA, peak.threadsB = max(peak.threadsA, s.threadsA), max(peak.threadsB, s.threadsB)
		peak.gorA, peak.gorB = max(peak.gorA, s.gorA), max(peak.gorB, s.gorB)
	}
	figure(t, scen, "RSS a, b after warm-up → peak → end (MiB)",
		"a %d→%d→%d, b %d→%d→%d", warm.rssA>>20, peak.rssA>>20, last.rssA>>20, warm.rssB>>20, peak.rssB>>20, last.rssB>>20)
	figure(t, scen, "threads, goroutines after warm-up → peak",
		"threads a %d→%d, b %d→%d; goroutines a %d→%d, b %d→%d", warm.threadsA, peak.threadsA, warm.threadsB, peak.threadsB,
		warm.gorA, peak.gorA, warm.gorB, peak.gorB)
	for _, c := range []struct {
		name         string
		base, top    int64
		bTh, topTh   int
		bGor, topGor int
		log          string
	}{
		{"a", warm.rssA, peak.rssA, warm.threadsA, peak.threadsA, warm.gorA, peak.gorA, a.log.String()},
		{"b", warm.rssB, peak.rssB, warm.threadsB, peak.threadsB, warm.gorB, peak.gorB, b.log.String()},
	} {
		if c.top > c.base+c.base/4+16<<20 {
			t.Errorf("site %s: RSS grew after warm-up from %d to %d MiB", c.name, c.base>>20, c.top>>20)
		}
		if c.topTh > c.bTh+4 {
			t.Errorf("site %s: threads grew after warm-up from %d to %d", c.name, c.bTh, c.topTh)
		}
		// A few goroutines come and go (the control socket's connection
		// handlers, timers); a leak per rekey would add one per 10 s.
		if c.topGor > c.bGor+8 {
			t.Errorf("site %s: goroutines grew after warm-up from %d to %d", c.name, c.bGor, c.topGor)
		}
		if strings.Contains(c.log, "data plane stalled") {
			t.Errorf("site %s: the stall watchdog fired during the soak", c.name)
		}
	}
	if bps <= 0 {
		t.Error("no data moved during the soak")
	}
	// Counters: no drops without impairment — rekeys included: the
	// previous keypair keeps receiving until the next one is confirmed —
	// but handshake_late (a confirm that lost the race to the initiator's
	// first data: late and harmless); every datagram the relay forwarded
	// to b and the veth delivered is counted at b exactly once, as
	// received or as late; and the relay received at most what a sent.
	figure(t, scen, "drops a, b (nonzero)", "%v, %v", nonzero(stA.Drops), nonzero(stB.Drops))
	for _, st := range []struct {
		name  string
		drops map[string]uint64
	}{{"a", stA.Drops}, {"b", stB.Drops}} {
		for k, v := range st.drops {
			// link_local: the kernel's own IPv6 router solicitations and
			// MLD reports on the TUN, counted apart from the tunnel's drops.
			if v != 0 && k != "link_local" && k != lateDrop {
				t.Errorf("site %s dropped %d as %s during an unimpaired soak", st.name, v, k)
			}
		}
	}
	pa, pb := findPeer(stA, "b"), findPeer(stB, "a")
	late := stB.Drops[lateDrop]
	// The relay's send to b succeeds even when the veth refuses the
	// datagram (a full backlog while a busy machine defers softirqs to
	// ksoftirqd): the kernel counts those as the relay end's tx_dropped,
	// read after the relay's counts so that it covers every datagram in
	// them.
	vethLost := linkCounter(t, fb.m, "vmb", "tx_dropped")
	figure(t, scen, "a tx, relay → b, b rx + late (datagrams)", "%d, %d, %d + %d (relay lost to its socket buffers: %d; the veth to b dropped: %d)",
		pa.TxPackets, rel.Forwarded, pb.RxPackets, late, pa.TxPackets-min(pa.TxPackets, rel.Received), vethLost)
	if counted := pb.RxPackets + late; counted+vethLost < rel0.Forwarded || counted > rel.Forwarded || rel.Received > pa.TxPackets {
		t.Errorf("counters: a sent %d datagrams to b, the relay received %d and forwarded %d (%d before b's status), the veth to b dropped %d, b received %d and counted %d late",
			pa.TxPackets, rel.Received, rel.Forwarded, rel0.Forwarded, vethLost, pb.RxPackets, late)
	}
	// Each rekey installs a keypair on both sides. The initiator of the
	// current keypair rekeys when it sends on a keypair RekeyAfterTime old
	// (and on receive at RejectAfterTime − KeepaliveTimeout −
	// RekeyTimeout, 5 s in this build), so at least one rekey per
	// RekeyAfterTime is expected: dur/RekeyAfterTime × 2 sessions, half of
	// that leaves room for a slow machine; zero would mean the timers never
	// fired.
	hs := pa.Handshakes + pb.Handshakes - hs0
	want := uint64(dur / rekeyAfter)
	figure(t, scen, "sessions established during the soak (both sides)", "%d (RekeyAfterTime %v; at least %d expected)", hs, rekeyAfter, want)
	if hs < want {
		t.Errorf("only %d sessions were established in %v with RekeyAfterTime %v, want ≥ %d", hs, dur, rekeyAfter, want)
	}
}

// linkCounter reads one of a network device's statistics
// (/sys/class/net/DEV/statistics/NAME) in site s's namespace.
func linkCounter(t *testing.T, s *site, dev, name string) uint64 {
	t.Helper()
	out := strings.TrimSpace(s.exec("cat", "/sys/class/net/"+dev+"/statistics/"+name))
	v, err := strconv.ParseUint(out, 10, 64)
	if err != nil {
		t.Fatalf("site %s: %s of %s: %q: %v", s.name, name, dev, out, err)
	}
	return v
}

func nonzero(m map[string]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
