//go:build amd64 && gc && !purego

package zuc

import (
	"encoding/binary"
	"math/bits"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	kzuc "github.com/gmtun/gmtun/kernels/zuc"
)

// Dispatch flags of the batch primitives, set once from the CPU features
// (kernels/cpu through kernels/zuc) and switched only by tests through
// ciphers/internal/impl. Every tier computes tags with the carry-less
// multiply MAC kernels (PCLMULQDQ, or VPCLMULQDQ on ZMM where the CPU has
// it, chosen inside kernels/zuc), so all require them.
var (
	// useX16: 16-lane keystream kernels (AVX-512 F/BW/VL/DQ, VBMI2, GFNI).
	useX16 = kzuc.X16Supported() && kzuc.MACSupported()
	// useX8: 8-lane keystream kernels with GFNI (AVX2, BMI2, VEX GFNI),
	// two kernel states per 16-packet call.
	useX8 = kzuc.GFNI8.Supported() && kzuc.MACSupported()
	// useX8AESNI: the 8-lane kernels with S1 through AESENCLAST (AVX2 +
	// AES-NI), for CPUs without GFNI: the same lane state and call shapes
	// as useX8.
	useX8AESNI = kzuc.AESNI8.Supported() && kzuc.MACSupported()
)

// lanesOn reports whether any lane tier is enabled.
func lanesOn() bool { return useX16 || useX8 || useX8AESNI }

// kernels8 returns the 8-lane kernels of the enabled tiers: those with S1
// through AESENCLAST when they are the only lane tier enabled (on a CPU
// with GFNI only tests select them), else those with GFNI.
func kernels8() kzuc.Kernels8 {
	if useX8AESNI && !useX16 && !useX8 {
		return kzuc.AESNI8
	}
	return kzuc.GFNI8
}

// x8Supported reports whether the CPU runs one of the 8-lane kernels.
func x8Supported() bool { return kzuc.GFNI8.Supported() || kzuc.AESNI8.Supported() }

func init() {
	impl.Register("zuc", "AVX-512+GFNI", &useX16)
	impl.Register("zuc", "AVX2+GFNI", &useX8)
	impl.Register("zuc", "AVX2+AES-NI", &useX8AESNI)
}

// Scratch is the working memory of the batch primitives on the lane
// kernels: the lane states and the keystream buffer of MTU-sized MAC
// calls (about 28 KiB on amd64, nothing where there are no kernels). A
// caller that runs several primitive calls in a row, such as the lane
// groups of one batch, declares one Scratch on its stack and calls the
// primitives as its methods, so that the memory is zeroed once rather
// than per call. A nil *Scratch is valid: each call then takes fresh
// memory on its stack, only as much as it uses (a lone packet none, up to
// Lanes/4 packets of encrypt-then-MAC a third), which is what the
// package-level functions do. Every call overwrites what it reads of a
// Scratch, so nothing carries over between calls; a Scratch is not safe
// for concurrent use.
type Scratch struct{ s laneScratch }

// laneScratch is the working memory of the lane paths (Scratch): the
// kernel states and the keystream buffer of MTU-sized MAC calls.
type laneScratch struct {
	k  kstate
	ks [Lanes * mtuLaneWords]uint32
}

// lanes returns the lane scratch of s, nil if s is nil: the lane paths
// then take fresh memory on their stack, only as much as they use.
func (s *Scratch) lanes() *laneScratch {
	if s == nil {
		return nil
	}
	return &s.s
}

// state returns the kernel state of s, nil if s is nil.
func (s *Scratch) state() *kstate {
	if s == nil {
		return nil
	}
	return &s.s.k
}

// XORKeyStreams128 is Scratch.XORKeyStreams128 on fresh memory.
func XORKeyStreams128(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, bufs *[Lanes][]byte, n int) {
	(*Scratch)(nil).XORKeyStreams128(key, ivs, bufs, n)
}

// XORKeyStreams256 is Scratch.XORKeyStreams256 on fresh memory.
func XORKeyStreams256(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bufs *[Lanes][]byte, n int) {
	(*Scratch)(nil).XORKeyStreams256(key, ivs, bufs, n)
}

// EIA3Tags is Scratch.EIA3Tags on fresh memory.
func EIA3Tags(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, msgs *[Lanes][]byte, tags *[Lanes]uint32, n int) {
	(*Scratch)(nil).EIA3Tags(key, ivs, msgs, tags, n)
}

// MAC256Tags is Scratch.MAC256Tags on fresh memory.
func MAC256Tags(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, msgs *[Lanes][]byte, tags *[Lanes][MAC256TagSize]byte, n int) {
	(*Scratch)(nil).MAC256Tags(key, ivs, msgs, tags, n)
}

// EncryptThenMAC128 is Scratch.EncryptThenMAC128 on fresh memory.
func EncryptThenMAC128(encKey, macKey *[KeySize128]byte, eea, eia *[Lanes][IVSize128]byte, bodies, msgs *[Lanes][]byte, tags *[Lanes]uint32, n int) {
	(*Scratch)(nil).EncryptThenMAC128(encKey, macKey, eea, eia, bodies, msgs, tags, n)
}

// EncryptThenMAC256 is Scratch.EncryptThenMAC256 on fresh memory.
func EncryptThenMAC256(encKey, macKey *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bodies, msgs *[Lanes][]byte, tags *[Lanes][MAC256TagSize]byte, n int) {
	(*Scratch)(nil).EncryptThenMAC256(encKey, macKey, ivs, bodies, msgs, tags, n)
}

// etm8Fits reports whether etm8 takes n packets on this CPU.
func etm8Fits(n int) bool {
	return lanesOn() && n >= 1 && n <= etm8Max && x8Supported()
}

