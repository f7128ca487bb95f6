//go:build amd64 && gc && !purego

package zuc

// The batch primitives on the lane kernels: the tiers and their dispatch,
// the Scratch methods (the one form of every primitive), the keys and tag
// outputs of a lane call. The lane paths are in lanes_state_amd64.go (the
// kernel states), lanes_xor_amd64.go (keystream), lanes_mac_amd64.go (MACs)
// and lanes_etm_amd64.go (encrypt-then-MAC and its open counterpart).

import (
	"encoding/binary"

	"github.com/gmtun/gmtun/ciphers/internal/impl"
	kzuc "github.com/gmtun/gmtun/kernels/zuc"
)

// Dispatch flags of the batch primitives, set once from the CPU features
// (kernels/cpu through kernels/zuc) and switched only by tests through
// ciphers/internal/impl. Every tier computes tags with the carry-less
// multiply MAC kernels (PCLMULQDQ, or VPCLMULQDQ on ZMM where the CPU has
// it, chosen inside kernels/zuc), so all require them.
var (
	// useX16: 16-lane keystream kernels (AVX-512 F/BW/VL/DQ, VBMI, VBMI2, GFNI).
	useX16 = kzuc.GFNI16.Supported() && kzuc.MACSupported()
	// useX16AESNI: the 16-lane kernels with S1 through AESENCLAST and
	// without VBMI2 (AVX-512 F/BW/VL/DQ + AES-NI: Skylake-SP, Cascade
	// Lake), for AVX-512 CPUs without GFNI and VBMI2: the same lane state
	// and call shapes as useX16. The MACs take the PCLMULQDQ path there
	// (kernels/zuc chooses: the 512-bit one needs VPCLMULQDQ and GFNI).
	useX16AESNI = kzuc.AESNI16.Supported() && kzuc.MACSupported()
	// useX8: 8-lane keystream kernels with GFNI (AVX2, BMI2, VEX GFNI),
	// two kernel states per 16-packet call.
	useX8 = kzuc.GFNI8.Supported() && kzuc.MACSupported()
	// useX8AESNI: the 8-lane kernels with S1 through AESENCLAST (AVX2 +
	// AES-NI), for CPUs without GFNI: the same lane state and call shapes
	// as useX8.
	useX8AESNI = kzuc.AESNI8.Supported() && kzuc.MACSupported()
)

// Lanes is the kernels' widest call (a compile-time check: the array
// lengths are negative if the two differ).
var (
	_ [Lanes - kzuc.MaxLanes]struct{}
	_ [kzuc.MaxLanes - Lanes]struct{}
)

// lanesOn reports whether any lane tier is enabled.
func lanesOn() bool { return useX16 || useX16AESNI || useX8 || useX8AESNI }

// wide reports whether a 16-lane tier is enabled.
func wide() bool { return useX16 || useX16AESNI }

// kernels16 returns the 16-lane kernels of the enabled tiers: those with
// S1 through AESENCLAST when they are the only 16-lane tier enabled (on a
// CPU with GFNI and VBMI2 only tests select them), else those with GFNI.
func kernels16() kzuc.Kernels16 {
	if useX16AESNI && !useX16 {
		return kzuc.AESNI16
	}
	return kzuc.GFNI16
}

// kernels8 returns the 8-lane kernels of the enabled tiers: those with S1
// through AESENCLAST when no GFNI tier is enabled (on a CPU with GFNI only
// tests select them; the 16-lane AES-NI tier's 8-lane calls use them), else
// those with GFNI.
func kernels8() kzuc.Kernels8 {
	if !useX16 && !useX8 && (useX8AESNI || useX16AESNI) {
		return kzuc.AESNI8
	}
	return kzuc.GFNI8
}

// x8Supported reports whether the CPU runs one of the 8-lane kernels.
func x8Supported() bool { return kzuc.GFNI8.Supported() || kzuc.AESNI8.Supported() }

func init() {
	// The kernel sets name themselves, as kernels/cpu spells the tiers.
	impl.Register("zuc", kzuc.GFNI16.String(), &useX16)
	impl.Register("zuc", kzuc.AESNI16.String(), &useX16AESNI)
	impl.Register("zuc", kzuc.GFNI8.String(), &useX8)
	impl.Register("zuc", kzuc.AESNI8.String(), &useX8AESNI)
}

