package ciphers

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkSealRemoteData measures Seal of 64 × 1420 bytes whose payload
// was just written on the same CPU ("local": as when the tunnel's reader
// reads, splits and seals on one core) or on another CPU ("remote": as
// when the thread moved between the read and the seal, or the kernel's
// copy ran on the other core), or copied in by the kernel on the same CPU
// ("syscall"), each thread pinned to its CPU (benchRemoteData). Only the
// Seal call's thread CPU time is counted ("seal-cpu-ns/pkt"). Needs two
// CPUs.
func BenchmarkSealRemoteData(b *testing.B) {
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
		payloads := make([][]byte, n)
		kcopy := memfdCopier(b, payloads, make([]byte, size))
		kfill := func() {
			for i, p := range pkts {
				payloads[i] = p[HeaderSize : HeaderSize+size]
			}
			kcopy()
		}
		benchRemoteData(b, id.String(), fill, kfill, func(b *testing.B, before func(int)) {
			benchSealCPU(b, key, pkts, size, before)
		})
	}
}

// BenchmarkOpenRemoteData measures Open of 64 sealed 1420-byte packets
// just copied into their buffers on the same CPU ("local") or on another
// CPU ("remote": as when the kernel's receive copy ran on the other core),
// as BenchmarkSealRemoteData does for Seal ("open-cpu-ns/pkt").
func BenchmarkOpenRemoteData(b *testing.B) {
	const n, size = 64, 1420
	for _, id := range []SuiteID{SM4GCM, ZUC256} {
		key, pkts := sealBenchInputs(b, id, "bench remote open", n, size)
		if err := key.Seal(pkts); err != nil {
			b.Fatal(err)
		}
		sealed := make([][]byte, n)
		for i, p := range pkts {
			sealed[i] = bytes.Clone(p)
		}
		restore := func() { // Open cut the tags off
			for i := range pkts {
				pkts[i] = pkts[i][:len(sealed[i])]
			}
		}
		fill := func(byte) {
			restore()
			for i := range pkts {
				copy(pkts[i], sealed[i])
			}
		}
		kcopy := memfdCopier(b, pkts, sealed...)
		kfill := func() {
			restore()
			kcopy()
		}
		benchRemoteData(b, id.String(), fill, kfill, func(b *testing.B, before func(int)) {
			benchCPU(b, n*size, n, "open-cpu-ns/pkt", before, func() {
				if m := key.Open(pkts); m.Count() != n {
					b.Fatalf("Open verified %d of %d packets", m.Count(), n)
				}
			})
		})
	}
}

// benchRemoteData runs name/local, name/syscall and name/remote: measure
// on a thread pinned to CPU 1, with the packets rewritten before each
// timed call by fill(call) on that CPU (local), by kfill, whose copies the
// kernel makes on that CPU in system calls (syscall: as the TUN read and
// the UDP receive copy a packet in), or by fill(call) on a thread pinned
// to CPU 0 (remote).
func benchRemoteData(b *testing.B, name string, fill func(byte), kfill func(), measure func(b *testing.B, before func(call int))) {
	if runtime.NumCPU() < 2 {
		b.Skip("needs two CPUs")
	}
	b.Run(name+"/syscall", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := pin(1); err != nil {
			b.Fatal(err)
		}
		measure(b, func(int) { kfill() })
	})
	b.Run(name+"/local", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := pin(1); err != nil {
			b.Fatal(err)
		}
		measure(b, func(call int) { fill(byte(call)) })
	})
	b.Run(name+"/remote", func(b *testing.B) {
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
		measure(b, func(call int) {
			req <- byte(call)
			<-ack
		})
	})
}

// memfdCopier writes one image per packet (the last of images for every
// packet past it) one after another into a memory file and returns a
// function that reads packet i's image into dsts[i], which must be as long
// as the image, with pread, one system call per packet: the kernel's copy,
// as the TUN read and the UDP receive make it.
func memfdCopier(b *testing.B, dsts [][]byte, images ...[]byte) func() {
	fd, err := unix.MemfdCreate("gmtun-bench", unix.MFD_CLOEXEC)
	if err != nil {
		b.Fatalf("memfd_create: %v", err)
	}
	b.Cleanup(func() { unix.Close(fd) })
	offs := make([]int64, len(dsts))
	var off int64
	for i := range dsts {
		img := images[min(i, len(images)-1)]
		if _, err := unix.Pwrite(fd, img, off); err != nil {
			b.Fatalf("pwrite: %v", err)
		}
		offs[i] = off
		off += int64(len(img))
	}
	return func() {
		for i, d := range dsts {
			if k, err := unix.Pread(fd, d, offs[i]); err != nil || k != len(d) {
				panic(fmt.Sprintf("pread of packet %d: %d bytes, %v", i, k, err))
			}
		}
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
