package ciphers

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gmtun/gmtun/ciphers/internal/sm4"
	"github.com/gmtun/gmtun/ciphers/internal/ublock"
)

// The gcm family: sm4-gcm and ublock-gcm are one construction over two
// block ciphers (docs/PROTOCOL.md, "Data packets"): GCM with
// nonce = salt ⊕ (0^4 ‖ BE64(c)) and the 16-byte header as additional
// data. gcmKey implements it once over the batch GCM of either cipher
// (ciphers/internal/sm4 or ciphers/internal/ublock).
//
// Two things keep the generic code as fast as a copy per cipher (0
// allocations, the same time per packet):
//   - The kernels are reached through a type switch on the concrete GCM,
//     not through a method of the type parameter: Go calls such a method
//     through the generic dictionary, which escape analysis cannot see
//     through, so the per-batch descriptor arrays would move to the heap.
//   - The descriptors are built as gcmFields, the struct type underlying
//     both sm4.Packet and ublock.Packet, and handed to the kernel as a
//     view of its own type (gcmPackets). Building them through a type
//     parameter instead (P(gcmFields{…}), as Go has no field access on a
//     type parameter) copies each one twice and cost about 15 ns a packet,
//     some 8 % of sealing a 64-byte packet.

// gcmCipher is the batch GCM of a gcm-family suite.
type gcmCipher interface{ sm4.GCM | ublock.GCM }

// gcmPacket is a batch GCM's packet descriptor: sm4.Packet for sm4.GCM,
// ublock.Packet for ublock.GCM.
type gcmPacket interface{ sm4.Packet | ublock.Packet }

// gcmFields is the struct type underlying every gcmPacket.
type gcmFields = struct {
	Nonce [gcmNonceSize]byte
	AAD   []byte
	Text  []byte
	Tag   *[gcmTagSize]byte
}

// Both descriptors are a gcmFields: these conversions compile only if
// their underlying types are identical, which makes gcmPackets' view
// sound (unsafe.Pointer rule 1: equivalent memory layout).
var (
	_ = sm4.Packet(gcmFields{})
	_ = ublock.Packet(gcmFields{})
)

// gcmPackets views ps as descriptors of type P (same memory, same length).
func gcmPackets[P gcmPacket](ps []gcmFields) []P {
	return unsafe.Slice((*P)(unsafe.Pointer(unsafe.SliceData(ps))), len(ps))
}

// The sizes shared by both GCMs (sm4.NonceSize, ublock.NonceSize, …).
const (
	gcmKeySize   = sm4.KeySize
	gcmNonceSize = sm4.NonceSize
	gcmTagSize   = sm4.TagSize
)

// uBlock-GCM's key must have the shared size (these fail to compile
// otherwise); its nonce and tag sizes are checked by the conversions of
// gcmFields above.
var (
	_ [gcmKeySize - ublock.KeySize128]struct{}
	_ [ublock.KeySize128 - gcmKeySize]struct{}
)

// gcmKey is the Key of one direction of a gcm-family suite over GCM G
// (gcmKey[sm4.GCM] is sm4gcmKey, gcmKey[ublock.GCM] is ublockgcmKey). It
// holds only the immutable key schedule and salt.
type gcmKey[G gcmCipher] struct {
	gcm   G
	salt  [gcmNonceSize]byte
	wiped bool // set by Wipe; never concurrent with Seal/Open
}

// gcmSuite returns the suite of the gcm family that runs on G.
func gcmSuite[G gcmCipher]() SuiteID {
	switch any((*G)(nil)).(type) {
	case *sm4.GCM:
		return SM4GCM
	default:
		return UBlockGCM
	}
}

// newGCMKey returns the Key over G for k. It copies the key material.
func newGCMKey[G gcmCipher](k DirectionKeys) (Key, error) {
	if len(k.Enc) != gcmKeySize || len(k.Salt) != gcmNonceSize || len(k.MAC) != 0 {
		return nil, fmt.Errorf("ciphers: %s needs a 16-byte key, a 12-byte salt and no MAC key; got %d, %d, %d",
			gcmSuite[G](), len(k.Enc), len(k.Salt), len(k.MAC))
	}
	key := new(gcmKey[G])
	var err error
	switch g := any(&key.gcm).(type) {
	case *sm4.GCM:
		err = g.Init(k.Enc)
	case *ublock.GCM:
		err = g.Init(k.Enc)
	}
	if err != nil {
		return nil, err
	}
	copy(key.salt[:], k.Salt)
	return key, nil
}

// Suite returns SM4GCM or UBlockGCM.
func (k *gcmKey[G]) Suite() SuiteID { return gcmSuite[G]() }

// Seal seals every packet of pkts in place (see Key.Seal); it validates
// the whole batch before touching any packet.
func (k *gcmKey[G]) Seal(pkts [][]byte) error {
	if k.wiped {
		return errWiped
	}
	p := gcmSuite[G]().Params()
	if err := checkSeal(pkts, &p); err != nil {
		return err
	}
	sealGCMBatch(&k.gcm, &k.salt, pkts)
	return nil
}

// Open verifies and decrypts in place the packets of pkts that
// authenticate (see Key.Open). A batch longer than MaxBatch opens nothing.
func (k *gcmKey[G]) Open(pkts [][]byte) Mask {
	var m Mask
	if len(pkts) <= MaxBatch && !k.wiped {
		openGCMBatch(&k.gcm, &k.salt, pkts, &m)
	}
	return m
}

