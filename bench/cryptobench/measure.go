package cryptobench

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gmtun/gmtun/ciphers"
)

// Operations a cell can measure.
const (
	OpSeal = "seal"
	OpOpen = "open"
)

// The default grid of `gmtun bench` (see DefaultOptions).
var (
	// defaultSizes are the inner packet sizes in bytes: a small packet,
	// the IPv4 minimum MTU, a full tunnel MTU and a GSO-sized one.
	defaultSizes = [...]int{64, 576, 1420, 8192}
	// defaultBatches are the batch sizes (packets per Seal or Open call).
	defaultBatches = [...]int{1, 8, 16, 64}
)

const (
	// DefaultMinTime is the least CPU time one timed run of a cell lasts.
	DefaultMinTime = 200 * time.Millisecond
	// DefaultCount is the number of timed runs per cell (the median is
	// reported).
	DefaultCount = 5
	// anchorBatch is the number of packet buffers an anchor cell cycles
	// through; anchors have no batch API, so their batch column is 1.
	anchorBatch = 1
)

// Options select what one run measures.
type Options struct {
	// Suites are the gmtun suites to measure, in table order.
	Suites []ciphers.SuiteID `json:"suites"`
	// Sizes are inner packet sizes in bytes (1..MaxSize); bodies are
	// padded to a multiple of 16 as the tunnel pads them.
	Sizes []int `json:"sizes"`
	// Batches are packets per Seal or Open call (1..ciphers.MaxBatch).
	Batches []int `json:"batches"`
	// MinTime is the least CPU time of one timed run of a cell.
	MinTime time.Duration `json:"min_time"`
	// Count is the number of timed runs per cell.
	Count int `json:"count"`
	// Open adds cells for the receive side (Key.Open) after the seal cells.
	Open bool `json:"open"`
	// NoAnchors leaves out the gmsm and Go AES-GCM anchors (and ratios).
	NoAnchors bool `json:"no_anchors"`
}

// DefaultOptions returns the default grid: every suite, inner packet
// sizes 64, 576, 1420 and 8192 bytes, batches of 1, 8, 16 and 64 packets,
// DefaultMinTime, DefaultCount, seal only, with anchors.
func DefaultOptions() Options {
	return Options{
		Suites:  slices.Clone(ciphers.Suites[:]),
		Sizes:   slices.Clone(defaultSizes[:]),
		Batches: slices.Clone(defaultBatches[:]),
		MinTime: DefaultMinTime,
		Count:   DefaultCount,
	}
}

// Validate reports the first problem with o, as one sentence.
func (o *Options) Validate() error {
	switch {
	case len(o.Suites) == 0:
		return errors.New("cryptobench: no suite selected")
	case len(o.Sizes) == 0:
		return errors.New("cryptobench: no packet size selected")
	case len(o.Batches) == 0:
		return errors.New("cryptobench: no batch size selected")
	case o.MinTime <= 0:
		return fmt.Errorf("cryptobench: minimum time per run must be positive, got %v", o.MinTime)
	case o.Count < 1:
		return fmt.Errorf("cryptobench: run count must be at least 1, got %d", o.Count)
	}
	for _, id := range o.Suites {
		if !slices.Contains(ciphers.Suites[:], id) {
			return fmt.Errorf("cryptobench: unknown suite %v", id)
		}
	}
	for _, n := range o.Sizes {
		if n < 1 || n > MaxSize {
			return fmt.Errorf("cryptobench: packet size %d outside 1..%d", n, MaxSize)
		}
	}
	for _, n := range o.Batches {
		if n < 1 || n > ciphers.MaxBatch {
			return fmt.Errorf("cryptobench: batch size %d outside 1..%d", n, ciphers.MaxBatch)
		}
	}
	return nil
}

// Cell is one measurement: an implementation of a suite, one operation,
// one inner packet size and one batch size.
type Cell struct {
	Suite string `json:"suite"`
	Impl  string `json:"impl"`
	Op    string `json:"op"`
	Size  int    `json:"size"`
	Batch int    `json:"batch"`
}

// String names the cell for progress lines.
func (c Cell) String() string {
	return fmt.Sprintf("%s %s %s %d B × %d", c.Impl, c.Suite, c.Op, c.Size, c.Batch)
}