// etm8Scratch is the memory of an etm8 call without a Scratch, for
// MTU-sized packets; etm8LongScratch for packets up to about 2 KiB.
type etm8Scratch struct {
	st kzuc.State8
	ks [kzuc.Lanes8 * mtuLaneWords]uint32
}

type etm8LongScratch struct {
	st kzuc.State8
	ks [kzuc.Lanes8 * maxLaneWords]uint32
}

// etm8Words returns the keystream words per lane an etm8 or open8 call
// of these packets needs (etm8Stream).
func etm8Words(lk *laneKeys, bodies, msgs *[Lanes][]byte, n int) (words int) {
	for j := range n {
		words = max(words, (len(bodies[j])+3)/4)
		if msgs[j] != nil {
			words = max(words, lk.macWords(len(msgs[j])))
		}
	}
	return words
}

// etm8With runs etm8 on the memory of sc, or on fresh memory (an
// etm8Scratch, a third of a laneScratch, or for packets over the MTU an
// etm8LongScratch) if sc is nil.
func etm8With(sc *laneScratch, lk *laneKeys, bodies, msgs *[Lanes][]byte, n int, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte) bool {
	w := etm8Words(lk, bodies, msgs, n)
	if w == 0 {
		return false
	}
	if sc != nil {
		if w <= len(sc.ks)/kzuc.Lanes8 {
			return etm8(lk, bodies, msgs, n, t128, t256, &sc.k.s8[0], sc.ks[:])
		}
		etm8Chunks(lk, bodies, msgs, n, t128, t256, &sc.k.s8[0], sc.ks[:kzuc.Lanes8*maxLaneWords])
		return true
	}
	if w <= mtuLaneWords {
		e := new(etm8Scratch)
		return etm8(lk, bodies, msgs, n, t128, t256, &e.st, e.ks[:])
	}
	e := new(etm8LongScratch)
	if w <= maxLaneWords {
		return etm8(lk, bodies, msgs, n, t128, t256, &e.st, e.ks[:])
	}
	etm8Chunks(lk, bodies, msgs, n, t128, t256, &e.st, e.ks[:])
	return true
}

// etm8Chunks is etm8 for packets whose keystream exceeds maxLaneWords
// words: the same lanes of one 8-lane state run chunk by chunk through ks
// (maxLaneWords words per lane, slid as in macChunks). In each chunk the
// bodies are encrypted first, then the MACs take the chunk's message
// words; a MAC finishes only in a chunk whose message rest fits
// chunkBytes, so every message byte it reads is already ciphertext (a
// body starts at or after its message's start).
func etm8Chunks(lk *laneKeys, bodies, msgs *[Lanes][]byte, n int, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte, st *kzuc.State8, ks []uint32) {
	const stride = maxLaneWords
	const half = Lanes / 2
	var encOn, macOn uint32
	for j := range n {
		if len(bodies[j]) > 0 {
			encOn |= 1 << j
		}
		if msgs[j] != nil {
			macOn |= 1 << j
		}
		if lk.iv128 != nil {
			st.LoadZUC128(j, lk.k128[0], &lk.iv128[j])
			st.LoadZUC128(etm8Max+j, lk.k128[1], &lk.iv128[half+j])
		} else {
			st.LoadZUC256(j, lk.k256[0], &lk.iv256[j], lk.d[0])
			st.LoadZUC256(etm8Max+j, lk.k256[1], &lk.iv256[half+j], lk.d[1])
		}
	}
	st.Init(kernels8())
	st.KeyStream(kernels8(), ks, stride, stride)
	words, have := etm8Words(lk, bodies, msgs, n), stride
	limit := chunkWords + lk.macWords(0) // a MAC ends only when its rest fits one chunk
	var acc [etm8Max][4]uint32
	for at := 0; ; at += chunkBytes {
		for a := encOn; a != 0; a &= a - 1 {
			j := bits.TrailingZeros32(a)
			b := bodies[j][at:]
			if len(b) <= chunkBytes {
				encOn &^= 1 << j
			} else {
				b = b[:chunkBytes]
			}
			xorWords(b, ks[j*stride:])
		}
		for a := macOn; a != 0; a &= a - 1 {
			j := bits.TrailingZeros32(a)
			lane := ks[(etm8Max+j)*stride : (etm8Max+j)*stride+limit]
			if macChunk(lk, msgs[j][at:], lane, at == 0, t128 != nil, &acc[j]) {
				putTag(&acc[j], j, t128, t256)
				macOn &^= 1 << j
			}
		}
		if encOn|macOn == 0 {
			return
		}
		for c := range kzuc.Lanes8 {
			lane := ks[c*stride : (c+1)*stride]
			copy(lane[:carryWords], lane[chunkWords:])
		}
		// Only the words some lane still needs (the words past them are
		// never read).
		more := max(0, min(chunkWords, words-have))
		st.KeyStream(kernels8(), ks[carryWords:], stride, more)
		have += chunkWords
	}
}

// open8With runs open8 on the memory of sc, or on fresh memory if sc is
// nil (as etm8With).
func open8With(sc *laneScratch, lk *laneKeys, bodies, msgs *[Lanes][]byte, n int, want128 *[Lanes]uint32, want256 *[Lanes][MAC256TagSize]byte) (uint32, bool) {
	if sc != nil {
		return open8(lk, bodies, msgs, n, want128, want256, &sc.k.s8[0], sc.ks[:])
	}
	switch w := etm8Words(lk, bodies, msgs, n); {
	case w <= mtuLaneWords:
		e := new(etm8Scratch)
		return open8(lk, bodies, msgs, n, want128, want256, &e.st, e.ks[:])
	case w <= maxLaneWords:
		e := new(etm8LongScratch)
		return open8(lk, bodies, msgs, n, want128, want256, &e.st, e.ks[:])
	}
	return 0, false
}