// Scratch is the working memory of the batch primitives on the lane
// kernels: the lane states and the keystream buffers of MTU-sized MAC and
// paired calls (about 55 KiB on amd64, nothing where there are no
// kernels). A
// caller that runs several primitive calls in a row, such as the lane
// groups of one batch, declares one Scratch on its stack and calls the
// primitives as its methods, so that the memory is zeroed once rather
// than per call. A nil *Scratch is valid: each call then takes fresh
// memory on its stack, only as much as it uses (a lone packet none, up to
// Lanes/4 packets of encrypt-then-MAC a third). Every call overwrites what
// it reads of a
// Scratch, so nothing carries over between calls; a Scratch is not safe
// for concurrent use.
type Scratch struct {
	s laneScratch
	p pairScratch
}

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

// pair returns the paired-call memory of s, nil if s is nil.
func (s *Scratch) pair() *pairScratch {
	if s == nil {
		return nil
	}
	return &s.p
}

// state returns the kernel state of s, nil if s is nil.
func (s *Scratch) state() *kstate {
	if s == nil {
		return nil
	}
	return &s.s.k
}

// XORKeyStreams128 is XORKeyStreams128Generic on the multi-lane kernels
// when the CPU has them (see xorLanes); the output is identical.
func (s *Scratch) XORKeyStreams128(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, bufs *[Lanes][]byte, n int) {
	if lanesOn() {
		lk := laneKeys{k128: [2]*[KeySize128]byte{key, key}, iv128: ivs}
		xorLanes(wide(), &lk, bufs, n, s.state())
		return
	}
	XORKeyStreams128Generic(key, ivs, bufs, n)
}

// XORKeyStreams256 is XORKeyStreams256Generic on the multi-lane kernels
// when the CPU has them (see xorLanes).
func (s *Scratch) XORKeyStreams256(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bufs *[Lanes][]byte, n int) {
	if lanesOn() {
		lk := laneKeys{k256: [2]*[KeySize256]byte{key, key}, iv256: ivs}
		xorLanes(wide(), &lk, bufs, n, s.state())
		return
	}
	XORKeyStreams256Generic(key, ivs, bufs, n)
}

// EIA3Tags is EIA3TagsGeneric with the keystream of all lanes from one
// multi-lane kernel call and the tags from the carry-less multiply MAC
// kernel, when the CPU has them (see macLanes).
func (s *Scratch) EIA3Tags(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, msgs *[Lanes][]byte, tags *[Lanes]uint32, n int) {
	if lanesOn() {
		lk := laneKeys{k128: [2]*[KeySize128]byte{key, key}, iv128: ivs}
		macLanes(wide(), &lk, msgs, n, tagOut{eia: tags}, s.lanes())
		return
	}
	EIA3TagsGeneric(key, ivs, msgs, tags, n)
}

// MAC256Tags is MAC256TagsGeneric on the multi-lane and MAC kernels when
// the CPU has them (see macLanes).
func (s *Scratch) MAC256Tags(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, msgs *[Lanes][]byte, tags *[Lanes][MAC256TagSize]byte, n int) {
	if lanesOn() {
		lk := laneKeys{
			k256: [2]*[KeySize256]byte{key, key}, iv256: ivs,
			d: [2]kzuc.ZUC256Constants{kzuc.ZUC256MAC128, kzuc.ZUC256MAC128},
		}
		macLanes(wide(), &lk, msgs, n, tagOut{mac: tags}, s.lanes())
		return
	}
	MAC256TagsGeneric(key, ivs, msgs, tags, n)
}