// ops returns the operations o measures.
func (o *Options) ops() []string {
	if o.Open {
		return []string{OpSeal, OpOpen}
	}
	return []string{OpSeal}
}

// Cells lists the cells of one tier process: the gmtun grid when gmtun is
// set, then (when anchors is set and o asks for them) the anchors at batch
// 1 for every selected suite and size. Anchors come first so a run's
// earliest results are the reference.
func (o *Options) Cells(gmtun, anchors bool) []Cell {
	var cells []Cell
	if anchors && !o.NoAnchors {
		for _, op := range o.ops() {
			for _, id := range o.Suites {
				for _, size := range o.Sizes {
					if hasGMSMAnchor(id) {
						cells = append(cells, Cell{Suite: id.String(), Impl: ImplGMSM, Op: op, Size: size, Batch: anchorBatch})
					}
					if id == aesAnchorSuite(o.Suites) {
						cells = append(cells, Cell{Suite: AESGCM, Impl: ImplGo, Op: op, Size: size, Batch: anchorBatch})
					}
				}
			}
		}
	}
	if gmtun {
		for _, op := range o.ops() {
			for _, id := range o.Suites {
				for _, size := range o.Sizes {
					for _, n := range o.Batches {
						cells = append(cells, Cell{Suite: id.String(), Impl: ImplGmtun, Op: op, Size: size, Batch: n})
					}
				}
			}
		}
	}
	return cells
}

// Result is the measurement of one cell in one tier. Field names are the
// stable JSON schema of `gmtun bench --json`.
type Result struct {
	Cell
	// Tier is the name of the tier process that measured the cell.
	Tier string `json:"tier"`
	// Kernels names the implementation(s) the suite ran on in that tier
	// (from ciphers.Tiers()), or the library for anchors.
	Kernels string `json:"kernels"`
	// MBPerSec is inner-packet bytes (Size per packet) per second of
	// thread CPU time, in 10^6 bytes, from the median run.
	MBPerSec float64 `json:"mb_per_s"`
	// NsPerPacket is thread CPU time per packet of the median run.
	NsPerPacket float64 `json:"ns_per_packet"`
	// ProcessNsPerPacket is the process's CPU time per packet over the
	// median run (adds garbage-collector work done on other threads).
	ProcessNsPerPacket float64 `json:"process_ns_per_packet"`
	// AllocsPerBatch is the number of heap allocations per step (per
	// Seal or Open call; per packet for anchors), over all runs. It is
	// counted process-wide, so an unrelated runtime allocation can show
	// as a small fraction.
	AllocsPerBatch float64 `json:"allocs_per_batch"`
	// Samples are the thread-CPU ns per packet of every run.
	Samples []float64 `json:"samples_ns_per_packet"`
	// VsGMSM is MBPerSec divided by the gmsm anchor's for the same suite,
	// operation and size (0 when not measured).
	VsGMSM float64 `json:"vs_gmsm,omitempty"`
	// VsAESGCM is, for sm4-gcm and ublock-gcm, MBPerSec divided by Go
	// AES-128-GCM's for the same operation and size (0 otherwise).
	VsAESGCM float64 `json:"vs_aes_gcm,omitempty"`
}

// newStepper returns the stepper of c.
func newStepper(c Cell) (stepper, error) {
	if c.Impl == ImplGmtun {
		id, err := ciphers.ParseSuite(c.Suite)
		if err != nil {
			return nil, err
		}
		return newSuiteStepper(id, c.Op, c.Size, c.Batch)
	}
	return newAnchorStepper(c.Suite, c.Impl, c.Op, c.Size, c.Batch)
}