// VerifyThenDecrypt128 is VerifyThenDecrypt128Generic on the kernels when
// the CPU has them. Up to etm8Max packets run in one 8-lane call, their
// EEA3 lanes next to their EIA3 lanes (see open8): the keystream of a
// body is generated before its tag is checked but kept in the scratch
// memory, and XORed into the body only once the tag has verified. More
// packets, or packets over about 2 KiB, take one MAC call, then one
// keystream call over the bodies that verified, all on the lane kernels.
func (s *Scratch) VerifyThenDecrypt128(encKey, macKey *[KeySize128]byte, eea, eia *[Lanes][IVSize128]byte, bodies, msgs *[Lanes][]byte, want *[Lanes]uint32, n int) uint32 {
	if etm8Fits(n) {
		var ivs [Lanes][IVSize128]byte
		copy(ivs[:n], eea[:n])
		copy(ivs[Lanes/2:Lanes/2+n], eia[:n])
		lk := laneKeys{k128: [2]*[KeySize128]byte{encKey, macKey}, iv128: &ivs}
		if ok, done := open8With(s.lanes(), &lk, bodies, msgs, n, want, nil); done {
			return ok
		}
	}
	if !lanesOn() {
		return VerifyThenDecrypt128Generic(encKey, macKey, eea, eia, bodies, msgs, want, n)
	}
	var tags [Lanes]uint32
	s.EIA3Tags(macKey, eia, msgs, &tags, n)
	ok := verify128(msgs, &tags, want, n)
	verified := verifiedBodies(bodies, ok, n)
	s.XORKeyStreams128(encKey, eea, &verified, n)
	return ok
}

// VerifyThenDecrypt256 is VerifyThenDecrypt256Generic on the kernels when
// the CPU has them (see VerifyThenDecrypt128).
func (s *Scratch) VerifyThenDecrypt256(encKey, macKey *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bodies, msgs *[Lanes][]byte, want *[Lanes][MAC256TagSize]byte, n int) uint32 {
	if etm8Fits(n) {
		var both [Lanes][IVSize256]byte
		copy(both[:n], ivs[:n])
		copy(both[Lanes/2:Lanes/2+n], ivs[:n])
		lk := laneKeys{
			k256: [2]*[KeySize256]byte{encKey, macKey}, iv256: &both,
			d: [2]kzuc.ZUC256Constants{kzuc.ZUC256Keystream, kzuc.ZUC256MAC128},
		}
		if ok, done := open8With(s.lanes(), &lk, bodies, msgs, n, nil, want); done {
			return ok
		}
	}
	if !lanesOn() {
		return VerifyThenDecrypt256Generic(encKey, macKey, ivs, bodies, msgs, want, n)
	}
	var tags [Lanes][MAC256TagSize]byte
	s.MAC256Tags(macKey, ivs, msgs, &tags, n)
	ok := verify256(msgs, &tags, want, n)
	verified := verifiedBodies(bodies, ok, n)
	s.XORKeyStreams256(encKey, ivs, &verified, n)
	return ok
}

// XORKeyStreams128 is XORKeyStreams128Generic on the multi-lane kernels
// when the CPU has them (see xorLanes); the output is identical.
func (s *Scratch) XORKeyStreams128(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, bufs *[Lanes][]byte, n int) {
	if lanesOn() {
		lk := laneKeys{k128: [2]*[KeySize128]byte{key, key}, iv128: ivs}
		xorLanes(useX16, &lk, bufs, n, s.state())
		return
	}
	XORKeyStreams128Generic(key, ivs, bufs, n)
}

// EIA3Tags is EIA3TagsGeneric with the keystream of all lanes from one
// multi-lane kernel call and the tags from the carry-less multiply MAC
// kernel, when the CPU has them (see macLanes).
func (s *Scratch) EIA3Tags(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, msgs *[Lanes][]byte, tags *[Lanes]uint32, n int) {
	if lanesOn() {
		lk := laneKeys{k128: [2]*[KeySize128]byte{key, key}, iv128: ivs}
		macLanes(useX16, &lk, msgs, n, tags, nil, s.lanes())
		return
	}
	EIA3TagsGeneric(key, ivs, msgs, tags, n)
}

// XORKeyStreams256 is XORKeyStreams256Generic on the multi-lane kernels
// when the CPU has them (see xorLanes).
func (s *Scratch) XORKeyStreams256(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bufs *[Lanes][]byte, n int) {
	if lanesOn() {
		lk := laneKeys{k256: [2]*[KeySize256]byte{key, key}, iv256: ivs}
		xorLanes(useX16, &lk, bufs, n, s.state())
		return
	}
	XORKeyStreams256Generic(key, ivs, bufs, n)
}

// MAC256Tags is MAC256TagsGeneric on the multi-lane and MAC kernels when
// the CPU has them (see macLanes).
func (s *Scratch) MAC256Tags(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, msgs *[Lanes][]byte, tags *[Lanes][MAC256TagSize]byte, n int) {
	if lanesOn() {
		lk := laneKeys{
			k256: [2]*[KeySize256]byte{key, key}, iv256: ivs,
			d: [2]kzuc.ZUC256Constants{kzuc.ZUC256MAC128, kzuc.ZUC256MAC128},
		}
		macLanes(useX16, &lk, msgs, n, nil, tags, s.lanes())
		return
	}
	MAC256TagsGeneric(key, ivs, msgs, tags, n)
}

