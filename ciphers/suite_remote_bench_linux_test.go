package ciphers

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gmtun/gmtun/internal/cputime"
)

// BenchmarkSealRemoteData measures Seal of 64 × 1420 bytes whose payload
// was just written on the same CPU ("local": as when the tunnel's reader
// reads, splits and seals on one core) or on another CPU ("remote": as
// when the thread moved between the read and the seal, or the kernel's
// copy ran on the other core), each thread pinned to its CPU. Only the
// Seal call's thread CPU time is counted ("seal-cpu-ns/pkt"). Needs two
// CPUs.
func BenchmarkSealRemoteData(b *testing.B) {
	if runtime.NumCPU() < 2 {
		b.Skip("needs two CPUs")
	}
	const n, size = 64, 1420
	for _, id := range []SuiteID{SM4GCM, ZUC256} {
		rng := newTestRand("bench remote " + id.String())
		key := suiteUnderTest{ID: id}.newKey(b, randomDirectionKeys(rng, id))
		pkts := make([][]byte, n)
		for i := range pkts {
			pkts[i] = makePacket(uint64(i), 1, make([]byte, size), id.Params().TagSize)
		}
		fill := func(v byte) {
			for i := range pkts {
				p := pkts[i][:HeaderSize+size]
				for j := HeaderSize; j < len(p); j++ {
					p[j] = v
				}
				pkts[i] = p
			}
		}
		for _, remote := range []bool{false, true} {
			name := id.String() + "/local"
			if remote {
				name = id.String() + "/remote"
			}
			b.Run(name, func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				pin(b, 1)
				req, ack := make(chan byte), make(chan struct{})
				if remote {
					go func() {
						runtime.LockOSThread()
						defer runtime.UnlockOSThread()
						pin(b, 0)
						for v := range req {
							fill(v)
							ack <- struct{}{}
						}
					}()
					defer close(req)
				}
				b.SetBytes(n * size)
				b.ReportAllocs()
				var sealCPU time.Duration
				calls := 0
				for b.Loop() {
					v := byte(calls)
					if remote {
						req <- v
						<-ack
					} else {
						fill(v)
					}
					t0 := cputime.Thread()
					if err := key.Seal(pkts); err != nil {
						b.Fatal(err)
					}
					sealCPU += cputime.Thread() - t0
					calls++
				}
				if calls > 0 && sealCPU > 0 {
					b.ReportMetric(float64(sealCPU.Nanoseconds())/float64(calls*n), "seal-cpu-ns/pkt")
				}
			})
		}
	}
}

// pin binds the calling (locked) thread to CPU cpu.
func pin(b *testing.B, cpu int) {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		b.Fatalf("pin to CPU %d: %v", cpu, err)
	}
}
