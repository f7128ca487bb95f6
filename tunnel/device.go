package tunnel

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/allowedips"
	"github.com/gmtun/gmtun/tunnel/netio"
)

// Device is one tunnel interface: its TUN queues, its UDP bind, its peers
// and the goroutines that move packets between them (see the package
// documentation for the flow).
//
// Lifecycle:
//
//	NewDevice ──► created ──Up()──► up ──Close()──► closed
//	                 └──────────Close()──────────────┘
//
// A Device is safe for concurrent use.
type Device struct {
	log   *Logger
	clock Clock
	epoch time.Time

	local   *handshake.Local
	indices indexTable
	suites  []ciphers.SuiteID

	tuns       []netio.TUN
	tunWriters []sync.Mutex // one writer at a time per TUN queue
	bind       netio.Bind
	inline     bool // Config.RunToCompletion
	mtu        int
	listenPort uint16
	port       atomic.Uint32
	tick       time.Duration

	buffers        *bufferPool
	outPool        containerPool[outContainer]
	inPool         containerPool[inContainer]
	encryptQueue   chan *outContainer
	decryptQueue   chan *inContainer
	hsq            hsQueues      // the handshake queues (handshakeq.go)
	answered       answeredTable // initiations answered, by sender index (handshake_copies.go)
	load           handshake.LoadDetector
	rate           *handshake.RateLimiter
	stagedBudget   int64
	stagedTotal    atomic.Int64
	drops          dropCounters
	sealBatches    batchCounters
	openBatches    batchCounters
	hsInvalidMu    sync.Mutex
	hsInvalid      map[string]uint64
	lastErrorLog   atomic.Int64
	recvErrors     atomic.Uint64
	stall          stallWatch   // touched only by RoutineTimers
	peersMu        sync.RWMutex // guards peers and peerList
	peers          map[[handshake.PublicKeySize]byte]*Peer
	peerList       []*Peer
	routes         atomic.Pointer[allowedips.Table[*Peer]]
	configMu       sync.Mutex // serializes SetPeers, Up and Close
	nextTunQueue   int
	tickMu         sync.Mutex
	tickPeers      []*Peer
	stateUp        bool
	stateClosed    atomic.Bool
	closing        chan struct{}
	readers        sync.WaitGroup
	timerRoutine   sync.WaitGroup
	hsWorkers      sync.WaitGroup
	cryptoWorkers  sync.WaitGroup
	numHSWorkers   int
	numCryptoWorks int
}

// NewDevice returns a device over the given TUN queues (at least one) and
// bind. The device owns them from now on: Close closes them. No packet
// moves until Up.
func NewDevice(cfg Config, tuns []netio.TUN, bind netio.Bind) (*Device, error) {
	if cfg.PrivateKey == nil {
		return nil, errors.New("tunnel: Config.PrivateKey is required")
	}
	if len(tuns) == 0 {
		return nil, errors.New("tunnel: at least one TUN queue is required")
	}
	if bind == nil {
		return nil, errors.New("tunnel: a bind is required")
	}
	d := &Device{
		log:        cfg.Logger.normalize(),
		clock:      cfg.Clock,
		tuns:       tuns,
		tunWriters: make([]sync.Mutex, len(tuns)),
		bind:       bind,
		inline:     cfg.RunToCompletion,
		mtu:        cfg.MTU,
		listenPort: cfg.ListenPort,
		tick:       cfg.TickInterval,
		suites:     append([]ciphers.SuiteID(nil), cfg.Suites...),
		hsInvalid:  make(map[string]uint64),
		peers:      make(map[[handshake.PublicKeySize]byte]*Peer),
		closing:    make(chan struct{}),
	}
	if d.clock == nil {
		d.clock = systemClock{}
	}
	d.epoch = d.clock.Now()
	if d.tick <= 0 {
		d.tick = DefaultTickInterval
	}
	if d.mtu <= 0 {
		mtu, err := tuns[0].MTU()
		if err != nil {
			return nil, fmt.Errorf("tunnel: reading the TUN MTU: %w", err)
		}
		d.mtu = mtu
	}
	if d.mtu < 576 || d.mtu > netio.MaxSegmentSize {
		return nil, fmt.Errorf("tunnel: MTU %d out of range [576, %d]", d.mtu, netio.MaxSegmentSize)
	}
	d.indices.table = make(map[uint32]indexEntry)
	local, err := handshake.NewLocal(handshake.Config{
		PrivateKey: cfg.PrivateKey, ID: []byte(cfg.ID), Rand: cfg.Rand, Indices: &d.indices,
	})
	if err != nil {
		return nil, err
	}
	d.local = local

	// Buffers: every reader holds a full vector, the staging queues get a
	// quarter of the rest.
	held := (len(tuns) + 2) * min(ciphers.MaxBatch, max(bind.BatchSize(), tunBatch(tuns), inPlaceSlots))
	maxBufs := cfg.MaxBuffers
	if maxBufs <= 0 {
		maxBufs = DefaultMaxBuffers
	}
	maxBufs = max(maxBufs, 2*held+2*MaxStagedPackets)
	d.buffers = newBufferPool(maxBufs)
	d.stagedBudget = int64(max((maxBufs-held)/4, MaxStagedPackets))

	d.encryptQueue = make(chan *outContainer, QueueOutboundSize)
	d.decryptQueue = make(chan *inContainer, QueueInboundSize)
	d.initHandshakeQueues()
	d.rate = handshake.NewRateLimiter(4096)
	d.routes.Store(emptyRoutes())

	if err := d.SetPeers(cfg.Peers); err != nil {
		d.stopPeers()
		return nil, err
	}

	d.numCryptoWorks = runtime.NumCPU()
	d.numHSWorkers = (runtime.NumCPU() + 1) / 2
	for i := range d.numCryptoWorks {
		if d.inline {
			break // RunToCompletion: the readers seal and open
		}
		d.cryptoWorkers.Add(2)
		go d.RoutineEncryption(i)
		go d.RoutineDecryption(i)
	}
	for i := range d.numHSWorkers {
		d.hsWorkers.Add(1)
		go d.RoutineHandshake(i)
	}
	return d, nil
}