// EncryptThenMAC128 is EncryptThenMAC128Generic on the kernels when the
// CPU has them. Up to etm8Max packets run in one 8-lane call, their EEA3
// lanes next to their EIA3 lanes (see etm8; over about 2 KiB chunk by
// chunk, etm8Chunks), up to Lanes/2 packets on the 16-lane kernels in one
// 16-lane call (etmLanes); more packets take one keystream call and one
// MAC call, all on the lane kernels.
func (s *Scratch) EncryptThenMAC128(encKey, macKey *[KeySize128]byte, eea, eia *[Lanes][IVSize128]byte, bodies, msgs *[Lanes][]byte, tags *[Lanes]uint32, n int) {
	etm := etm8Fits(n)
	if etm || useX16 && n >= 2 && n <= Lanes/2 {
		var ivs [Lanes][IVSize128]byte
		copy(ivs[:n], eea[:n])
		copy(ivs[Lanes/2:Lanes/2+n], eia[:n])
		lk := laneKeys{k128: [2]*[KeySize128]byte{encKey, macKey}, iv128: &ivs}
		if !etm {
			etmLanes(&lk, bodies, msgs, n, tags, nil, s.lanes())
			return
		}
		if etm8With(s.lanes(), &lk, bodies, msgs, n, tags, nil) {
			return
		}
	}
	switch {
	case lanesOn():
		s.XORKeyStreams128(encKey, eea, bodies, n)
		s.EIA3Tags(macKey, eia, msgs, tags, n)
	default:
		EncryptThenMAC128Generic(encKey, macKey, eea, eia, bodies, msgs, tags, n)
	}
}

// EncryptThenMAC256 is EncryptThenMAC256Generic on the kernels when the
// CPU has them (see EncryptThenMAC128).
func (s *Scratch) EncryptThenMAC256(encKey, macKey *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bodies, msgs *[Lanes][]byte, tags *[Lanes][MAC256TagSize]byte, n int) {
	etm := etm8Fits(n)
	if etm || useX16 && n >= 2 && n <= Lanes/2 {
		var both [Lanes][IVSize256]byte
		copy(both[:n], ivs[:n])
		copy(both[Lanes/2:Lanes/2+n], ivs[:n])
		lk := laneKeys{
			k256: [2]*[KeySize256]byte{encKey, macKey}, iv256: &both,
			d: [2]kzuc.ZUC256Constants{kzuc.ZUC256Keystream, kzuc.ZUC256MAC128},
		}
		if !etm {
			etmLanes(&lk, bodies, msgs, n, nil, tags, s.lanes())
			return
		}
		if etm8With(s.lanes(), &lk, bodies, msgs, n, nil, tags) {
			return
		}
	}
	switch {
	case lanesOn():
		s.XORKeyStreams256(encKey, ivs, bodies, n)
		s.MAC256Tags(macKey, ivs, msgs, tags, n)
	default:
		EncryptThenMAC256Generic(encKey, macKey, ivs, bodies, msgs, tags, n)
	}
}

// maxLaneWords bounds the keystream words one lane of a MAC call may need
// (messages up to about 2 KiB: MTU-sized packets); longer messages are
// authenticated in chunks of it (macChunks).
const maxLaneWords = 512

// laneKeys are the keys and IVs of one call. Lanes 0–7 use key index 0
// and lanes 8–15 index 1 (the same key, except in a combined
// encrypt-then-MAC call). The call is ZUC-128 if iv128 is set, otherwise
// ZUC-256 with constant sets d.
type laneKeys struct {
	k128  [2]*[KeySize128]byte
	iv128 *[Lanes][IVSize128]byte
	k256  [2]*[KeySize256]byte
	iv256 *[Lanes][IVSize256]byte
	d     [2]kzuc.ZUC256Constants
}

// macWords returns the keystream words the MAC of an n-byte message
// needs: 128-EIA3, or the 128-bit ZUC-256 MAC.
func (lk *laneKeys) macWords(n int) int {
	if lk.iv128 != nil {
		return kzuc.EIA3KeyStreamWords(8 * n)
	}
	return kzuc.MAC256KeyStreamWords(8*n, MAC256TagSize)
}

// kstate is the lane state of one call: 16 lanes in one x16 kernel state
// (wide) or in two x8 states (lanes 0–7 and 8–15; a half without active
// lanes is not run). Every method takes the mask of active lanes; idle
// lanes compute on stale data harmlessly.
type kstate struct {
	wide bool
	s16  kzuc.State16
	s8   [2]kzuc.State8
}

// load loads lane c with its key and IV (GB/T 33133.1-2016 §6.1; ZUC-256
// 2018 §3.1).
func (k *kstate) load(c int, lk *laneKeys) {
	h := c / 8
	switch {
	case k.wide && lk.iv128 != nil:
		k.s16.LoadZUC128(c, lk.k128[h], &lk.iv128[c])
	case k.wide:
		k.s16.LoadZUC256(c, lk.k256[h], &lk.iv256[c], lk.d[h])
	case lk.iv128 != nil:
		k.s8[h].LoadZUC128(c%8, lk.k128[h], &lk.iv128[c])
	default:
		k.s8[h].LoadZUC256(c%8, lk.k256[h], &lk.iv256[c], lk.d[h])
	}
}

// loadActive loads the active lanes; the 16-lane state loads all lanes at
// once (idle lanes get their slot's IV, harmlessly).
func (k *kstate) loadActive(active uint32, lk *laneKeys) {
	if k.wide {
		if lk.iv128 != nil {
			k.s16.LoadZUC128Lanes(lk.k128[0], lk.k128[1], lk.iv128)
		} else {
			k.s16.LoadZUC256Lanes(lk.k256[0], lk.k256[1], lk.iv256, lk.d[0], lk.d[1])
		}
		return
	}
	for a := active; a != 0; a &= a - 1 {
		k.load(bits.TrailingZeros32(a), lk)
	}
}

// init runs the initialisation rounds of the active lanes' kernel states.
func (k *kstate) init(active uint32) {
	if k.wide {
		k.s16.Init()
		return
	}
	if active&0xff != 0 {
		k.s8[0].Init(kernels8())
	}
	if active>>8 != 0 {
		k.s8[1].Init(kernels8())
	}
}

