//go:build amd64 && gc && !purego

package zuc

import (
	"encoding/binary"
	"unsafe"

	"github.com/gmtun/gmtun/kernels/cpu"
)

// Lane widths and the keystream block the kernels produce per lane and
// iteration.
const (
	Lanes16    = 16 // lanes of State16
	Lanes8     = 8  // lanes of State8
	BlockWords = 16 // keystream words per lane per kernel iteration
	BlockBytes = 4 * BlockWords
)

// MaxLanes is the widest kernel's lane count: the packets one kernel call
// carries at most.
const MaxLanes = Lanes16

var (
	useX16GFNI  = cpu.X86.AVX512GFNI && cpu.X86.VBMI2 && cpu.X86.VBMI
	useX16AESNI = cpu.X86.AVX512 && cpu.X86.AESNI
	useX8GFNI   = cpu.X86.AVX2 && cpu.X86.GFNI
	useX8AESNI  = cpu.X86.AVX2 && cpu.X86.AESNI
	// useLoad16: the vector key loading of State16 (AVX-512 F/BW only,
	// shared by both 16-lane kernel sets).
	useLoad16 = cpu.X86.AVX512
)

// Kernels16 names one of the two sets of 16-lane kernels. They are
// generated from one program with S1 and the funnel shifts as its
// parameter and differ in nothing else: the same state, rounds and call
// shapes.
type Kernels16 uint8

// The 16-lane kernel sets.
const (
	GFNI16  Kernels16 = iota + 1 // AVX-512 F/BW/VL/DQ, VBMI, VBMI2 and GFNI: one ZMM group, S0 as VPERMT2B, S1 as two affine instructions
	AESNI16                      // AVX-512 F/BW/VL/DQ and AES-NI (Skylake-SP, Cascade Lake): S1 through AESENCLAST
)

// Supported reports whether the CPU runs k.
func (k Kernels16) Supported() bool {
	switch k {
	case GFNI16:
		return useX16GFNI
	case AESNI16:
		return useX16AESNI
	}
	return false
}

// String returns the instruction sets of k, as kernels/cpu spells the
// tier names: the names ciphers/internal/zuc registers the tiers under.
func (k Kernels16) String() string {
	switch k {
	case GFNI16:
		return cpu.TierAVX512GFNI
	case AESNI16:
		return cpu.TierAVX512AESNI
	}
	return "invalid 16-lane kernels"
}

// Lanes returns the lanes of one call of k (Lanes16).
func (k Kernels16) Lanes() int { return Lanes16 }

// require panics unless the CPU runs k.
func (k Kernels16) require() {
	if !k.Supported() {
		panic("zuc: the CPU lacks the 16-lane kernels " + k.String())
	}
}

// Kernels8 names one of the two sets of 8-lane kernels. They are generated
// from one program with S1 as its parameter and differ in nothing else:
// the same state, rounds and call shapes.
type Kernels8 uint8

// The 8-lane kernel sets.
const (
	GFNI8  Kernels8 = iota + 1 // AVX2, BMI2 and VEX-encoded GFNI: S1 as two affine instructions
	AESNI8                     // AVX2, BMI2 and AES-NI, for CPUs without GFNI: S1 through AESENCLAST
)

// Supported reports whether the CPU runs k.
func (k Kernels8) Supported() bool {
	switch k {
	case GFNI8:
		return useX8GFNI
	case AESNI8:
		return useX8AESNI
	}
	return false
}

// String returns the instruction sets of k, as kernels/cpu spells the
// tier names: the names ciphers/internal/zuc registers the tiers under.
func (k Kernels8) String() string {
	switch k {
	case GFNI8:
		return cpu.TierAVX2GFNI
	case AESNI8:
		return cpu.TierAVX2AESNI
	}
	return "invalid 8-lane kernels"
}

// Lanes returns the lanes of one call of k (Lanes8).
func (k Kernels8) Lanes() int { return Lanes8 }

// require panics unless the CPU runs k.
func (k Kernels8) require() {
	if !k.Supported() {
		panic("zuc: the CPU lacks the 8-lane kernels " + k.String())
	}
}

// ZUC256Constants selects the constant set d loaded into a ZUC-256 lane.
// The 2018 ZUC-256 paper (§2.2, §3) uses d for the keystream and a tag-size
// dependent d for the MAC.
type ZUC256Constants int

