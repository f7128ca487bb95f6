//go:build linux

package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/gmtun/gmtun/control"
)

// batchCounts are one gmtun daemon's cumulative crypto batch counters, as
// its control socket reports them (control.Status.Seal and .Open).
type batchCounts struct {
	SealCalls, SealPackets uint64
	OpenCalls, OpenPackets uint64
	// SealNanos and OpenNanos are the wall-clock time inside the calls.
	SealNanos, OpenNanos uint64
	// The calls whose thread CPU time the daemon sampled: their packets
	// and that time.
	SealSampled, SealSampledCPU uint64
	OpenSampled, OpenSampledCPU uint64
}

// batchFill is how full gmtun's crypto batches were during one test, in
// the direction of the test traffic: A seals it, B opens it. The kernels
// take 16 packets per call; a batch of up to 128 fills them several times.
type batchFill struct {
	// SealPacketsPerCall is the packets per Seal call in A.
	SealPacketsPerCall num `json:"a_seal_packets_per_call"`
	// OpenPacketsPerCall is the packets per Open call in B.
	OpenPacketsPerCall num `json:"b_open_packets_per_call"`
	// SealNanosPerPacket and OpenNanosPerPacket are the wall-clock time
	// inside A's Seal and B's Open calls per packet: the cryptography's
	// cost in the running tunnel (preemption included).
	SealNanosPerPacket num `json:"a_seal_ns_per_packet"`
	OpenNanosPerPacket num `json:"b_open_ns_per_packet"`
	// SealCPUNanosPerPacket and OpenCPUNanosPerPacket are the thread CPU
	// time per packet in the sampled calls (one in 64): the same cost
	// without the waits for a CPU, comparable with `gmtun bench`.
	SealCPUNanosPerPacket num `json:"a_seal_cpu_ns_per_packet"`
	OpenCPUNanosPerPacket num `json:"b_open_cpu_ns_per_packet"`
}

// fillBetween is the batch fill of the interval between two readings of
// A's and B's counters.
func fillBetween(before, after [2]batchCounts) batchFill {
	a0, a1, b0, b1 := before[0], after[0], before[1], after[1]
	return batchFill{
		SealPacketsPerCall:    perCall(a1.SealPackets-a0.SealPackets, a1.SealCalls-a0.SealCalls),
		OpenPacketsPerCall:    perCall(b1.OpenPackets-b0.OpenPackets, b1.OpenCalls-b0.OpenCalls),
		SealNanosPerPacket:    perCall(a1.SealNanos-a0.SealNanos, a1.SealPackets-a0.SealPackets),
		OpenNanosPerPacket:    perCall(b1.OpenNanos-b0.OpenNanos, b1.OpenPackets-b0.OpenPackets),
		SealCPUNanosPerPacket: perCall(a1.SealSampledCPU-a0.SealSampledCPU, a1.SealSampled-a0.SealSampled),
		OpenCPUNanosPerPacket: perCall(b1.OpenSampledCPU-b0.OpenSampledCPU, b1.OpenSampled-b0.OpenSampled),
	}
}

// perCall is n/calls, NaN without calls.
func perCall(n, calls uint64) num {
	if calls == 0 {
		return num(math.NaN())
	}
	return num(float64(n) / float64(calls))
}

// batchQueryTimeout bounds one control-socket query.
const batchQueryTimeout = 2 * time.Second

// controlDirs are where gmtun daemons put their control sockets: the
// directory $GMTUN_SOCKET_DIR (control.DirEnv) names, if set, and
// control.DefaultDir.
func controlDirs() []string {
	if d := os.Getenv(control.DirEnv); d != "" && d != control.DefaultDir {
		return []string{d, control.DefaultDir}
	}
	return []string{control.DefaultDir}
}

// queryBatches reads the batch counters of the daemons serving ifaces
// (A's and B's interface) through their control sockets, found by
// interface name in dirs (and one level below, control.Sockets).
func queryBatches(ctx context.Context, dirs []string, ifaces [2]string) ([2]batchCounts, error) {
	var out [2]batchCounts
	for i, iface := range ifaces {
		path, err := findSocket(dirs, iface)
		if err != nil {
			return out, err
		}
		qctx, cancel := context.WithTimeout(ctx, batchQueryTimeout)
		st, err := control.Query(qctx, path)
		cancel()
		if err != nil {
			return out, fmt.Errorf("tunnelbed: batch counters of %s: %w", iface, err)
		}
		out[i] = batchCounts{
			SealCalls: st.Seal.Calls, SealPackets: st.Seal.Packets,
			OpenCalls: st.Open.Calls, OpenPackets: st.Open.Packets,
			SealNanos: st.Seal.Nanos, OpenNanos: st.Open.Nanos,
			SealSampled: st.Seal.SampledPackets, SealSampledCPU: st.Seal.SampledCPUNanos,
			OpenSampled: st.Open.SampledPackets, OpenSampledCPU: st.Open.SampledCPUNanos,
		}
	}
	return out, nil
}

// findSocket returns the control socket of iface in dirs.
func findSocket(dirs []string, iface string) (string, error) {
	for _, dir := range dirs {
		paths, err := control.Sockets(dir)
		if err != nil {
			continue
		}
		for _, p := range paths {
			if control.SocketInterface(p) == iface {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("tunnelbed: no control socket for %s in %v", iface, dirs)
}