// xor XORs m bytes of keystream (m a multiple of 4) into bufs[c][at:] of
// every active lane c; every lane of a run half advances by m/4 words.
func (k *kstate) xor(bufs *[Lanes][]byte, active uint32, at, m int) {
	if k.wide {
		var d [kzuc.Lanes16][]byte
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			d[c] = bufs[c][at : at+m]
		}
		k.s16.XORKeyStream(&d, &d, m)
		return
	}
	for h := range k.s8 {
		half := active >> (8 * h) & 0xff
		if half == 0 {
			continue
		}
		var d [kzuc.Lanes8][]byte
		for a := half; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			d[c] = bufs[8*h+c][at : at+m]
		}
		k.s8[h].XORKeyStream(kernels8(), &d, &d, m)
	}
}

// keyStream writes words[h] keystream words of every lane of half h
// (lanes 8h..8h+7) to ks[c·stride:]; the wide state runs the larger count
// on all 16 lanes.
func (k *kstate) keyStream(ks []uint32, stride int, words *[2]int) {
	if k.wide {
		k.s16.KeyStream(ks, stride, max(words[0], words[1]))
		return
	}
	for h := range k.s8 {
		if words[h] > 0 {
			k.s8[h].KeyStream(kernels8(), ks[8*h*stride:], stride, words[h])
		}
	}
}

// initKeyStream initialises the active lanes and writes words[h]
// keystream words of every lane of half h to ks[c·stride:], consuming the
// lane state. The wide state runs the larger count on all 16 lanes in one
// kernel call that writes whole 16-word blocks: stride must be a multiple
// of kzuc.BlockWords (see roundWords) when k.wide.
func (k *kstate) initKeyStream(ks []uint32, stride int, active uint32, words *[2]int) {
	if k.wide {
		k.s16.InitKeyStream(ks, stride, max(words[0], words[1]))
		return
	}
	k.init(active)
	k.keyStream(ks, stride, words)
}

// roundWords rounds a keystream word count up to whole kernel blocks.
func roundWords(n int) int {
	return (n + kzuc.BlockWords - 1) / kzuc.BlockWords * kzuc.BlockWords
}

// narrow reports whether a call on the active lanes should use the 16-lane
// kernels, given that the caller's tier is wide: not when all active lanes
// fit one 8-lane state, whose call costs about 2/3 of a 16-lane call for
// the same length here (Zen 5; the per-round dependency chain, not the
// width, bounds both).
func narrow(wide bool, active uint32) bool {
	return wide && (active>>8 != 0 || !x8Supported())
}

// xorLanes is the lane path of the keystream XOR: bufs[c] ⊕= keystream
// of lane c, in place, for the lanes c < n with a non-empty buffer. Every
// packet, a lone one included, runs on the lane kernels (one lane filled
// is fine): the portable core is never used here, so the table-free,
// branch-free kernels carry every keystream word. On the 16-lane kernels
// one call initialises all lanes and XORs each up to its own length. On
// the 8-lane kernels all active lanes run together up to the shortest
// remaining whole-word length, the finished lanes drop out and the rest
// continue (the equal lengths of TSO segments take one step); a word in
// which a lane ends is one KeyStream word for every running lane, XORed in
// Go.
func xorLanes(wide bool, lk *laneKeys, bufs *[Lanes][]byte, n int, k *kstate) {
	var active uint32
	for i := range bufs[:n] {
		if len(bufs[i]) > 0 {
			active |= 1 << i
		}
	}
	if active == 0 {
		return
	}
	if k == nil {
		k = new(kstate)
	}
	k.wide = narrow(wide, active)
	k.loadActive(active, lk)
	if k.wide {
		// One kernel call: initialisation, then every lane up to its own
		// length (masked stores for the last partial block).
		var d [kzuc.Lanes16][]byte
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			d[c] = bufs[c]
		}
		k.s16.InitXORKeyStream(&d, &d)
		return
	}
	k.init(active)
	if words, mixed := mixedLengths(bufs, active); mixed && words <= maxLaneWords {
		// Many different lengths: one keystream call up to the longest
		// lane, then the XOR in Go (≈0.1 ns/B), instead of a kernel call
		// and a partial block per distinct length.
		var ksBuf [Lanes * maxLaneWords]uint32
		var halves [2]int // an 8-lane state without active lanes is not run
		if active&0xff != 0 {
			halves[0] = words
		}
		if active>>8 != 0 {
			halves[1] = words
		}
		k.keyStream(ksBuf[:], words, &halves)
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			xorWords(bufs[c], ksBuf[c*words:(c+1)*words])
		}
		return
	}
	for at := 0; ; {
		m := int(^uint(0) >> 1)
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			rem := len(bufs[c]) - at
			if rem <= 0 {
				active &^= 1 << c
				continue
			}
			m = min(m, rem)
		}
		if active == 0 {
			return
		}
		if m >= 4 {
			k.xor(bufs, active, at, m&^3)
			at += m &^ 3
			continue
		}
		// A lane ends within the next word: one keystream word for every
		// lane of the running halves, XORed in Go, keeps the lanes in step.
		var w [Lanes]uint32
		var halves [2]int
		if active&0xff != 0 {
			halves[0] = 1
		}
		if active>>8 != 0 {
			halves[1] = 1
		}
		k.keyStream(w[:], 1, &halves)
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			b := bufs[c][at:]
			xorWord(b[:min(4, len(b))], w[c])
		}
		at += 4
	}
}

// mixedLengths returns the keystream words the longest active lane needs
// and whether the active lanes have more than two distinct lengths (equal
// lengths, or a TSO burst and its shorter last segment, take the staged
// XOR kernel path).
func mixedLengths(bufs *[Lanes][]byte, active uint32) (words int, mixed bool) {
	l0, l1 := -1, -1
	for a := active; a != 0; a &= a - 1 {
		l := len(bufs[bits.TrailingZeros32(a)])
		words = max(words, (l+3)/4)
		switch {
		case l == l0 || l == l1:
		case l0 < 0:
			l0 = l
		case l1 < 0:
			l1 = l
		default:
			mixed = true
		}
	}
	return words, mixed
}

