package ciphers

import (
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/gmtun/gmtun/internal/threadcpu"
)

// BenchmarkSealAfterIdle measures Seal of 64 × 1420 bytes when the thread
// does something else between calls, as the tunnel's reader does between
// batches: nothing ("busy", the usual benchmark), a 200 µs sleep (the
// thread blocks and the CPU may go idle, as when a read finds nothing
// queued), or 200 µs of scalar work on the same thread ("spin"). Only the
// Seal call's thread CPU time is counted ("seal-cpu-ns/pkt"). It
// separates the cost of a core coming back from idle, which the tunnel
// pays and `gmtun bench` does not, from the kernels' own speed; on the
// virtual machines of docs/BENCHMARKS.md that cost came and went with the
// host (0–40 % on zuc-256, "Plumbing before and after").
func BenchmarkSealAfterIdle(b *testing.B) {
	const n, size = 64, 1420
	const gap = 200 * time.Microsecond
	scratch := make([]byte, 2<<20)
	gaps := []struct {
		name string
		wait func(b *testing.B)
	}{
		{"busy", func(*testing.B) {}},
		{"sleep200us", func(*testing.B) { time.Sleep(gap) }},
		{"spin200us", func(*testing.B) { spinFor(gap) }},
		{"read64k", func(b *testing.B) { readZero(b, scratch[:64<<10]) }},
		{"evict2m", func(*testing.B) { evict(scratch) }},
	}
	for _, id := range []SuiteID{SM4GCM, ZUC256} {
		key, pkts := sealBenchInputs(b, id, "bench idle", n, size)
		for _, g := range gaps {
			b.Run(id.String()+"/"+g.name, func(b *testing.B) {
				benchSealCPU(b, key, pkts, size, func(int) { g.wait(b) })
			})
		}
	}
}

// sealBenchInputs returns a key of suite id (keys drawn from label) and n
// packets with size bytes of payload each.
func sealBenchInputs(b *testing.B, id SuiteID, label string, n, size int) (Key, [][]byte) {
	rng := newTestRand(label + " " + id.String())
	key := suiteUnderTest{ID: id}.newKey(b, randomDirectionKeys(rng, id))
	pkts := make([][]byte, n)
	for i := range pkts {
		pkts[i] = makePacket(uint64(i), 1, make([]byte, size), id.Params().TagSize)
	}
	return key, pkts
}

// benchSealCPU seals pkts (cut back to size bytes of payload before each
// call) in b.Loop on a locked OS thread, calling before(call) first, and
// reports the thread CPU time of the Seal calls alone per packet
// ("seal-cpu-ns/pkt").
func benchSealCPU(b *testing.B, key Key, pkts [][]byte, size int, before func(call int)) {
	benchCPU(b, len(pkts)*size, len(pkts), "seal-cpu-ns/pkt", func(call int) {
		before(call)
		for i := range pkts {
			pkts[i] = pkts[i][:HeaderSize+size]
		}
	}, func() {
		if err := key.Seal(pkts); err != nil {
			b.Fatal(err)
		}
	})
}

// benchCPU runs op in b.Loop on a locked OS thread, calling before(call)
// first, and reports the thread CPU time of the op calls alone per packet
// as metric (nbytes and npkts per call).
func benchCPU(b *testing.B, nbytes, npkts int, metric string, before func(call int), op func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(nbytes))
	b.ReportAllocs()
	var opCPU time.Duration
	calls := 0
	for b.Loop() {
		before(calls)
		t0 := threadcpu.Now()
		op()
		opCPU += threadcpu.Now() - t0
		calls++
	}
	if calls > 0 && opCPU > 0 {
		b.ReportMetric(float64(opCPU.Nanoseconds())/float64(calls*npkts), metric)
	}
}

// spinSink keeps spinFor's arithmetic from being optimised away.
var spinSink uint64

// spinFor keeps the thread busy with scalar arithmetic for d.
func spinFor(d time.Duration) {
	x := uint64(1)
	for end := time.Now().Add(d); time.Now().Before(end); {
		for range 64 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	spinSink += x
}

// readZero fills buf from /dev/zero: a system call that copies 64 KiB, as
// the TUN reader's read of a TSO super-packet does.
func readZero(b *testing.B, buf []byte) {
	f, err := os.Open("/dev/zero")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.ReadFull(f, buf); err != nil {
		b.Fatal(err)
	}
}

// evict writes every cache line of buf (2 MiB: more than a core's L2), as
// the kernel's copies and the other stages do between two batches.
func evict(buf []byte) {
	for i := 0; i < len(buf); i += 64 {
		buf[i]++
	}
}