// ZUC-256 constant sets.
const (
	ZUC256Keystream ZUC256Constants = iota // encryption keystream
	ZUC256MAC32                            // 32-bit MAC
	ZUC256MAC64                            // 64-bit MAC
	ZUC256MAC128                           // 128-bit MAC
)

// zuc256D are the 7-bit constants d_0..d_15 of the ZUC-256 paper, one per
// byte, indexed by ZUC256Constants.
var zuc256D = [4][16]byte{
	{0x22, 0x2f, 0x24, 0x2a, 0x6d, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x52, 0x10, 0x30},
	{0x22, 0x2f, 0x25, 0x2a, 0x6d, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x52, 0x10, 0x30},
	{0x23, 0x2f, 0x24, 0x2a, 0x6d, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x52, 0x10, 0x30},
	{0x23, 0x2f, 0x25, 0x2a, 0x6d, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x52, 0x10, 0x30},
}

// zuc128D are the 15-bit constants d_0..d_15 of GB/T 33133.1-2016 §3.5.1.
var zuc128D = [16]uint32{
	0x44d7, 0x26bc, 0x626b, 0x135e, 0x5789, 0x35e2, 0x7135, 0x09af,
	0x4d78, 0x2f13, 0x6bc4, 0x1af1, 0x5e26, 0x3c4d, 0x789a, 0x47ac,
}

// Lane is the state of one ZUC instance: the LFSR cells s_0..s_15 (31-bit
// values) and the registers R1, R2 of F (GB/T 33133.1 §3.3).
type Lane struct {
	S      [16]uint32
	R1, R2 uint32
}

// State layout, W lanes: rows 0..15 s_j, row 16 R1, row 17 R2,
// rows 18..33 keystream scratch (row 18+i = word i of every lane).
const (
	rowR1      = 16
	rowR2      = 17
	rowScratch = 18
	stateRows  = 34
)

// State16 is the lane state of the 16-lane kernels. The zero value is
// ready for loading; it holds no pointers and is about 2 KiB.
type State16 struct {
	w [stateRows * Lanes16]uint32
}

// State8 is the lane state of the 8-lane kernels.
type State8 struct {
	w [stateRows * Lanes8]uint32
}

func checkLane(lane, lanes int) {
	if uint(lane) >= uint(lanes) {
		panic("zuc: lane index out of range")
	}
}

func getLane(w []uint32, lanes, lane int) Lane {
	checkLane(lane, lanes)
	var l Lane
	for i := range l.S {
		l.S[i] = w[i*lanes+lane]
	}
	l.R1 = w[rowR1*lanes+lane]
	l.R2 = w[rowR2*lanes+lane]
	return l
}

func setLane(w []uint32, lanes, lane int, l *Lane) {
	checkLane(lane, lanes)
	for i := range l.S {
		w[i*lanes+lane] = l.S[i] & 0x7fffffff
	}
	w[rowR1*lanes+lane] = l.R1
	w[rowR2*lanes+lane] = l.R2
}

// checkKeyStream validates the KeyStream arguments for lanes lanes.
func checkKeyStream(ks []uint32, stride, n, lanes int) {
	if n < 0 || stride < n {
		panic("zuc: invalid keystream length or stride")
	}
	if n > 0 && len(ks) < (lanes-1)*stride+n {
		panic("zuc: keystream buffer too short")
	}
}

// tailWords copies scratch words 0..n-1 of every lane into ks.
func tailWords(w []uint32, lanes int, ks []uint32, stride, at, n int) {
	for c := 0; c < lanes; c++ {
		out := ks[c*stride+at : c*stride+at+n]
		for i := range out {
			out[i] = w[(rowScratch+i)*lanes+c]
		}
	}
}

// tailXOR XORs the first n bytes of the big-endian scratch words of lane c.
func tailXOR(w []uint32, lanes, c int, dst, src []byte) {
	var b [4]byte
	for i := 0; i < len(src); i += 4 {
		binary.BigEndian.PutUint32(b[:], w[(rowScratch+i/4)*lanes+c])
		m := min(4, len(src)-i)
		for j := 0; j < m; j++ {
			dst[i+j] = src[i+j] ^ b[j]
		}
	}
}