// xorWord XORs the first len(b) ≤ 4 bytes of the big-endian keystream
// word w into b.
func xorWord(b []byte, w uint32) {
	for i := range b {
		b[i] ^= byte(w >> (24 - 8*uint(i)))
	}
}

// xorWords XORs the keystream words ks, big-endian, into b; ks holds at
// least ⌈len(b)/4⌉ words.
func xorWords(b []byte, ks []uint32) {
	for len(b) >= 16 && len(ks) >= 4 {
		x := binary.BigEndian.Uint64(b) ^ (uint64(ks[0])<<32 | uint64(ks[1]))
		y := binary.BigEndian.Uint64(b[8:]) ^ (uint64(ks[2])<<32 | uint64(ks[3]))
		binary.BigEndian.PutUint64(b, x)
		binary.BigEndian.PutUint64(b[8:], y)
		b, ks = b[16:], ks[4:]
	}
	for len(b) > 0 {
		xorWord(b[:min(4, len(b))], ks[0])
		b, ks = b[min(4, len(b)):], ks[1:]
	}
}

// macLanes is the lane path of the MACs: one kernel call generates the
// keystream of every active lane (up to the longest lane's need), then the
// carry-less multiply kernel computes each tag from its message and
// keystream words. Exactly one of t128 (128-EIA3) and t256 (ZUC-256
// MAC-128) is non-nil. A lone message runs the same way (one lane
// filled); messages too long for the keystream buffer run in chunks
// (macChunks), still on the lane kernels.
func macLanes(wide bool, lk *laneKeys, msgs *[Lanes][]byte, n int, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte, sc *laneScratch) {
	var active uint32
	var words [2]int // per half of the lanes
	stride := 0
	for c, msg := range msgs[:n] {
		if msg == nil {
			continue
		}
		w := lk.macWords(len(msg))
		active |= 1 << c
		words[c/8] = max(words[c/8], w)
		stride = max(stride, roundWords(w))
	}
	if active == 0 {
		return
	}
	// Lane state and keystream (up to 36 KiB) live on the stack: a Key is
	// shared by many workers, and zeroing them costs a few percent of a
	// call on MTU-sized packets, without the allocations a sync.Pool
	// makes after every GC. MTU-sized messages take a buffer a quarter
	// smaller (less to zero, less L1 to evict).
	if sc == nil {
		sc = new(laneScratch)
	}
	k := &sc.k
	k.wide = narrow(wide, active)
	k.loadActive(active, lk)
	if stride <= mtuLaneWords {
		macTags(k, lk, sc.ks[:], stride, active, &words, msgs, t128, t256)
		return
	}
	var ksBuf [Lanes * maxLaneWords]uint32
	if stride <= maxLaneWords {
		macTags(k, lk, ksBuf[:], stride, active, &words, msgs, t128, t256)
		return
	}
	macChunks(k, lk, ksBuf[:], active, &words, msgs, t128, t256)
}

// Long MACs run in chunks of the keystream buffer: each lane's maxLaneWords
// words hold the keystream words [j·chunkWords, j·chunkWords+maxLaneWords)
// while message chunk j (chunkWords words) is processed. Between chunks the
// last carryWords words of every lane move to the front and the lane
// kernels, whose KeyStream continues the lane state, fill the rest.
const (
	// carryWords is the overlap of consecutive chunks: at least the
	// keystream a MAC reads past its message (2 words for 128-EIA3, 8 for
	// the 128-bit ZUC-256 MAC), rounded to a kernel block so every later
	// fill starts block-aligned.
	carryWords = kzuc.BlockWords
	// chunkWords is the message words per chunk: a multiple of 4, so a
	// chunk is whole 128-bit blocks of the MAC kernels.
	chunkWords = maxLaneWords - carryWords
	// chunkBytes is chunkWords in bytes.
	chunkBytes = 4 * chunkWords
)

// macChunks is macTags for calls whose longest message needs more than
// maxLaneWords keystream words: the loaded active lanes are initialised,
// and each active half of the lanes generates only the keystream its
// longest message needs, chunk by chunk into ks (maxLaneWords words per
// lane); every lane's tag is accumulated chunk by chunk (macChunk) and
// stored once its message ends.
func macChunks(k *kstate, lk *laneKeys, ks []uint32, active uint32, words *[2]int, msgs *[Lanes][]byte, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte) {
	const stride = maxLaneWords
	k.init(active)
	gen := [2]int{min(words[0], stride), min(words[1], stride)}
	k.keyStream(ks, stride, &gen)
	have := stride // keystream words generated per lane still running
	var acc [Lanes][4]uint32
	for at := 0; ; at += chunkBytes {
		first := at == 0
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			lane := ks[c*stride : (c+1)*stride]
			if macChunk(lk, msgs[c][at:], lane, first, t128 != nil, &acc[c]) {
				putTag(&acc[c], c, t128, t256)
				active &^= 1 << c
			}
		}
		if active == 0 {
			return
		}
		// The lanes left need keystream past this chunk's buffer: slide
		// and refill the halves they are in (the invariant: a running
		// lane's buffer is always full, so have = at/4 + stride words).
		for a := active; a != 0; a &= a - 1 {
			c := bits.TrailingZeros32(a)
			lane := ks[c*stride : (c+1)*stride]
			copy(lane[:carryWords], lane[chunkWords:])
		}
		var more [2]int
		for h := range more {
			if active>>(8*h)&0xff != 0 {
				more[h] = min(chunkWords, words[h]-have)
			}
		}
		k.keyStream(ks[carryWords:], stride, &more)
		have += chunkWords
	}
}

