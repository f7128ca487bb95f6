package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gmtun/gmtun/control"
	"github.com/gmtun/gmtun/tunnel"
)

// showTimeout bounds the exchange with one daemon.
const showTimeout = 5 * time.Second

func init() {
	register(&command{
		name:     "show",
		synopsis: "[NAME] [--json] [--socket-dir DIR]",
		summary:  "show the peers and counters of running interfaces",
		order:    40,
		help: `Asks the running 'gmtun up' of NAME (a configuration name, as for
/etc/gmtun/NAME.toml, or an interface name), or of every interface with a
control socket under DIR (DIR/NAME/IFACE.sock or DIR/IFACE.sock), for its
state and prints it: this side's public key, port, MTU, suites, the cipher
kernel in use for each primitive, offloads and packet drops by reason, then
for each peer its endpoint, allowed IPs, session suite, latest handshake and
bytes received and sent. After a reload it also lists the changed settings
that wait for a restart ("pending restart").

--json prints the same as JSON: one object for NAME, or an array of
objects without NAME. The field names are stable; docs/OPERATIONS.md
lists them. The socket is private to root, so run this as root.
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			asJSON := fs.Bool("json", false, "print JSON instead of text")
			dir := fs.String("socket-dir", "", "the base `DIR`ectory of the control sockets (default /run/gmtun)")
			return func(args []string) int {
				var name string
				if len(args) > 0 {
					// Flags may also follow the interface name.
					name = args[0]
					if err := fs.Parse(args[1:]); err != nil {
						if errors.Is(err, flag.ErrHelp) {
							fmt.Fprint(e.stdout, commandHelp(commands["show"], fs))
							return exitOK
						}
						return usageErrorf(e, "show: %v; run 'gmtun show --help'", err)
					}
					if rest := fs.Args(); len(rest) > 0 {
						return usageErrorf(e, "show: unexpected argument %q; at most one interface name", rest[0])
					}
					if !validIfaceName(name) && checkConfigName(name) != nil {
						return usageErrorf(e, "show: invalid interface name %q", name)
					}
				}
				return runShow(e, socketBase(e, *dir), name, *asJSON)
			}
		},
	})
}

// validIfaceName accepts what can be a Linux interface name and cannot
// escape the socket directory.
func validIfaceName(s string) bool {
	return s != "" && len(s) <= 15 && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00 :")
}

func runShow(e *env, dir, name string, asJSON bool) int {
	query := func(n, path string) (*control.Status, error) {
		ctx, cancel := context.WithTimeout(context.Background(), showTimeout)
		defer cancel()
		st, err := control.Query(ctx, path)
		if err != nil {
			return nil, showError(n, path, err)
		}
		return st, nil
	}
	if name != "" {
		path, err := findSocket(dir, name)
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				return failf(e, exitFailure, "show: permission denied on %s (run as root)", dir)
			}
			return failf(e, exitFailure, "show: interface %s is not running (%v)", name, err)
		}
		st, err := query(name, path)
		if err != nil {
			return failf(e, exitFailure, "%v", err)
		}
		if asJSON {
			return writeJSON(e, st)
		}
		writeStatus(e.stdout, st, time.Now())
		return exitOK
	}

	socks, err := control.Sockets(dir)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return failf(e, exitFailure, "show: permission denied on %s (run as root)", dir)
		}
		return failf(e, exitFailure, "show: %v", err)
	}
	code := exitOK
	all := []*control.Status{}
	for _, path := range socks {
		st, err := query(control.SocketInterface(path), path)
		if err != nil {
			fmt.Fprintf(e.stderr, "gmtun: %v\n", err)
			code = exitFailure
			continue
		}
		all = append(all, st)
	}
	if asJSON {
		if c := writeJSON(e, all); c != exitOK {
			return c
		}
		return code
	}
	for i, st := range all {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		writeStatus(e.stdout, st, time.Now())
	}
	return code
}

// showError turns a query failure into one sentence.
func showError(name, path string, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("show: interface %s is not running (no control socket %s)", name, path)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("show: interface %s is not running (stale control socket %s)", name, path)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("show: permission denied on %s (run as root)", path)
	}
	return fmt.Errorf("show: %s: %w", name, err)
}

func writeJSON(e *env, v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return failf(e, exitFailure, "show: encoding JSON: %v", err)
	}
	if _, err := e.stdout.Write(append(b, '\n')); err != nil {
		return failf(e, exitFailure, "show: %v", err)
	}
	return exitOK
}

// writeStatus prints st in the style of `wg show`; now is the reference
// for "ago" times.
func writeStatus(w io.Writer, st *control.Status, now time.Time) {
	fmt.Fprintf(w, "interface: %s\n", st.Interface)
	fmt.Fprintf(w, "  public key: %s\n", st.PublicKey)
	fmt.Fprintf(w, "  listening port: %d\n", st.ListenPort)
	if st.FwMark != 0 {
		fmt.Fprintf(w, "  fwmark: %#x\n", st.FwMark)
	}
	fmt.Fprintf(w, "  mtu: %d\n", st.MTU)
	fmt.Fprintf(w, "  suites: %s\n", orNone(strings.Join(st.Suites, ", ")))
	ks := make([]string, len(st.Kernels))
	for i, k := range st.Kernels {
		ks[i] = k.Primitive + " " + k.Selected
	}
	fmt.Fprintf(w, "  kernels: %s\n", orNone(strings.Join(ks, ", ")))
	if st.DataPath != "" {
		fmt.Fprintf(w, "  data path: %s on %d CPU(s)\n", st.DataPath, st.CPUs)
	}
	o := st.Offload
	fmt.Fprintf(w, "  offload: tun tso %s, uso %s, %d queue(s); udp gso %s/%s, gro %s/%s (ipv4/ipv6)\n",
		onOff(o.TUNTSO), onOff(o.TUNUSO), o.TUNQueues, onOff(o.UDPGSO4), onOff(o.UDPGSO6), onOff(o.UDPGRO4), onOff(o.UDPGRO6))
	fmt.Fprintf(w, "  drops: %s\n", counters(st.Drops))
	fmt.Fprintf(w, "  batches: seal %s; open %s\n", batchString(st.Seal), batchString(st.Open))
	if c := counters(st.HandshakeInvalid); c != "none" {
		fmt.Fprintf(w, "  rejected handshakes: %s\n", c)
	}
	if b := st.Buffers; b.Waiting > 0 {
		fmt.Fprintf(w, "  buffers: exhausted for %s (%d in use of %d, %d reader(s) waiting)\n",
			time.Duration(b.ExhaustedMillis)*time.Millisecond, b.InUse, b.Max, b.Waiting)
	}
	if st.LastReload != nil {
		fmt.Fprintf(w, "  last reload: %s", ago(*st.LastReload, now))
		if st.LastReloadError != "" {
			fmt.Fprintf(w, " (failed: %s)", st.LastReloadError)
		}
		fmt.Fprintln(w)
	}
	if len(st.PendingRestart) > 0 {
		fmt.Fprintf(w, "  pending restart: %s (changed in %s; the running value is kept until a restart)\n",
			strings.Join(st.PendingRestart, ", "), orNone(st.ConfigFile))
	}
	for i := range st.Peers {
		p := &st.Peers[i]
		fmt.Fprintf(w, "\npeer: %s\n", p.Name)
		fmt.Fprintf(w, "  public key: %s\n", p.PublicKey)
		fmt.Fprintf(w, "  endpoint: %s\n", orNone(p.Endpoint))
		fmt.Fprintf(w, "  allowed ips: %s\n", orNone(strings.Join(p.AllowedIPs, ", ")))
		if p.Suite != "" {
			fmt.Fprintf(w, "  suite: %s\n", p.Suite)
		}
		hs := "never"
		if p.LastHandshake != nil {
			hs = ago(*p.LastHandshake, now)
		}
		fmt.Fprintf(w, "  latest handshake: %s\n", hs)
		fmt.Fprintf(w, "  transfer: %s received, %s sent\n", humanBytes(p.RxBytes), humanBytes(p.TxBytes))
		if p.PersistentKeepalive > 0 {
			fmt.Fprintf(w, "  persistent keepalive: every %s\n", units(p.PersistentKeepalive, "second"))
		}
		if !p.Roaming {
			fmt.Fprintf(w, "  roaming: off\n")
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// counters formats the non-zero counters of m sorted by name, or "none".
func counters(m map[string]uint64) string {
	var parts []string
	for k, v := range m {
		if v != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// ago formats the time from t to now as "1 hour, 2 minutes, 3 seconds
// ago", like wg(8).
func ago(t, now time.Time) string {
	d := now.Sub(t)
	if d < time.Second {
		return "now"
	}
	secs := int(d / time.Second)
	var parts []string
	for _, u := range []struct {
		name string
		secs int
	}{{"day", 86400}, {"hour", 3600}, {"minute", 60}, {"second", 1}} {
		if n := secs / u.secs; n > 0 {
			parts = append(parts, units(n, u.name))
			secs -= n * u.secs
		}
	}
	return strings.Join(parts, ", ") + " ago"
}

// units formats n with the singular or plural unit name.
func units(n int, name string) string {
	if n == 1 {
		return "1 " + name
	}
	return fmt.Sprintf("%d %ss", n, name)
}

// humanBytes formats n with binary prefixes, like wg(8).
func humanBytes(n uint64) string {
	const (
		kib = 1 << 10
		mib = 1 << 20
		gib = 1 << 30
		tib = 1 << 40
	)
	switch {
	case n < kib:
		return units(int(n), "byte")
	case n < mib:
		return fmt.Sprintf("%.2f KiB", float64(n)/kib)
	case n < gib:
		return fmt.Sprintf("%.2f MiB", float64(n)/mib)
	case n < tib:
		return fmt.Sprintf("%.2f GiB", float64(n)/gib)
	}
	return fmt.Sprintf("%.2f TiB", float64(n)/tib)
}

// batchString formats batch occupancy: packets per call and lanes filled
// per 16-lane kernel call.
// bufferStatus converts the device's buffer diagnostics for the control
// socket.
func bufferStatus(b tunnel.BufferStats) control.Buffers {
	return control.Buffers{
		Max: b.Max, Allocated: b.Allocated, Free: b.Free, InUse: b.InUse,
		Waiting: b.Waiting, ExhaustedMillis: b.ExhaustedFor.Milliseconds(), Waits: b.Waits,
		Staged: b.Staged, EncryptQueue: b.EncryptQueue, DecryptQueue: b.DecryptQueue, HandshakeQueue: b.HandshakeQueue,
	}
}

func batchString(b control.Batches) string {
	if b.Calls == 0 {
		return "none yet"
	}
	s := fmt.Sprintf("%.1f packets/call, %.1f of 16 lanes/kernel call, %.0f ns/packet", b.PacketsPerCall, b.LanesPerKernelCall, b.NanosPerPacket)
	if b.SampledPackets > 0 {
		s += fmt.Sprintf(" (CPU %.0f)", b.CPUNanosPerPacket)
	}
	return s
}
