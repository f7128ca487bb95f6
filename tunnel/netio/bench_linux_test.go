package netio

import (
	"net/netip"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gmtun/gmtun/tunnel/iface/ifacetest"
)

// BenchmarkStdBindLoopback sends 512 datagrams of 1200 bytes (eight
// 64-segment GSO messages) to itself over the loopback of a test namespace
// and receives them, in place and copied apart. It times the receive hot
// path (recvmmsg, control parsing, GRO split) only, in thread CPU time
// (recv-cpu-ns/op), not the sends feeding it.
func BenchmarkStdBindLoopback(b *testing.B) {
	ns := ifacetest.New(b)
	addr := netip.MustParseAddr("198.18.9.1")
	if err := ns.AddrUp("lo", netip.PrefixFrom(addr, 32)); err != nil {
		b.Fatal(err)
	}
	const count, size = 512, 1200
	sent := make([][]byte, count)
	for i := range sent {
		sent[i] = pattern(i, size)
	}
	for _, inPlace := range []bool{true, false} {
		name := "copy"
		if inPlace {
			name = "inplace"
		}
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			bind := NewStdBind()
			var port uint16
			var ipFns []InPlaceReceiveFunc
			var fns []ReceiveFunc
			err := ns.Do(func() (err error) {
				if inPlace {
					ipFns, port, err = bind.OpenInPlace(0)
				} else {
					fns, port, err = bind.Open(0)
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			defer bind.Close()
			ep, err := bind.ParseEndpoint(netip.AddrPortFrom(addr, port).String())
			if err != nil {
				b.Fatal(err)
			}
			bufs := make([][]byte, IdealBatchSize)
			for i := range bufs {
				bufs[i] = make([]byte, MaxSegmentSize)
			}
			pkts := make([][]byte, 8*64)
			owner := make([]int, len(pkts))
			eps := make([]Endpoint, max(len(pkts), len(bufs)))
			sizes := make([]int, len(bufs))
			b.SetBytes(count * size)
			b.ReportAllocs()
			b.ResetTimer()
			var recvCPU int64
			for range b.N {
				b.StopTimer()
				for off := 0; off < count; off += IdealBatchSize {
					if err := bind.Send(sent[off:off+IdealBatchSize], ep); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				cpu0 := threadCPU()
				for got := 0; got < count; {
					var n int
					var err error
					if inPlace {
						n, err = ipFns[0](bufs[:8], pkts, owner, eps)
					} else {
						n, err = fns[0](bufs, sizes, eps)
					}
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
				recvCPU += threadCPU() - cpu0
			}
			b.ReportMetric(float64(recvCPU)/float64(b.N), "recv-cpu-ns/op")
		})
	}
}

// threadCPU is the calling thread's CPU time in nanoseconds (the machine
// is shared: wall time says little). The benchmark goroutine is locked to
// its thread while it measures.
func threadCPU() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
}