// macChunk accumulates into acc the MAC terms of msg, the rest of a
// message from a chunk boundary, from the keystream words ks that start
// at the same message word: the whole rest when its MAC keystream fits ks
// (done), else its first chunkBytes bytes.
// first tells whether msg starts the message. It is constant-time: the
// branches depend only on lengths.
//
// Both MACs XOR one keystream window per set message bit (128-EIA3,
// Document 1 v1.7 §4.4; ZUC-256 MAC, 2018, §3.2), with windows at bit
// offsets relative to the message bit, so the tag of a message split at
// a word boundary is the XOR of the kernel tags of its pieces, each taken
// on the keystream from its own first word, once the terms that belong
// only to the whole message are cancelled: the final-window terms of
// every piece but the last (for 128-EIA3 the window at the piece end and
// z_L, both whole words there), and for the ZUC-256 MAC the initial term
// W_0 of every piece but the first.
func macChunk(lk *laneKeys, msg []byte, ks []uint32, first, eia bool, acc *[4]uint32) (done bool) {
	done = lk.macWords(len(msg)) <= len(ks)
	if !done {
		msg = msg[:chunkBytes]
	}
	w := lk.macWords(len(msg))
	if eia {
		t := kzuc.EIA3Tag(msg, 8*len(msg), ks[:w])
		if !done {
			t ^= ks[chunkWords] ^ ks[chunkWords+1]
		}
		acc[0] ^= t
		return done
	}
	var tag [MAC256TagSize]byte
	kzuc.MAC256Tag(msg, 8*len(msg), ks[:w], tag[:])
	const n = MAC256TagSize / 4 // tag words; the first message window starts at word n
	for q := range n {
		t := binary.BigEndian.Uint32(tag[4*q:])
		if !first {
			t ^= ks[q]
		}
		if !done {
			t ^= ks[n+chunkWords+q]
		}
		acc[q] ^= t
	}
	return done
}

// putTag stores the accumulated tag acc in slot j of t128 or t256.
func putTag(acc *[4]uint32, j int, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte) {
	if t128 != nil {
		t128[j] = acc[0]
		return
	}
	for q := range MAC256TagSize / 4 {
		binary.BigEndian.PutUint32(t256[j][4*q:], acc[q])
	}
}

// mtuLaneWords is the keystream buffer of macLanes for MTU-sized messages
// (in whole 16-word blocks: EIA3 messages up to 1528 bytes, ZUC-256
// MAC-128 messages up to 1504 bytes).
const mtuLaneWords = 384

// macTags generates the MAC keystream of the loaded active lanes into ks
// (stride words per lane) and computes their tags.
func macTags(k *kstate, lk *laneKeys, ks []uint32, stride int, active uint32, words *[2]int, msgs *[Lanes][]byte, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte) {
	k.initKeyStream(ks, stride, active, words)
	var m [Lanes][]byte
	for a := active; a != 0; a &= a - 1 {
		c := bits.TrailingZeros32(a)
		m[c] = msgs[c]
	}
	tagLanes(&m, ks, stride, t128, t256)
}

// tagLanes computes the tags of the non-nil messages of m into the same
// slots of t128 or t256, message c from its MAC keystream at
// ks[c·stride:], in one call of the lane MAC kernel (all messages
// accumulated in one kernel call where the CPU has the 512-bit MAC path).
func tagLanes(m *[Lanes][]byte, ks []uint32, stride int, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte) {
	if t128 != nil {
		kzuc.EIA3TagLanes(m, ks, stride, t128)
	} else {
		kzuc.MAC256TagLanes(m, ks, stride, t256)
	}
}

// etmLanes seals 2..Lanes/2 packets in one 16-lane call, so half-full
// batches do not pay for two half-empty calls: lane j generates the
// keystream of bodies[j] and lane Lanes/2+j the MAC keystream of msgs[j],
// all as words (the KeyStream kernel), then the bodies are encrypted in Go
// and only then are the tags computed, as encrypt-then-MAC requires. lk
// holds the encryption key and IVs for lanes 0–7 and the MAC key and IVs
// for lanes 8–15. Packets longer than the keystream buffer make the call
// fall back to separate keystream and MAC calls.
func etmLanes(lk *laneKeys, bodies, msgs *[Lanes][]byte, n int, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte, sc *laneScratch) {
	const half = Lanes / 2
	var need [Lanes]int // keystream words per lane
	stride := 0
	for j := range n {
		need[j] = (len(bodies[j]) + 3) / 4
		if msgs[j] != nil {
			need[half+j] = lk.macWords(len(msgs[j]))
		}
		stride = max(stride, roundWords(max(need[j], need[half+j])))
	}
	if stride > maxLaneWords {
		// Separate calls, each lane half keyed as in lk.
		enc, mac := *lk, *lk
		enc.k128[1], enc.k256[1], enc.d[1] = enc.k128[0], enc.k256[0], enc.d[0]
		mac.k128[0], mac.k256[0], mac.d[0] = mac.k128[1], mac.k256[1], mac.d[1]
		if lk.iv128 != nil {
			var ivs [Lanes][IVSize128]byte
			copy(ivs[:n], lk.iv128[half:half+n])
			mac.iv128 = &ivs
		}
		var k *kstate
		if sc != nil {
			k = &sc.k
		}
		xorLanes(true, &enc, bodies, n, k)
		macLanes(true, &mac, msgs, n, t128, t256, sc)
		return
	}
	// As in macLanes: the MTU-sized keystream buffer of the scratch, a
	// larger one on the stack.
	if sc == nil {
		sc = new(laneScratch)
	}
	if stride <= mtuLaneWords {
		etmRun(lk, sc.ks[:], stride, &need, bodies, msgs, n, t128, t256, &sc.k)
		return
	}
	var ksBuf [Lanes * maxLaneWords]uint32
	etmRun(lk, ksBuf[:], stride, &need, bodies, msgs, n, t128, t256, &sc.k)
}