// lanePointer validates one lane's slices and returns their base
// pointers; a nil dst makes the lane inactive (nil pointers). The callers
// store the pointers in local arrays passed to the noescape kernels, so
// the lanes' buffers do not escape (a slice parameter would make the
// compiler assume they leak).
func lanePointer(dst, src []byte, n int) (*byte, *byte) {
	if dst == nil {
		return nil, nil
	}
	if len(dst) < n || len(src) < n {
		panic("zuc: lane buffer too short")
	}
	if n == 0 {
		return nil, nil
	}
	return &dst[0], &src[0]
}

// LoadZUC128 loads a ZUC-128 key and IV into lane (GB/T 33133.1 §3.5.1).
func (s *State16) LoadZUC128(lane int, key, iv *[16]byte) { loadZUC128(s.w[:], Lanes16, lane, key, iv) }

// LoadZUC256 loads a ZUC-256 key, 23-byte packed IV and constant set into
// lane (ZUC-256, 2018, §2.2).
func (s *State16) LoadZUC256(lane int, key *[32]byte, iv *[23]byte, c ZUC256Constants) {
	loadZUC256(s.w[:], Lanes16, lane, key, iv, c)
}

// LoadZUC128Lanes loads all 16 lanes at once, as LoadZUC128 on every
// lane would: lanes 0–7 with keyLo, lanes 8–15 with keyHi, lane c with
// ivs[c] (GB/T 33133.1 §3.5.1). It is several times cheaper than 16
// LoadZUC128 calls; on the 16-lane AVX-512 CPUs one vector kernel call
// (the cells built per lane and transposed into rows), cheaper again.
func (s *State16) LoadZUC128Lanes(keyLo, keyHi *[16]byte, ivs *[Lanes16][16]byte) {
	if useLoad16 {
		loadZUC128Lanes16AVX512(&s.w, keyLo, keyHi, ivs)
		return
	}
	for i := 0; i < 16; i++ {
		lo := uint32(keyLo[i])<<23 | zuc128D[i]<<8
		hi := uint32(keyHi[i])<<23 | zuc128D[i]<<8
		row := (*[Lanes16]uint32)(s.w[i*Lanes16 : (i+1)*Lanes16])
		for c := 0; c < Lanes16/2; c++ {
			row[c] = lo | uint32(ivs[c][i])
			row[c+Lanes16/2] = hi | uint32(ivs[c+Lanes16/2][i])
		}
	}
	clear(s.w[rowR1*Lanes16 : (rowR2+1)*Lanes16])
}

// LoadZUC256Lanes loads all 16 lanes at once, as LoadZUC256 on every
// lane would: lanes 0–7 with keyLo and constant set dLo, lanes 8–15 with
// keyHi and dHi, lane c with ivs[c] (ZUC-256, 2018, §2.2). The key parts
// of the cells are computed here, the IV fields of every lane and the
// transposition into the rows in one vector kernel call on AVX-512 CPUs.
func (s *State16) LoadZUC256Lanes(keyLo, keyHi *[32]byte, ivs *[Lanes16][23]byte, dLo, dHi ZUC256Constants) {
	var kp [2][16]uint32
	kp[0] = zuc256KeyPart(keyLo, dLo)
	if keyHi == keyLo && dHi == dLo { // one key for all lanes: compute its part once
		kp[1] = kp[0]
	} else {
		kp[1] = zuc256KeyPart(keyHi, dHi)
	}
	if useLoad16 {
		loadZUC256Lanes16AVX512(&s.w, &kp, ivs)
		return
	}
	for c := 0; c < Lanes16; c++ {
		storeZUC256(s.w[:], Lanes16, c, &ivs[c], &kp[c/(Lanes16/2)])
	}
	clear(s.w[rowR1*Lanes16 : (rowR2+1)*Lanes16])
}

// Lane returns a copy of lane's current state.
func (s *State16) Lane(lane int) Lane { return getLane(s.w[:], Lanes16, lane) }

// SetLane replaces lane's state with l.
func (s *State16) SetLane(lane int, l *Lane) { setLane(s.w[:], Lanes16, lane, l) }

// Init runs the 32 initialisation rounds and the discarded first work round
// (GB/T 33133.1 §3.5) on all 16 lanes, with the kernels k.
func (s *State16) Init(k Kernels16) {
	k.require()
	if k == AESNI16 {
		initRounds16AESNI(&s.w)
		return
	}
	initRounds16AVX512(&s.w)
}