// Measure measures cell c in the calling process: count timed runs of at
// least minTime thread CPU time each, on a goroutine locked to its OS
// thread. The result's Tier and Kernels are left for the caller.
func Measure(c Cell, minTime time.Duration, count int) (Result, error) {
	if minTime <= 0 || count < 1 {
		return Result{}, errors.New("cryptobench: Measure needs a positive minimum time and count")
	}
	s, err := newStepper(c)
	if err != nil {
		return Result{}, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m, err := measureStepper(s, c.Batch, minTime, count)
	if err != nil {
		return Result{}, fmt.Errorf("cryptobench: %v: %w", c, err)
	}
	r := Result{Cell: c, Samples: m.samples, AllocsPerBatch: m.allocsPerStep}
	r.NsPerPacket = m.median
	r.ProcessNsPerPacket = m.processMedian
	if r.NsPerPacket > 0 {
		r.MBPerSec = float64(c.Size) / r.NsPerPacket * 1e3
	}
	return r, nil
}

// measurement is what measureStepper found.
type measurement struct {
	samples       []float64 // thread-CPU ns per packet of each run
	median        float64   // median of samples
	processMedian float64   // process-CPU ns per packet of the median run
	allocsPerStep float64
}

// measureStepper times s: it first sizes a chunk of steps that lasts
// about a millisecond (so that reading the clock, a system call, costs
// nothing measurable), then runs count runs of whole chunks until each
// has used minTime of thread CPU time. The caller has locked the thread.
func measureStepper(s stepper, pktsPerStep int, minTime time.Duration, count int) (measurement, error) {
	chunkTarget := min(time.Millisecond, minTime/4)
	chunk := 1
	for {
		t0, err := threadCPU()
		if err != nil {
			return measurement{}, err
		}
		for range chunk {
			if err := s.step(); err != nil {
				return measurement{}, err
			}
		}
		t1, err := threadCPU()
		if err != nil {
			return measurement{}, err
		}
		if d := t1 - t0; d >= chunkTarget || chunk >= 1<<24 {
			break
		}
		chunk *= 2
	}

	m := measurement{samples: make([]float64, count)}
	process := make([]float64, count)
	var steps uint64
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for r := range count {
		p0, err := processCPU()
		if err != nil {
			return measurement{}, err
		}
		t0, err := threadCPU()
		if err != nil {
			return measurement{}, err
		}
		n, elapsed := 0, time.Duration(0)
		for elapsed < minTime {
			for range chunk {
				if err := s.step(); err != nil {
					return measurement{}, err
				}
			}
			n += chunk
			t1, err := threadCPU()
			if err != nil {
				return measurement{}, err
			}
			elapsed = t1 - t0
		}
		p1, err := processCPU()
		if err != nil {
			return measurement{}, err
		}
		pkts := float64(n) * float64(pktsPerStep)
		m.samples[r] = float64(elapsed.Nanoseconds()) / pkts
		process[r] = float64((p1 - p0).Nanoseconds()) / pkts
		steps += uint64(n)
	}
	runtime.ReadMemStats(&ms1)
	m.allocsPerStep = float64(ms1.Mallocs-ms0.Mallocs) / float64(steps)
	mid := medianIndex(m.samples)
	m.median, m.processMedian = m.samples[mid], process[mid]
	return m, nil
}

// medianIndex returns the index of the median of xs (the lower median for
// an even count).
func medianIndex(xs []float64) int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case xs[a] < xs[b]:
			return -1
		case xs[a] > xs[b]:
			return 1
		}
		return 0
	})
	return idx[(len(idx)-1)/2]
}

// kernelsFor names the implementations suite runs on according to ts
// (ciphers.Tiers()): the selected implementation of the primitives the
// suite uses, or of every primitive when none of them is registered.
func kernelsFor(suite string, ts []ciphers.Tier) string {
	var want []string
	switch suite {
	case ciphers.SM4GCM.String():
		want = []string{"sm4", "ghash", "gcm"}
	case ciphers.UBlockGCM.String():
		want = []string{"ublock", "ghash"}
	case ciphers.ZUC128.String(), ciphers.ZUC256.String():
		want = []string{"zuc", "eia3", "mac"}
	}
	var names []string
	add := func(t ciphers.Tier) {
		if !slices.Contains(names, t.Selected) {
			names = append(names, t.Selected)
		}
	}
	for _, t := range ts {
		if slices.Contains(want, t.Primitive) {
			add(t)
		}
	}
	if len(names) == 0 {
		for _, t := range ts {
			add(t)
		}
	}
	if len(names) == 0 {
		return ciphers.GenericTier
	}
	return strings.Join(names, "/")
}