// etmRun is the kernel call of etmLanes and the work in Go after it, with
// keystream buffer ks (stride words per lane).
func etmRun(lk *laneKeys, ks []uint32, stride int, need *[Lanes]int, bodies, msgs *[Lanes][]byte, n int, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte, k *kstate) {
	const half = Lanes / 2
	k.wide = true
	var active uint32
	for c, w := range need {
		if w > 0 {
			active |= 1 << c
		}
	}
	k.loadActive(active, lk)
	k.initKeyStream(ks, stride, active, &[2]int{stride, stride})
	for j := range n {
		xorWords(bodies[j], ks[j*stride:j*stride+need[j]])
	}
	var m [Lanes][]byte // message j's keystream is lane half+j's
	copy(m[:n], msgs[:n])
	tagLanes(&m, ks[half*stride:], stride, t128, t256)
}

// etm8Max is the most packets etm8 seals in one call: an encryption lane
// and a MAC lane each in the 8 lanes of the AVX2 kernels.
const etm8Max = kzuc.Lanes8 / 2

// etm8 seals 1..etm8Max packets in one 8-lane call (keys and IVs as in
// etmLanes: lk lanes j and Lanes/2+j): state lane j generates the
// keystream of bodies[j], lane etm8Max+j the MAC keystream of msgs[j], as
// words (etm8Stream), then the bodies are encrypted in Go and only then
// the tags computed (encrypt-then-MAC). A lone packet so costs one 8-lane
// call instead of two single-lane keystreams, and up to etm8Max packets
// about 2/3 of a 16-lane call (the per-round dependency chain, not the
// width, bounds both; see narrow). It reports false, doing nothing, when
// a packet needs more keystream than the buffer holds or there is no
// keystream to generate. st is the lane state, ks the keystream buffer
// (Lanes8 lanes of len(ks)/Lanes8 words at most).
func etm8(lk *laneKeys, bodies, msgs *[Lanes][]byte, n int, t128 *[Lanes]uint32, t256 *[Lanes][MAC256TagSize]byte, st *kzuc.State8, ks []uint32) bool {
	var need [kzuc.Lanes8]int
	words := etm8Stream(lk, bodies, msgs, n, &need, st, ks)
	if words == 0 {
		return false
	}
	for j := range n {
		xorWords(bodies[j], ks[j*words:j*words+need[j]])
	}
	var m [Lanes][]byte // message j's keystream is lane etm8Max+j's
	copy(m[:n], msgs[:n])
	tagLanes(&m, ks[etm8Max*words:], words, t128, t256)
	return true
}

// open8 is the open counterpart of etm8 (same lanes, keys, limits and
// report): one 8-lane call generates the keystream of every body and the
// MAC keystream of every message into ks, the tags are computed and
// compared in constant time with want128 or want256 (non-nil as t128 or
// t256 in etm8), and only then is the keystream XORed into the bodies of
// the lanes whose tag matched; ok is their mask. The bodies of the other
// lanes are not written: their keystream stays in ks.
func open8(lk *laneKeys, bodies, msgs *[Lanes][]byte, n int, want128 *[Lanes]uint32, want256 *[Lanes][MAC256TagSize]byte, st *kzuc.State8, ks []uint32) (ok uint32, done bool) {
	var need [kzuc.Lanes8]int
	words := etm8Stream(lk, bodies, msgs, n, &need, st, ks)
	if words == 0 {
		return 0, false
	}
	var m [Lanes][]byte // message j's keystream is lane etm8Max+j's
	copy(m[:n], msgs[:n])
	if want128 != nil {
		var tags [Lanes]uint32
		tagLanes(&m, ks[etm8Max*words:], words, &tags, nil)
		ok = verify128(&m, &tags, want128, n)
	} else {
		var tags [Lanes][MAC256TagSize]byte
		tagLanes(&m, ks[etm8Max*words:], words, nil, &tags)
		ok = verify256(&m, &tags, want256, n)
	}
	for j := range n {
		if ok>>j&1 != 0 {
			xorWords(bodies[j], ks[j*words:j*words+need[j]])
		}
	}
	return ok, true
}

// etm8Stream is the kernel part of etm8 and open8: it loads state lane j
// with the key and IV of lk lane j (encryption) and lane etm8Max+j with
// those of lk lane Lanes/2+j (MAC), for j < n, and writes words keystream
// words of every state lane c to ks[c·words:], need[c] of which the lane
// uses. It returns words, or 0, doing nothing, when there is no keystream
// to generate or a lane needs more than len(ks)/Lanes8 words.
func etm8Stream(lk *laneKeys, bodies, msgs *[Lanes][]byte, n int, need *[kzuc.Lanes8]int, st *kzuc.State8, ks []uint32) (words int) {
	const half = Lanes / 2
	for j := range n {
		need[j] = (len(bodies[j]) + 3) / 4
		if msgs[j] != nil {
			need[etm8Max+j] = lk.macWords(len(msgs[j]))
		}
		words = max(words, need[j], need[etm8Max+j])
	}
	if words == 0 || words > len(ks)/kzuc.Lanes8 {
		return 0
	}
	for j := range n {
		if lk.iv128 != nil {
			st.LoadZUC128(j, lk.k128[0], &lk.iv128[j])
			st.LoadZUC128(etm8Max+j, lk.k128[1], &lk.iv128[half+j])
		} else {
			st.LoadZUC256(j, lk.k256[0], &lk.iv256[j], lk.d[0])
			st.LoadZUC256(etm8Max+j, lk.k256[1], &lk.iv256[half+j], lk.d[1])
		}
	}
	st.Init(kernels8())
	st.KeyStream(kernels8(), ks[:kzuc.Lanes8*words], words, words)
	return words
}