// Wipe zeroes the round keys (every layout the cipher keeps), both GHASH
// key forms and the salt (see Key.Wipe).
func (k *gcmKey[G]) Wipe() {
	var zero G
	k.gcm = zero
	clear(k.salt[:])
	k.wiped = true
	runtime.KeepAlive(k)
}

// sm4gcmNonce sets nonce = salt ⊕ (0^4 ‖ BE64(c)), the TLS 1.3
// construction of docs/PROTOCOL.md (sm4-gcm, and ublock-gcm built as it).
func sm4gcmNonce(nonce, salt *[gcmNonceSize]byte, c uint64) {
	*nonce = *salt
	binary.BigEndian.PutUint64(nonce[4:], binary.BigEndian.Uint64(salt[4:])^c)
}

// smallBatch is the largest batch whose packet descriptors live in a
// small stack array: every call zeroes the array it declares, and a
// MaxBatch one is about 9 KiB, more than sealing a short packet costs.
const smallBatch = 8

// sealGCMBatch seals a validated batch (at most MaxBatch packets) with
// one call into the batch GCM, which shares kernel passes across packets.
// The descriptor array is sized to the batch (see smallBatch).
func sealGCMBatch[G gcmCipher](g *G, salt *[gcmNonceSize]byte, pkts [][]byte) {
	switch {
	case len(pkts) == 1:
		var ps [1]gcmFields
		sealGCMInto(g, salt, pkts, ps[:])
	case len(pkts) <= smallBatch:
		var ps [smallBatch]gcmFields
		sealGCMInto(g, salt, pkts, ps[:len(pkts)])
	default:
		var ps [MaxBatch]gcmFields
		sealGCMInto(g, salt, pkts, ps[:len(pkts)])
	}
}

// sealGCMInto describes pkts in ps (len(ps) == len(pkts)) and seals them.
func sealGCMInto[G gcmCipher](g *G, salt *[gcmNonceSize]byte, pkts [][]byte, ps []gcmFields) {
	for i, pkt := range pkts {
		n := len(pkt)
		pkt = pkt[:n+gcmTagSize]
		p := &ps[i]
		sm4gcmNonce(&p.Nonce, salt, Counter(pkt))
		p.AAD, p.Text, p.Tag = pkt[:HeaderSize], pkt[HeaderSize:n], (*[gcmTagSize]byte)(pkt[n:])
		pkts[i] = pkt
	}
	switch g := any(g).(type) {
	case *sm4.GCM:
		g.SealBatch(gcmPackets[sm4.Packet](ps))
	case *ublock.GCM:
		g.SealBatch(gcmPackets[ublock.Packet](ps))
	}
}

// openGCMBatch opens a batch of at most MaxBatch packets, setting the
// bit in m of each packet that verified (and only then was decrypted).
// Packets too short for a tag or with a counter at the limit are left out
// of the batch. The scratch arrays are sized to the batch (see smallBatch).
func openGCMBatch[G gcmCipher](g *G, salt *[gcmNonceSize]byte, pkts [][]byte, m *Mask) {
	switch {
	case len(pkts) == 1:
		var ps [1]gcmFields
		var index [1]uint8
		var ok [1]bool
		openGCMInto(g, salt, pkts, m, ps[:], index[:], ok[:])
	case len(pkts) <= smallBatch:
		var ps [smallBatch]gcmFields
		var index [smallBatch]uint8
		var ok [smallBatch]bool
		openGCMInto(g, salt, pkts, m, ps[:], index[:], ok[:])
	default:
		var ps [MaxBatch]gcmFields
		var index [MaxBatch]uint8
		var ok [MaxBatch]bool
		openGCMInto(g, salt, pkts, m, ps[:], index[:], ok[:])
	}
}

// openGCMInto opens pkts with the scratch ps, index and ok (each at least
// len(pkts) long); see openGCMBatch.
func openGCMInto[G gcmCipher](g *G, salt *[gcmNonceSize]byte, pkts [][]byte, m *Mask, ps []gcmFields, index []uint8, ok []bool) {
	const maxCounter = 1<<64 - 1<<13 - 1 // SM4GCM.Params().MaxCounter = UBlockGCM.Params().MaxCounter
	n := 0
	for i, pkt := range pkts {
		if len(pkt) < HeaderSize+gcmTagSize {
			continue
		}
		c := Counter(pkt)
		if c >= maxCounter {
			continue
		}
		end := len(pkt) - gcmTagSize
		p := &ps[n]
		sm4gcmNonce(&p.Nonce, salt, c)
		p.AAD, p.Text, p.Tag = pkt[:HeaderSize], pkt[HeaderSize:end], (*[gcmTagSize]byte)(pkt[end:])
		index[n] = uint8(i)
		n++
	}
	switch g := any(g).(type) {
	case *sm4.GCM:
		g.OpenBatch(gcmPackets[sm4.Packet](ps[:n]), ok[:n])
	case *ublock.GCM:
		g.OpenBatch(gcmPackets[ublock.Packet](ps[:n]), ok[:n])
	}
	for j := range n {
		if ok[j] {
			i := int(index[j])
			pkts[i] = pkts[i][:len(pkts[i])-gcmTagSize]
			m.Set(i)
		}
	}
}
