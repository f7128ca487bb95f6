//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Where the UDP test's datagrams are lost. On this bed the tunnel, iperf3
// and both daemons share the machine's CPUs, and a tunnel that delivers
// faster than iperf3's server reads overflows the server's socket: those
// datagrams crossed the tunnel and are lost after it. The bed tells the
// two apart by the per-socket drop counters of B's namespace
// (/proc/net/udp and /proc/net/udp6, last column), polled while the test
// runs: the drops of the socket on iperfPort are iperf3's, every other
// socket's are the tunnel's (its underlay sockets).

// udpSocket is one row of /proc/net/udp{,6}: the local port and the drop
// count.
type udpSocket struct {
	port  uint16
	drops uint64
}

// udpSocketDrops maps a socket (inode) of /proc/net/udp{,6} to its row.
type udpSocketDrops map[uint64]udpSocket

// parseProcNetUDP reads the rows of /proc/net/udp and /proc/net/udp6
// (concatenated; header lines skipped) into m.
func parseProcNetUDP(b []byte, m udpSocketDrops) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 13 || f[0] == "sl" {
			continue
		}
		_, portHex, ok := strings.Cut(f[1], ":")
		if !ok {
			return fmt.Errorf("tunnelbed: /proc/net/udp: local address %q", f[1])
		}
		port, err1 := strconv.ParseUint(portHex, 16, 16)
		inode, err2 := strconv.ParseUint(f[9], 10, 64)
		drops, err3 := strconv.ParseUint(f[len(f)-1], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return fmt.Errorf("tunnelbed: /proc/net/udp: row %q", sc.Text())
		}
		m[inode] = udpSocket{uint16(port), drops}
	}
	return sc.Err()
}

// udpDropWatch polls B's UDP sockets during a test.
type udpDropWatch struct {
	mu    sync.Mutex
	first udpSocketDrops // each socket's drops when first seen
	last  udpSocketDrops // and when last seen
	err   error
	stop  chan struct{}
	done  chan struct{}
}

// watchUDPDrops starts polling B's namespace every interval until Stop.
func watchUDPDrops(ctx context.Context, bed *Bed, interval time.Duration) *udpDropWatch {
	w := &udpDropWatch{first: udpSocketDrops{}, last: udpSocketDrops{}, stop: make(chan struct{}), done: make(chan struct{})}
	poll := func() {
		out, err := bed.Command(ctx, bed.NSB, "cat", "/proc/net/udp", "/proc/net/udp6").Output()
		m := udpSocketDrops{}
		if err == nil {
			err = parseProcNetUDP(out, m)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			if w.err == nil && ctx.Err() == nil {
				w.err = fmt.Errorf("tunnelbed: reading B's UDP sockets: %w", err)
			}
			return
		}
		for inode, s := range m {
			if _, ok := w.first[inode]; !ok {
				w.first[inode] = s
			}
			w.last[inode] = s
		}
	}
	poll()
	go func() {
		defer close(w.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				poll()
			}
		}
	}()
	return w
}

// Stop ends the polling and returns the drops counted meanwhile at
// iperf3's sockets (those on iperfPort, counted from zero: they are
// created by the test) and at every other socket (the tunnel's).
func (w *udpDropWatch) Stop() (app, tunnel float64, err error) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for inode, s := range w.last {
		if s.port == iperfPort {
			app += float64(s.drops)
		} else {
			tunnel += float64(s.drops - w.first[inode].drops)
		}
	}
	return app, tunnel, w.err
}
