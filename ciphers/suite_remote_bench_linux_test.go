package ciphers

import (
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
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
		key, pkts := sealBenchInputs(b, id, "bench remote", n, size)
		fill := func(v byte) {
			for _, p := range pkts {
				payload := p[HeaderSize : HeaderSize+size]
				for j := range payload {
					payload[j] = v
				}
			}
		}
		b.Run(id.String()+"/local", func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := pin(1); err != nil {
				b.Fatal(err)
			}
			benchSealCPU(b, key, pkts, size, func(call int) { fill(byte(call)) })
		})
		b.Run(id.String()+"/remote", func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := pin(1); err != nil {
				b.Fatal(err)
			}
			req, ack, pinned := make(chan byte), make(chan struct{}), make(chan error)
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				err := pin(0)
				pinned <- err
				if err != nil {
					return
				}
				for v := range req {
					fill(v)
					ack <- struct{}{}
				}
			}()
			if err := <-pinned; err != nil {
				b.Fatal(err)
			}
			defer close(req)
			benchSealCPU(b, key, pkts, size, func(call int) {
				req <- byte(call)
				<-ack
			})
		})
	}
}

// pin binds the calling (locked) thread to CPU cpu.
func pin(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to CPU %d: %w", cpu, err)
	}
	return nil
}