// KeyStream generates the next n keystream words of every lane with the
// kernels k: lane c's words go to ks[c*stride : c*stride+n]. stride must
// be at least n.
func (s *State16) KeyStream(k Kernels16, ks []uint32, stride, n int) {
	k.require()
	checkKeyStream(ks, stride, n, Lanes16)
	if nb := n / BlockWords; nb > 0 {
		if k == AESNI16 {
			keyStream16AESNI(&s.w, &ks[0], stride, nb)
		} else {
			keyStream16AVX512(&s.w, &ks[0], stride, nb)
		}
	}
	if r := n % BlockWords; r > 0 {
		s.rows(k, r)
		tailWords(s.w[:], Lanes16, ks, stride, n-r, r)
	}
}

// rows runs n (1..16) single rounds into the scratch rows.
func (s *State16) rows(k Kernels16, n int) {
	if k == AESNI16 {
		rows16AESNI(&s.w, n)
		return
	}
	rows16AVX512(&s.w, n)
}

// XORKeyStream sets dst[c][:n] = src[c][:n] ⊕ keystream of lane c for every
// lane with dst[c] != nil (keystream words big-endian, as EEA3 and the
// ZUC-256 keystream), with the kernels k. It consumes ⌈n/4⌉ words per
// lane. dst[c] and src[c] must overlap entirely or not at all.
func (s *State16) XORKeyStream(k Kernels16, dst, src *[Lanes16][]byte, n int) {
	k.require()
	var dp, sp [Lanes16]*byte
	for c := range dst {
		dp[c], sp[c] = lanePointer(dst[c], src[c], n)
	}
	nb := n / BlockBytes
	if nb > 0 {
		sp = prefetchable(sp, nil)
		if k == AESNI16 {
			xorKeyStream16AESNI(&s.w, &dp, &sp, nb)
		} else {
			xorKeyStream16AVX512(&s.w, &dp, &sp, nb)
		}
	}
	if r := n % BlockBytes; r > 0 {
		s.rows(k, (r+3)/4)
		at := n - r
		for c := range dst {
			if dst[c] != nil {
				tailXOR(s.w[:], Lanes16, c, dst[c][at:n], src[c][at:n])
			}
		}
	}
}

// InitKeyStream runs Init, then writes the first n keystream words of
// every lane to ks[c*stride:], with the kernels k, in one kernel call and
// without the tail handling of KeyStream: it generates whole blocks, so it
// writes ⌈n/BlockWords⌉·BlockWords words per lane and stride must be at
// least that. It consumes the state: the lanes must be loaded again before
// the next use.
//
// If prefetch is not nil, the kernel asks for the cache lines of
// prefetch[c] (up to 4 bytes per word generated) while its rounds run:
// the bytes a MAC will read with lane c's keystream, which may sit in
// another core's cache. They are only prefetched, never read here.
func (s *State16) InitKeyStream(k Kernels16, ks []uint32, stride, n int, prefetch *[Lanes16][]byte) {
	k.require()
	nb := (n + BlockWords - 1) / BlockWords
	checkKeyStream(ks, stride, nb*BlockWords, Lanes16)
	if nb > 0 {
		pf := prefetchPointers(prefetch, (*byte)(unsafe.Pointer(&ks[0])))
		if k == AESNI16 {
			initKeyStream16AESNI(&s.w, &ks[0], stride, nb, &pf)
		} else {
			initKeyStream16AVX512(&s.w, &ks[0], stride, nb, &pf)
		}
	}
}

// Paired reports whether k has InitKeyStreamPair (GFNI16: its rounds run
// two states' 16 lanes as two interleaved ZMM groups).
func (k Kernels16) Paired() bool { return k == GFNI16 }