// RunToCompletion reports whether the device runs its batches to
// completion (Config.RunToCompletion) rather than through the workers.
func (d *Device) RunToCompletion() bool { return d.inline }

func tunBatch(tuns []netio.TUN) int {
	b := 1
	for _, t := range tuns {
		b = max(b, t.BatchSize())
	}
	return b
}

// Up opens the bind on the configured port and starts reading from the TUN
// queues and the network, and the timers.
func (d *Device) Up() error {
	d.configMu.Lock()
	defer d.configMu.Unlock()
	if d.stateClosed.Load() {
		return errors.New("tunnel: device is closed")
	}
	if d.stateUp {
		return errors.New("tunnel: device is already up")
	}
	// One receive pipeline for every bind: a copying one (wireguard-go's
	// off Linux, the tests' in-memory binds) reads through netio.InPlace.
	var inPlace []netio.InPlaceReceiveFunc
	var port uint16
	var err error
	if ipb, ok := d.bind.(netio.InPlaceBind); ok {
		inPlace, port, err = ipb.OpenInPlace(d.listenPort)
	} else {
		var fns []netio.ReceiveFunc
		fns, port, err = d.bind.Open(d.listenPort)
		for _, fn := range fns {
			inPlace = append(inPlace, netio.InPlace(fn, d.bind.BatchSize()))
		}
	}
	if err != nil {
		return fmt.Errorf("tunnel: opening the bind on port %d: %w", d.listenPort, err)
	}
	d.port.Store(uint32(port))
	d.stateUp = true
	for _, fn := range inPlace {
		d.readers.Add(1)
		go d.RoutineReceiveInPlace(fn)
	}
	for i := range d.tuns {
		d.readers.Add(1)
		go d.RoutineReadFromTUN(i)
	}
	d.timerRoutine.Add(1)
	go d.RoutineTimers()
	d.peersMu.RLock()
	peers := slices.Clone(d.peerList)
	d.peersMu.RUnlock()
	for _, p := range peers {
		if p.keepaliveInterval() > 0 {
			p.sendKeepalive() // a persistent keepalive starts the session
		}
	}
	d.log.Verbosef("device up, port %d, mtu %d, %d TUN queue(s)", port, d.mtu, len(d.tuns))
	return nil
}

// isClosed reports whether Close has started.
func (d *Device) isClosed() bool { return d.stateClosed.Load() }

// Close stops every goroutine, closes the bind and the TUN queues and drops
// all keys. It is idempotent.
func (d *Device) Close() error {
	d.configMu.Lock()
	defer d.configMu.Unlock()
	if d.stateClosed.Swap(true) {
		return nil
	}
	close(d.closing)
	d.buffers.close()
	errs := []error{d.bind.Close()}
	for _, t := range d.tuns {
		errs = append(errs, t.Close())
	}
	d.readers.Wait()
	d.timerRoutine.Wait()
	d.closeHandshakeQueues()
	d.hsWorkers.Wait()
	d.stopPeers()
	close(d.encryptQueue)
	close(d.decryptQueue)
	d.cryptoWorkers.Wait()
	d.log.Verbosef("device closed")
	return errors.Join(errs...)
}

// stopPeers removes every peer. d.configMu held (or construction).
func (d *Device) stopPeers() {
	d.peersMu.Lock()
	peers := d.peerList
	d.peerList = nil
	clear(d.peers)
	d.peersMu.Unlock()
	d.routes.Store(emptyRoutes())
	for _, p := range peers {
		p.stop()
	}
}

// since returns now as nanoseconds since the device epoch, at least 1, so
// that 0 can mean "unset" in atomic timestamps.
func (d *Device) since(now time.Time) int64 { return max(int64(now.Sub(d.epoch)), 1) }

// errorLimited logs at error level at most once a second device-wide; it
// is for failures that can repeat per batch (send, TUN write).
func (d *Device) errorLimited(format string, args ...any) {
	now := d.since(d.clock.Now())
	last := d.lastErrorLog.Load()
	if last != 0 && now-last < int64(time.Second) {
		return
	}
	if d.lastErrorLog.CompareAndSwap(last, now) {
		d.log.Errorf(format, args...)
	}
}