// EncryptThenMAC128 is EncryptThenMAC128Generic on the kernels when the
// CPU has them. Up to etm8Max packets run in one 8-lane call, their EEA3
// lanes next to their EIA3 lanes (see etm8; over about 2 KiB chunk by
// chunk, etm8Chunks), up to Lanes/2 packets on the 16-lane kernels in one
// 16-lane call (etmLanes), up to Lanes MTU-sized packets in one paired
// call where the kernels have it (etmPair); otherwise, or for longer
// packets, one keystream call and one MAC call, all on the lane kernels.
func (s *Scratch) EncryptThenMAC128(encKey, macKey *[KeySize128]byte, eea, eia *[Lanes][IVSize128]byte, bodies, msgs *[Lanes][]byte, tags *[Lanes]uint32, n int) {
	etm := etm8Fits(n)
	if etm || wide() && n >= 2 && n <= Lanes/2 {
		var ivs [Lanes][IVSize128]byte
		copy(ivs[:n], eea[:n])
		copy(ivs[Lanes/2:Lanes/2+n], eia[:n])
		lk := laneKeys{k128: [2]*[KeySize128]byte{encKey, macKey}, iv128: &ivs}
		c := etmCall{lk: lk, bodies: bodies, msgs: msgs, n: n, tags: tagOut{eia: tags}}
		if !etm {
			etmLanes(&c, s.lanes())
			return
		}
		if etm8With(s.lanes(), &c) {
			return
		}
	}
	if pairFits(n) {
		c := pairCall{
			enc:    laneKeys{k128: [2]*[KeySize128]byte{encKey, encKey}, iv128: eea},
			mac:    laneKeys{k128: [2]*[KeySize128]byte{macKey, macKey}, iv128: eia},
			bodies: bodies, msgs: msgs, n: n, tags: tagOut{eia: tags},
		}
		if etmPair(&c, s.lanes(), s.pair()) {
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
	if etm || wide() && n >= 2 && n <= Lanes/2 {
		var both [Lanes][IVSize256]byte
		copy(both[:n], ivs[:n])
		copy(both[Lanes/2:Lanes/2+n], ivs[:n])
		lk := laneKeys{
			k256: [2]*[KeySize256]byte{encKey, macKey}, iv256: &both,
			d: [2]kzuc.ZUC256Constants{kzuc.ZUC256Keystream, kzuc.ZUC256MAC128},
		}
		c := etmCall{lk: lk, bodies: bodies, msgs: msgs, n: n, tags: tagOut{mac: tags}}
		if !etm {
			etmLanes(&c, s.lanes())
			return
		}
		if etm8With(s.lanes(), &c) {
			return
		}
	}
	if pairFits(n) {
		c := pairCall{enc: zuc256Lanes(encKey, ivs, kzuc.ZUC256Keystream), mac: zuc256Lanes(macKey, ivs, kzuc.ZUC256MAC128),
			bodies: bodies, msgs: msgs, n: n, tags: tagOut{mac: tags}}
		if etmPair(&c, s.lanes(), s.pair()) {
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

// VerifyThenDecrypt128 is VerifyThenDecrypt128Generic on the kernels when
// the CPU has them. Up to etm8Max packets run in one 8-lane call, their
// EEA3 lanes next to their EIA3 lanes (see open8): the keystream of a
// body is generated before its tag is checked but kept in the scratch
// memory, and XORed into the body only once the tag has verified; so do
// up to Lanes MTU-sized packets in one paired call where the kernels have
// it (openPair). Otherwise, or for longer packets, one MAC call, then one
// keystream call over the bodies that verified, all on the lane kernels.
func (s *Scratch) VerifyThenDecrypt128(encKey, macKey *[KeySize128]byte, eea, eia *[Lanes][IVSize128]byte, bodies, msgs *[Lanes][]byte, want *[Lanes]uint32, n int) uint32 {
	if etm8Fits(n) {
		var ivs [Lanes][IVSize128]byte
		copy(ivs[:n], eea[:n])
		copy(ivs[Lanes/2:Lanes/2+n], eia[:n])
		lk := laneKeys{k128: [2]*[KeySize128]byte{encKey, macKey}, iv128: &ivs}
		if ok, done := open8With(s.lanes(), &etmCall{lk: lk, bodies: bodies, msgs: msgs, n: n, tags: tagOut{eia: want}}); done {
			return ok
		}
	}
	if pairFits(n) {
		c := pairCall{
			enc:    laneKeys{k128: [2]*[KeySize128]byte{encKey, encKey}, iv128: eea},
			mac:    laneKeys{k128: [2]*[KeySize128]byte{macKey, macKey}, iv128: eia},
			bodies: bodies, msgs: msgs, n: n, tags: tagOut{eia: want},
		}
		if ok, done := openPair(&c, s.lanes(), s.pair()); done {
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
		if ok, done := open8With(s.lanes(), &etmCall{lk: lk, bodies: bodies, msgs: msgs, n: n, tags: tagOut{mac: want}}); done {
			return ok
		}
	}
	if pairFits(n) {
		c := pairCall{enc: zuc256Lanes(encKey, ivs, kzuc.ZUC256Keystream), mac: zuc256Lanes(macKey, ivs, kzuc.ZUC256MAC128),
			bodies: bodies, msgs: msgs, n: n, tags: tagOut{mac: want}}
		if ok, done := openPair(&c, s.lanes(), s.pair()); done {
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

// maxLaneWords bounds the keystream words one lane of a MAC call may need
// (messages up to about 2 KiB: MTU-sized packets); longer messages are
// authenticated in chunks of it (macChunks).
const maxLaneWords = 512

// mtuLaneWords is the keystream buffer of macLanes for MTU-sized messages
// (in whole 16-word blocks: EIA3 messages up to 1528 bytes, ZUC-256
// MAC-128 messages up to 1504 bytes).
const mtuLaneWords = 384

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

// zuc256Lanes returns the laneKeys of a ZUC-256 call with key and
// constant set d on every lane.
func zuc256Lanes(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, d kzuc.ZUC256Constants) laneKeys {
	return laneKeys{k256: [2]*[KeySize256]byte{key, key}, iv256: ivs, d: [2]kzuc.ZUC256Constants{d, d}}
}

// macWords returns the keystream words the MAC of an n-byte message
// needs: 128-EIA3, or the 128-bit ZUC-256 MAC.
func (lk *laneKeys) macWords(n int) int {
	if lk.iv128 != nil {
		return kzuc.EIA3KeyStreamWords(8 * n)
	}
	return kzuc.MAC256KeyStreamWords(8*n, MAC256TagSize)
}

// tagOut is where the tags of a lane call go, and so which MAC the call
// computes: 128-EIA3 tags (eia, the keys of the call are ZUC-128) or
// 128-bit ZUC-256 MAC tags (mac, ZUC-256 keys). Exactly one is set.
type tagOut struct {
	eia *[Lanes]uint32
	mac *[Lanes][MAC256TagSize]byte
}

// isEIA3 reports whether the tags are 128-EIA3 tags.
func (o tagOut) isEIA3() bool { return o.eia != nil }

// put stores the accumulated tag acc (one word for 128-EIA3, four for the
// ZUC-256 MAC) in slot j.
func (o tagOut) put(acc *[4]uint32, j int) {
	if o.eia != nil {
		o.eia[j] = acc[0]
		return
	}
	for q := range MAC256TagSize / 4 {
		binary.BigEndian.PutUint32(o.mac[j][4*q:], acc[q])
	}
}

// lanes computes the tags of the non-nil messages of m into the same
// slots, message c from its MAC keystream at ks[c·stride:], in one call
// of the lane MAC kernel (all messages accumulated in one kernel call
// where the CPU has the 512-bit MAC path).
func (o tagOut) lanes(m *[Lanes][]byte, ks []uint32, stride int) {
	if o.eia != nil {
		kzuc.EIA3TagLanes(m, ks, stride, o.eia)
	} else {
		kzuc.MAC256TagLanes(m, ks, stride, o.mac)
	}
}

// etmCall is one encrypt-then-MAC (or verify-then-decrypt) lane call:
// packet j < n has its body bodies[j] encrypted under the key and IV of lk
// lane j and its message msgs[j] (header ‖ body, containing bodies[j])
// authenticated under those of lk lane Lanes/2+j; tags receives the tags,
// or holds the expected ones when opening. lk is held by value: what
// bodies and msgs point to leaks (the packets' slices), and the escape
// analysis does not tell one field's targets from another's, so a *laneKeys
// here would move the callers' IV arrays to the heap.
type etmCall struct {
	lk           laneKeys
	bodies, msgs *[Lanes][]byte
	n            int
	tags         tagOut
}