// InitKeyStreamPair runs Init on s and on t and writes the first n
// keystream words of every lane of both, in one kernel call: lane c of s
// to ksS[4·c·stride:] as bytes (each word big-endian: the bytes
// XORKeyStream would XOR into a buffer), lane c of t to ksT[c·stride:] as
// words (as InitKeyStream). The two states' rounds run interleaved, so
// that one state's R1/R2 recurrence runs while the other waits on its own.
// Like InitKeyStream it writes whole blocks (stride ≥ ⌈n/BlockWords⌉·
// BlockWords) and consumes both states. k must be Paired. If prefetch is
// not nil, the kernel prefetches the cache lines of prefetch[c] while its
// rounds run, as InitKeyStream does (an open's messages).
func (s *State16) InitKeyStreamPair(k Kernels16, t *State16, ksS []byte, ksT []uint32, stride, n int, prefetch *[Lanes16][]byte) {
	k.require()
	if !k.Paired() {
		panic("zuc: " + k.String() + " has no paired keystream kernel")
	}
	nb := (n + BlockWords - 1) / BlockWords
	checkKeyStream(ksT, stride, nb*BlockWords, Lanes16)
	if nb > 0 && len(ksS) < 4*((Lanes16-1)*stride+nb*BlockWords) {
		panic("zuc: keystream buffer too short")
	}
	if nb > 0 {
		pf := prefetchPointers(prefetch, &ksS[0])
		initKeyStreamPair16AVX512(&s.w, &t.w, &ksS[0], &ksT[0], stride, nb, &pf)
	}
}

// InitXORKeyStreamPair is InitXORKeyStream(k, dst, src) on s and the
// InitKeyStream(k, ksT, stride, n, nil) of t in one kernel call (the two
// states' rounds interleaved, as in InitKeyStreamPair): the keystream of
// every lane of t is generated for n words, or for the longest of s's
// lengths if that takes more blocks, whole blocks as InitKeyStream, so
// stride must cover both. Both states are consumed. k must be Paired.
func (s *State16) InitXORKeyStreamPair(k Kernels16, dst, src *[Lanes16][]byte, t *State16, ksT []uint32, stride, n int) {
	k.require()
	if !k.Paired() {
		panic("zuc: " + k.String() + " has no paired keystream kernel")
	}
	dp, sp, lens, longest, shortest := xorLanes16(dst, src)
	nb := max((longest+BlockBytes-1)/BlockBytes, (n+BlockWords-1)/BlockWords)
	checkKeyStream(ksT, stride, nb*BlockWords, Lanes16)
	if nb > 0 {
		full := 0
		if longest > 0 {
			full = shortest / BlockBytes * BlockBytes
		}
		sp = prefetchable(sp, (*byte)(unsafe.Pointer(&ksT[0])))
		initXORKeyStreamPair16AVX512(&s.w, &t.w, &dp, &sp, &lens, full, &ksT[0], stride, nb)
	}
}

// xorLanes16 returns the lane pointers of an XOR call (lanePointer: nil
// for lanes without bytes), their lengths, and the longest and shortest
// length among the lanes in use (shortest is the largest int if none).
func xorLanes16(dst, src *[Lanes16][]byte) (dp, sp [Lanes16]*byte, lens [Lanes16]int, longest, shortest int) {
	shortest = int(^uint(0) >> 1)
	for c := range dst {
		dp[c], sp[c] = lanePointer(dst[c], src[c], len(dst[c]))
		if dp[c] != nil {
			lens[c] = len(dst[c])
			longest, shortest = max(longest, lens[c]), min(shortest, lens[c])
		}
	}
	return dp, sp, lens, longest, shortest
}

// prefetchPointers returns the first byte of every non-empty prefetch[c]
// (none if prefetch is nil), made prefetchable with fallback.
func prefetchPointers(prefetch *[Lanes16][]byte, fallback *byte) [Lanes16]*byte {
	var pf [Lanes16]*byte
	if prefetch != nil {
		for c, b := range prefetch {
			if len(b) > 0 {
				pf[c] = &b[0]
			}
		}
	}
	return prefetchable(pf, fallback)
}

// prefetchable returns p with its nil lanes, which a kernel prefetches
// from but never reads, pointed at valid memory: the first non-nil lane,
// else fallback. (A prefetch never faults, but one near address 0 costs a
// page walk for nothing.) p is passed and returned by value so that its
// pointers stay on the caller's stack.
func prefetchable(p [Lanes16]*byte, fallback *byte) [Lanes16]*byte {
	for _, q := range p {
		if q != nil {
			fallback = q
			break
		}
	}
	for c, q := range p {
		if q == nil {
			p[c] = fallback
		}
	}
	return p
}

// InitXORKeyStream runs Init, then sets dst[c] = src[c] ⊕ keystream of
// lane c (words big-endian) for every lane with dst[c] != nil, each lane
// for its own length len(dst[c]), with the kernels k; src[c] must be at
// least as long, and must overlap dst[c] entirely or not at all. All lanes
// run in one kernel call up to the longest length; no byte past a lane's
// length is read or written. It consumes the state: the lanes must be
// loaded again before the next use.
func (s *State16) InitXORKeyStream(k Kernels16, dst, src *[Lanes16][]byte) {
	k.require()
	dp, sp, lens, longest, shortest := xorLanes16(dst, src)
	if nb := (longest + BlockBytes - 1) / BlockBytes; nb > 0 {
		full := shortest / BlockBytes * BlockBytes
		sp = prefetchable(sp, nil)
		if k == AESNI16 {
			initXORKeyStream16AESNI(&s.w, &dp, &sp, &lens, full, nb)
		} else {
			initXORKeyStream16AVX512(&s.w, &dp, &sp, &lens, full, nb)
		}
	}
}

// LoadZUC128 loads a ZUC-128 key and IV into lane (GB/T 33133.1 §3.5.1).
func (s *State8) LoadZUC128(lane int, key, iv *[16]byte) { loadZUC128(s.w[:], Lanes8, lane, key, iv) }

// LoadZUC256 loads a ZUC-256 key, 23-byte packed IV and constant set into
// lane (ZUC-256, 2018, §2.2).
func (s *State8) LoadZUC256(lane int, key *[32]byte, iv *[23]byte, c ZUC256Constants) {
	loadZUC256(s.w[:], Lanes8, lane, key, iv, c)
}

// Lane returns a copy of lane's current state.
func (s *State8) Lane(lane int) Lane { return getLane(s.w[:], Lanes8, lane) }

// SetLane replaces lane's state with l.
func (s *State8) SetLane(lane int, l *Lane) { setLane(s.w[:], Lanes8, lane, l) }

// Init runs the 32 initialisation rounds and the discarded first work round
// (GB/T 33133.1 §3.5) on all 8 lanes, with the kernels k.
func (s *State8) Init(k Kernels8) {
	k.require()
	if k == AESNI8 {
		initRounds8AESNI(&s.w)
		return
	}
	initRounds8GFNI(&s.w)
}

// KeyStream generates the next n keystream words of every lane with the
// kernels k: lane c's words go to ks[c*stride : c*stride+n]. stride must be
// at least n.
func (s *State8) KeyStream(k Kernels8, ks []uint32, stride, n int) {
	k.require()
	checkKeyStream(ks, stride, n, Lanes8)
	if nb := n / BlockWords; nb > 0 {
		if k == AESNI8 {
			keyStream8AESNI(&s.w, &ks[0], stride, nb)
		} else {
			keyStream8GFNI(&s.w, &ks[0], stride, nb)
		}
	}
	if r := n % BlockWords; r > 0 {
		s.rows(k, r)
		tailWords(s.w[:], Lanes8, ks, stride, n-r, r)
	}
}

// XORKeyStream sets dst[c][:n] = src[c][:n] ⊕ keystream of lane c for every
// lane with dst[c] != nil (keystream words big-endian), with the kernels k.
// It consumes ⌈n/4⌉ words per lane. dst[c] and src[c] must overlap entirely
// or not at all.
func (s *State8) XORKeyStream(k Kernels8, dst, src *[Lanes8][]byte, n int) {
	k.require()
	var dp, sp [Lanes8]*byte
	for c := range dst {
		dp[c], sp[c] = lanePointer(dst[c], src[c], n)
	}
	if nb := n / BlockBytes; nb > 0 {
		if k == AESNI8 {
			xorKeyStream8AESNI(&s.w, &dp, &sp, nb)
		} else {
			xorKeyStream8GFNI(&s.w, &dp, &sp, nb)
		}
	}
	if r := n % BlockBytes; r > 0 {
		s.rows(k, (r+3)/4)
		at := n - r
		for c := range dst {
			if dst[c] != nil {
				tailXOR(s.w[:], Lanes8, c, dst[c][at:n], src[c][at:n])
			}
		}
	}
}

// rows runs n (1..16) single rounds into the scratch rows.
func (s *State8) rows(k Kernels8, n int) {
	if k == AESNI8 {
		rows8AESNI(&s.w, n)
		return
	}
	rows8GFNI(&s.w, n)
}
